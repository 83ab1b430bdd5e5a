/**
 * JSON numbers as exact as the file wrote them. `JSON.parse` reads every number as a double, so
 * 9007199254740993 (an id past 2^53) becomes 9007199254740992, and 0.12345678901234567891 loses
 * its last digits, before the database ever sees them: a BIGINT, NUMERIC or TEXT column would
 * then hold a value the file never had. A record whose text holds a number a double may not
 * carry exactly (16 or more digits, or a three-digit exponent) is therefore parsed again with
 * lossless-json, and such numbers travel as `LosslessNumber`s: their text goes to the database,
 * which parses it for its column type (and rounds it only where the column is a double).
 * Records without such numbers cost one regular-expression scan: 0.55 µs on a 140-character line
 * against 0.56-0.70 µs for `JSON.parse` itself (the 2 GB JSON-lines bench took 72 s against 62 s
 * before, with a pre-test that is gone now). A walk over the parsed values costs as much (0.44 µs)
 * and cannot see digits a double dropped (0.10000000000000000001 read as 0.1); checking only the
 * values bound for exact columns (NUMERIC, TEXT, JSON), in the row encoder, would cost less.
 */
import { isLosslessNumber, isSafeNumber, LosslessNumber, parse, stringify } from 'lossless-json';

/**
 * A number of 16 or more digits (a '.' among them), or with an exponent of three digits. One
 * expression: a cheaper pre-test (`\d{8}`) measured slower overall on lines holding 8-digit ids,
 * which pass it (0.97 against 0.55 µs a line).
 */
const MAYBE_UNSAFE = /\d(?:\.?\d){15}|[eE][+-]?\d{3}/;

/** Safe numbers as numbers, the others as their text. */
function exactNumber(text: string): number | LosslessNumber {
  return isSafeNumber(text) ? Number(text) : new LosslessNumber(text);
}

/** `JSON.parse(text)`, with numbers a double would change kept as `LosslessNumber`s. Throws as `JSON.parse` does. */
export function parseExact(text: string): unknown {
  const value: unknown = JSON.parse(text);
  return MAYBE_UNSAFE.test(text) ? parse(text, undefined, exactNumber) : value;
}

export { isLosslessNumber };

/** A `LosslessNumber` that is a whole number within BIGINT's range. */
export function isInt64Text(value: LosslessNumber): boolean {
  if (!/^-?\d+$/.test(value.value)) return false;
  const n = BigInt(value.value);
  return n >= -9223372036854775808n && n <= 9223372036854775807n;
}

/** JSON text of an object or array, its `LosslessNumber`s written as the file wrote them. */
export function stringifyExact(value: unknown): string {
  const text = JSON.stringify(value);
  // A LosslessNumber serialises as an object with this property: such values need the exact writer.
  return text.includes('"isLosslessNumber":true') ? (stringify(value) ?? text) : text;
}
