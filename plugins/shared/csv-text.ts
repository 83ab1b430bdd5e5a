/**
 * Values as fields of the CSV text fed to `COPY ... FROM STDIN WITH (FORMAT csv)`: the one text
 * form per type that every ingester converting typed values (JSON, Parquet, Arrow) writes, in the
 * spelling PostgreSQL and Hyper both parse.
 *
 * - NULL is an unquoted empty field; the empty string is `""`.
 * - A field is quoted when it holds `,` `"` CR or LF, is empty, or is `\.` (alone on a line, as in
 *   a one-column table, PostgreSQL's COPY takes it for the end of the data and silently drops
 *   every later row).
 * - Dates `YYYY-MM-DD`, times `HH:MM:SS` with `.ffffff` only when the fraction is not zero,
 *   timestamps the two joined by a space, `+00` on instants, ` BC` last before year 1.
 * - Bytes in bytea's hex form (`\xdeadbeef`), decimals exact from their unscaled integer, floats
 *   as JavaScript prints them (`NaN`, `Infinity` and `-Infinity` as SQL spells them).
 */
import { civil, formatDate } from './dates.ts';

export { formatDate };

const NEEDS_QUOTES = /[",\n\r]/;

/** A text value as a CSV field, quoted when CSV requires it (see the module comment). */
export function quoteCsv(text: string): string {
  if (text === '' || text === '\\.' || NEEDS_QUOTES.test(text)) return `"${text.replaceAll('"', '""')}"`;
  return text;
}

/** A value's text or NULL (`null`/`undefined`) as a CSV field. */
export function csvField(text: string | null | undefined): string {
  return text === null || text === undefined ? '' : quoteCsv(text);
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** bytea's hex text form; never needs quotes. */
export function hexBytes(bytes: Uint8Array): string {
  let text = '\\x';
  for (let i = 0; i < bytes.length; i++) text += HEX[bytes[i]!];
  return text;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** Microseconds since midnight → `HH:MM:SS`, with `.ffffff` when the fraction is not zero. */
export function formatTimeOfDay(micros: number): string {
  const seconds = Math.floor(micros / 1_000_000);
  const fraction = micros - seconds * 1_000_000;
  const hms = `${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}`;
  return fraction === 0 ? hms : `${hms}.${String(fraction).padStart(6, '0')}`;
}

const MICROS_PER_DAY = 86_400_000_000n;

/**
 * Microseconds since 1970-01-01 00:00 → `YYYY-MM-DD HH:MM:SS[.ffffff]`, with `+00` when the value
 * is an instant (`withZone`), and ` BC` after both, as SQL wants it.
 */
export function formatTimestamp(micros: bigint, withZone: boolean): string {
  let days = micros / MICROS_PER_DAY;
  let rest = micros - days * MICROS_PER_DAY;
  // BigInt division truncates toward zero; times before 1970 need the floor.
  if (rest < 0n) {
    days -= 1n;
    rest += MICROS_PER_DAY;
  }
  const { text, bc } = civil(Number(days));
  return `${text} ${formatTimeOfDay(Number(rest))}${withZone ? '+00' : ''}${bc ? ' BC' : ''}`;
}

/** An exact decimal from its unscaled integer and scale: (-5n, 2) → `-0.05`. */
export function formatDecimal(unscaled: bigint, scale: number): string {
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString();
  if (scale <= 0) return `${negative ? '-' : ''}${digits}${'0'.repeat(-scale)}`;
  const padded = digits.padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${padded.slice(0, -scale)}.${padded.slice(-scale)}`;
}

/** A float as SQL reads it back: JavaScript's shortest exact form, `NaN`, `Infinity`, `-Infinity`. */
export function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  return String(value);
}
