/** Fields as COPY quotes them, in the file's own quote and escape characters. */

/** The value of a field as COPY reads it: quoted stretches unquoted, escapes taken. */
export function unquote(raw: string, quote: string, escape: string): string {
  let out = '';
  let inQuotes = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (!inQuotes) {
      if (c === quote) inQuotes = true;
      else out += c;
      continue;
    }
    const next = raw[i + 1];
    if (c === escape && (next === quote || next === escape) && next !== undefined) {
      out += next;
      i++;
    } else if (c === quote) inQuotes = false;
    else out += c;
  }
  return out;
}

/** A value as a field of the file's dialect: quoted when it holds the delimiter, a quote, a line break, or is empty. */
export function fieldText(value: string | undefined, delimiter: string, quote: string, escape: string): string {
  if (value === undefined) return '';
  if (
    value !== '' &&
    value !== '\\.' &&
    !value.includes(delimiter) &&
    !value.includes(quote) &&
    !value.includes('\n') &&
    !value.includes('\r')
  )
    return value;
  let body = '';
  for (const c of value) body += c === quote || (c === escape && escape !== quote) ? `${escape}${c}` : c;
  return `${quote}${body}${quote}`;
}
