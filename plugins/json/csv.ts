/**
 * JSON values as fields of the CSV text fed to `COPY ... WITH (FORMAT csv)`. The database's CSV
 * reader tells NULL from the empty string by quoting: an unquoted empty field is NULL, `""` is ''.
 */

const NEEDS_QUOTES = /[",\n\r]/;

/**
 * Quotes a text field when CSV requires it, and always when it is empty (else it would be NULL)
 * or `\.` (alone on a line, as in a one-column table, PostgreSQL's COPY takes it for the end of
 * the data and silently drops every later row).
 */
export function quoteField(text: string): string {
  if (text === '' || text === '\\.') return `"${text}"`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * One value as a CSV field. Objects and arrays become JSON text; in a JSON column (`asJson`)
 * strings do too, so every value of the column parses back as JSON.
 */
export function encodeField(value: unknown, asJson: boolean): string {
  switch (typeof value) {
    case 'undefined':
      return '';
    case 'string':
      return quoteField(asJson ? JSON.stringify(value) : value);
    case 'number':
    case 'boolean':
      // Never contain a quote, comma or line break, and are never empty.
      return String(value);
    default:
      return value === null ? '' : quoteField(JSON.stringify(value));
  }
}
