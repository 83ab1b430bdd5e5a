/**
 * Column type inference for values given as text (CSV fields, JSON scalars). Shared by the csv
 * and json ingesters. Conservative: a type is chosen only when every
 * non-empty sample value fits it, integers become BIGINT (never INTEGER: a later 3e9 must fit),
 * and values whose text would change in a number column (leading zeros, `+1`, whole numbers past
 * BIGINT's range, numbers past a double's) stay TEXT.
 */
import type { LogicalType } from '../../src/types.ts';

const INT = /^-?(?:0|[1-9]\d*)$/;
const FLOAT = /^-?(?:0|[1-9]\d*)?(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const BOOL = /^(?:true|false)$/i;
const DATE = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])$/;
const TIMESTAMP = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,6})?)?$/;
const ZONE = /(?:Z|[+-](?:[01]\d|2[0-3])(?::?[0-5]\d)?)$/;

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

function isInt64(value: string): boolean {
  if (!INT.test(value)) return false;
  if (value.length < 19) return true;
  const n = BigInt(value);
  return n >= INT64_MIN && n <= INT64_MAX;
}

function isFloat(value: string): boolean {
  // The regex admits "", "-" and "." through its optional parts: require a digit.
  return FLOAT.test(value) && /\d/.test(value) && doubleHolds(value);
}

/**
 * Whether a DOUBLE column may take this number: not a whole number past BIGINT's range (a double
 * keeps 15-17 of its digits: 12345678901234567890 would land as 1.23456789012346e+19), and not
 * one past a double's range (1e400 would land as Infinity, on Hyper without an error). Only TEXT
 * holds those as written, on every database (Hyper's NUMERIC holds 18 digits in the default
 * database version), so a column that has them is TEXT.
 */
export function doubleHolds(number: string): boolean {
  if (INT.test(number)) return isInt64(number);
  return Number.isFinite(Number(number));
}

function isTimestampTz(value: string): boolean {
  const zone = ZONE.exec(value);
  return zone !== null && TIMESTAMP.test(value.slice(0, zone.index));
}

type Candidate = 'bigint' | 'double' | 'boolean' | 'date' | 'timestamp' | 'timestamptz';
const TESTS: Record<Candidate, (v: string) => boolean> = {
  bigint: isInt64,
  double: isFloat,
  boolean: (v) => BOOL.test(v),
  date: (v) => DATE.test(v),
  timestamp: (v) => TIMESTAMP.test(v),
  timestamptz: isTimestampTz,
};

/**
 * Infers one column's type from its sample values (`''` is NULL and says nothing).
 * A column with no non-empty value is TEXT: there is nothing to go on.
 */
export function inferColumnType(values: Iterable<string>): LogicalType {
  const candidates = new Set<Candidate>(Object.keys(TESTS) as Candidate[]);
  let seen = false;
  for (const value of values) {
    if (value === '') continue;
    seen = true;
    for (const c of candidates) if (!TESTS[c](value)) candidates.delete(c);
    if (candidates.size === 0) return { kind: 'text' };
  }
  if (!seen) return { kind: 'text' };
  // Most specific first: an integer column also passes the float test.
  for (const kind of ['bigint', 'double', 'boolean', 'date', 'timestamp', 'timestamptz'] as const) {
    if (candidates.has(kind)) return { kind };
  }
  return { kind: 'text' };
}

/** SQLSTATE of a value past its type's range (a whole number past BIGINT's). */
const OUT_OF_RANGE = '22003';

/**
 * The next wider type after a value failed to load: integers widen to double, unless the value
 * was a whole number past BIGINT's range (a double would round it: text); everything else to text
 * (which takes any value).
 */
export function widen(type: LogicalType, sqlState?: string): LogicalType {
  return type.kind === 'bigint' && sqlState !== OUT_OF_RANGE ? { kind: 'double' } : { kind: 'text' };
}
