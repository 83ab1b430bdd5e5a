/**
 * The type policy: which file column type may go into which table column type, for every ingester
 * that checks a typed file (Arrow, Parquet, third-party plugins) against an existing table. One
 * answer per pair, so a file's outcome does not depend on its format. The README's "Type mapping"
 * section is this table in prose.
 *
 * - `same`: the column's type is the file's.
 * - `widens`: every value fits exactly (a wider integer, more digits, date → timestamp, anything →
 *   unlimited text).
 * - `converts`: accepted, but a value may change in a way the user asked for by choosing the
 *   column: it is rounded (bigint or decimal → double, a time type with fewer fraction digits), read
 *   in UTC (timestamp ↔ timestamptz), or checked by the database one value at a time (text → json,
 *   uuid, varchar(n), an array of text).
 * - `refused`: the file fails with a schema error before any row is loaded. Narrowing (bigint →
 *   integer, numeric(12,2) → numeric(10,2)) is refused, so a file never fails half-way on the first
 *   value too large; so is any pair with no faithful conversion (text → bigint).
 */
import { INTEGER_DIGITS, isIntegerFamily, wholeDigits, type SqlType } from './sql-types.ts';
import type { LogicalType } from '../types.ts';

export const TYPE_FIT = { same: 'same', widens: 'widens', converts: 'converts', refused: 'refused' } as const;
export type TypeFit = (typeof TYPE_FIT)[keyof typeof TYPE_FIT];

/** Whether a fit lets the file load (anything but `refused`). */
export function fitsColumn(from: LogicalType, to: SqlType): boolean {
  return typeFit(from, to) !== TYPE_FIT.refused;
}

/** Time types as precise as the files carry them: microseconds (a column's default). */
const MICROSECOND_DIGITS = 6;

/** How a value of file type `from` goes into a column of type `to` (see the module comment). */
export function typeFit(from: LogicalType, to: SqlType): TypeFit {
  const { same, widens, converts, refused } = TYPE_FIT;
  switch (to.family) {
    case 'text':
      if (to.length !== undefined) return converts;
      return from.kind === 'text' || from.kind === 'json' ? same : widens;
    case 'array':
      // The database reads each value as an array literal (`{a,b}`) and rejects any other.
      return to.element.family === 'text' && from.kind === 'text' ? converts : refused;
    case 'other':
      return refused;
    default:
      break;
  }
  switch (from.kind) {
    case 'smallint':
    case 'integer':
    case 'bigint': {
      if (to.family === from.kind) return same;
      if (isIntegerFamily(to.family)) return INTEGER_DIGITS[to.family] >= INTEGER_DIGITS[from.kind] ? widens : refused;
      if (to.family === 'numeric') return wholeDigits(to) >= INTEGER_DIGITS[from.kind] ? widens : refused;
      // A double holds integers exactly up to 2^53: bigints beyond round.
      if (to.family === 'double') return from.kind === 'bigint' ? converts : widens;
      return to.family === 'real' && from.kind === 'smallint' ? widens : refused;
    }
    case 'decimal': {
      if (to.family === 'numeric') {
        if (to.precision === from.precision && to.scale === from.scale) return same;
        return (to.precision === undefined || to.scale >= from.scale) && wholeDigits(to) >= wholeDigits(from) ? widens : refused;
      }
      if (to.family === 'double') return converts;
      // A whole decimal with fewer digits than the integer type can hold.
      if (isIntegerFamily(to.family)) return from.scale === 0 && from.precision < INTEGER_DIGITS[to.family] ? widens : refused;
      return refused;
    }
    case 'real':
      return to.family === 'real' ? same : to.family === 'double' ? widens : refused;
    case 'date':
      if (to.family === 'date') return same;
      return to.family === 'timestamp' || to.family === 'timestamptz' ? widens : refused;
    case 'time':
    case 'timestamp':
    case 'timestamptz': {
      const zoneSwap =
        (from.kind === 'timestamp' && to.family === 'timestamptz') || (from.kind === 'timestamptz' && to.family === 'timestamp');
      if (to.family !== from.kind && !zoneSwap) return refused;
      const rounds = 'fractionalDigits' in to && to.fractionalDigits !== undefined && to.fractionalDigits < MICROSECOND_DIGITS;
      return zoneSwap || rounds ? converts : same;
    }
    case 'text':
      return to.family === 'json' || to.family === 'uuid' ? converts : refused;
    default:
      return (from.kind as string) === to.family ? same : refused;
  }
}
