/**
 * Whether a Parquet file column fits a column of an existing table (its type read by
 * `parseSqlType`).
 */
import { isLosslessFit } from '../../src/column-fit.ts';
import { INTEGER_DIGITS, isIntegerFamily, type SqlType } from '../../src/sql-types.ts';
import type { LogicalType } from '../../src/types.ts';

/**
 * Columns that take any file column as text. An array of text (PostgreSQL's `text[]`,
 * `varchar(n)[]`) too: the database parses each value as an array literal such as `{a,b}` and
 * rejects any other.
 */
export function takesText(table: SqlType): boolean {
  return table.family === 'text' || (table.family === 'array' && table.element.family === 'text');
}

/**
 * Whether values of the file's `type` can go into a table column of type `table`. Whatever loses
 * nothing does (`isLosslessFit`), and so does every column of `takesText`. Also decimal → double
 * (approximate, as the producer of a decimal column usually means), a decimal of scale 0 → an
 * integer type with more digits, and text → json/uuid (the database checks each value).
 * Everything else (e.g. text → bigint, timestamp → timestamptz, bigint → integer or double) is a
 * schema error: converting it is the producer's call, not ours.
 */
export function isCompatible(type: LogicalType, table: SqlType): boolean {
  if (takesText(table) || isLosslessFit(type, table)) return true;
  switch (type.kind) {
    case 'decimal':
      if (table.family === 'double') return true;
      return type.scale === 0 && isIntegerFamily(table.family) && type.precision < INTEGER_DIGITS[table.family];
    case 'text':
      return table.family === 'json' || table.family === 'uuid';
    default:
      return false;
  }
}
