/**
 * Which file column types fit which table column types: the rules every ingester that checks a
 * typed file (Arrow, Parquet) against an existing table shares. Each ingester adds its own
 * conversions on top (see `isCompatible` in its `types.ts`), so the differences between them stand
 * out as what they are.
 */
import { INTEGER_DIGITS, isIntegerFamily, wholeDigits, type SqlType } from './sql-types.ts';
import type { LogicalType } from './types.ts';

/** Decimals of up to this many significant digits come back unchanged from a double. */
const DOUBLE_DECIMAL_DIGITS = 15;

/**
 * Values of file type `from` go into a column of type `to` without losing anything: the same type,
 * a wider integer or numeric, smallint → real and integers up to integer → double (exact in the
 * float's mantissa), real → double, date → timestamp, decimals of at most 15 digits → double, and
 * anything → text (a length limit is the database's to check). Narrowing (bigint → integer,
 * numeric(12,2) → numeric(10,2)) never fits, so a file does not fail half-way on the first value
 * too large. A time type's `(p)` is left to the ingester's own rules.
 */
export function isLosslessFit(from: LogicalType, to: SqlType): boolean {
  if (to.family === 'text') return true;
  switch (from.kind) {
    case 'smallint':
    case 'integer':
    case 'bigint':
      if (isIntegerFamily(to.family)) return INTEGER_DIGITS[to.family] >= INTEGER_DIGITS[from.kind];
      if (to.family === 'numeric') return wholeDigits(to) >= INTEGER_DIGITS[from.kind];
      if (to.family === 'double') return from.kind !== 'bigint';
      return to.family === 'real' && from.kind === 'smallint';
    case 'decimal':
      if (to.family === 'numeric') return (to.precision === undefined || to.scale >= from.scale) && wholeDigits(to) >= wholeDigits(from);
      return to.family === 'double' && from.precision <= DOUBLE_DECIMAL_DIGITS;
    case 'real':
      return to.family === 'real' || to.family === 'double';
    case 'date':
      return to.family === 'date' || to.family === 'timestamp' || to.family === 'timestamptz';
    default:
      return from.kind === to.family;
  }
}
