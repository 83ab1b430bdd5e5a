/**
 * Column types for a new table, from the JSON values of the first records. JSON already says what
 * a value is, so strings stay TEXT even when they look like numbers ("007" is an id, not 7); only
 * date and timestamp strings are recognised, with the CSV plugin's rules (plugins/shared/date-columns.ts):
 * a column is a date only when its strings decide the order of day and month, or the settings do.
 */
import type { LogicalType } from '../../src/types.ts';
import { type DateSettings, inferDatedType } from '../shared/date-columns.ts';
import type { DateProblem } from '../shared/date-read.ts';
import { doubleHolds } from '../shared/infer-text.ts';
import { isInt64Text, isLosslessNumber } from './exact.ts';

/** Bounds of int64 as doubles: -2^63 is exact, 2^63 is the first value past the maximum. */
const INT64_MIN = -9223372036854775808;
const INT64_LIMIT = 9223372036854775808;

export function isInt64(value: number): boolean {
  return Number.isInteger(value) && value >= INT64_MIN && value < INT64_LIMIT;
}

const STRING_TYPES = new Set<LogicalType['kind']>(['date', 'timestamp', 'timestamptz']);

/**
 * Infers one column's type from its sample values (`null` and missing say nothing). Date strings
 * that read both ways with nothing to decide fail the file: `fail` with the index of the value.
 */
export function inferJsonType(
  values: readonly unknown[],
  dates: DateSettings = {},
  fail: (index: number, problem: DateProblem) => never = (_, problem) => {
    throw new Error(problem.reason);
  },
): LogicalType {
  let integers = false;
  let fractions = false;
  let booleans = false;
  let nested = false;
  let beyondDouble = false;
  const strings: string[] = [];
  const at: number[] = [];
  for (const [index, value] of values.entries()) {
    if (value === null || value === undefined) continue;
    if (isLosslessNumber(value)) {
      if (isInt64Text(value)) integers = true;
      else if (doubleHolds(value.value)) fractions = true;
      else beyondDouble = true;
      continue;
    }
    switch (typeof value) {
      case 'number':
        if (isInt64(value)) integers = true;
        else fractions = true;
        break;
      case 'boolean':
        booleans = true;
        break;
      case 'string':
        strings.push(value);
        at.push(index);
        break;
      default:
        nested = true;
    }
  }
  // Once any value is an object or array, the column holds JSON text, and its scalars are written
  // as JSON too, so every value in it parses back.
  if (nested) return { kind: 'json' };
  const kinds = Number(integers || fractions || beyondDouble) + Number(booleans) + Number(strings.length > 0);
  // A whole number past BIGINT's range, or one past a double's: only TEXT keeps it as written.
  if (kinds === 0 || kinds > 1 || beyondDouble) return { kind: 'text' };
  if (fractions) return { kind: 'double' };
  if (integers) return { kind: 'bigint' };
  if (booleans) return { kind: 'boolean' };
  // An empty string is a value, not a NULL as it is in CSV: it fits no date column.
  if (strings.includes('')) return { kind: 'text' };
  const type = inferDatedType(strings, dates, (i, problem) => fail(at[i]!, problem));
  return STRING_TYPES.has(type.kind) ? type : { kind: 'text' };
}

/**
 * The type a column inferred from the sample needs for `value`, or `undefined` when the value fits.
 * Only the JSON kind is checked here; whether a string is a valid date is left to the database.
 */
export function widenFor(type: LogicalType, value: unknown): LogicalType | undefined {
  if (value === null || value === undefined) return undefined;
  if (isLosslessNumber(value)) {
    if (type.kind === 'text' || type.kind === 'json') return undefined;
    if (!doubleHolds(value.value)) return { kind: 'text' };
    if (type.kind === 'bigint') return isInt64Text(value) ? undefined : { kind: 'double' };
    return type.kind === 'double' ? undefined : { kind: 'text' };
  }
  switch (type.kind) {
    case 'bigint':
      if (typeof value === 'number') return isInt64(value) ? undefined : { kind: 'double' };
      return typeof value === 'object' ? { kind: 'json' } : { kind: 'text' };
    case 'double':
      if (typeof value === 'number') return undefined;
      return typeof value === 'object' ? { kind: 'json' } : { kind: 'text' };
    case 'boolean':
      if (typeof value === 'boolean') return undefined;
      return typeof value === 'object' ? { kind: 'json' } : { kind: 'text' };
    case 'date':
    case 'timestamp':
    case 'timestamptz':
      if (typeof value === 'string') return undefined;
      return typeof value === 'object' ? { kind: 'json' } : { kind: 'text' };
    case 'text':
      // Widened like a sample holding the object would have been inferred, so the table does not
      // depend on where in the file the first object sits.
      return typeof value === 'object' ? { kind: 'json' } : undefined;
    default:
      return undefined;
  }
}
