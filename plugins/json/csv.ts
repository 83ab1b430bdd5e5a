/**
 * JSON values as fields of the CSV text fed to `COPY ... WITH (FORMAT csv)` (quoting and NULL as
 * in `plugins/shared/csv-text.ts`).
 */
import { quoteCsv } from '../shared/csv-text.ts';
import { isLosslessNumber, stringifyExact } from './exact.ts';

/**
 * One value as a CSV field. Objects and arrays become JSON text; in a JSON column (`asJson`)
 * strings do too, so every value of the column parses back as JSON.
 */
export function encodeField(value: unknown, asJson: boolean): string {
  switch (typeof value) {
    case 'undefined':
      return '';
    case 'string':
      return quoteCsv(asJson ? JSON.stringify(value) : value);
    case 'number':
    case 'boolean':
      // Never contain a quote, comma or line break, and are never empty.
      return String(value);
    default:
      if (value === null) return '';
      // A number a double would change (exact.ts): its text, which never needs quotes either.
      if (isLosslessNumber(value)) return value.value;
      return quoteCsv(stringifyExact(value));
  }
}
