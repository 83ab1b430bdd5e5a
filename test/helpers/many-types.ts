/**
 * A table of many column types with edge values (bounds, NULLs, NaN, BC dates, text that CSV
 * and COPY must escape), the same on Hyper and PostgreSQL: the Parquet tests write it to a file
 * with hyperd and compare what the ingester loads against it, value by value.
 */
import type { DbPool } from '../../src/types.ts';

export const MANY_TYPES_COLUMNS =
  'id INTEGER NOT NULL, si SMALLINT, i INTEGER, b BIGINT, d DOUBLE PRECISION, n NUMERIC(10,3), n18 NUMERIC(18,3), bo ' +
  'BOOLEAN, t TEXT, dt DATE, tm TIME, ts TIMESTAMP, tz TIMESTAMPTZ, by BYTEA, j JSON';

/** Rows as SQL value lists, ids 1 to 5: typical values, all NULL, lower bounds, upper bounds, and a lone `\.` (the COPY end marker). */
export const MANY_TYPES_ROWS: readonly string[] = [
  `1, 1, 2, 3, 2.5, 12.345, 123456789012345.678, true, 'héllo wörld ✓', DATE '2024-02-29', TIME '12:34:56.789012', ` +
    `TIMESTAMP '2024-01-02 03:04:05.123456', TIMESTAMPTZ '2024-01-02 03:04:05.123456+00', '\\xdeadbeef'::bytea, '{"a": [1, ` +
    `2]}'`,
  `2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL`,
  `3, -32768, -2147483648, 9223372036854775807, 'NaN', -0.005, -999999999999999.999, false, '', DATE '0044-03-15 BC', TIME ` +
    `'00:00:00', TIMESTAMP '1900-01-01 00:00:00.000001', TIMESTAMPTZ '1969-12-31 23:59:59.999999+00', '\\x'::bytea, 'null'`,
  `4, 32767, 2147483647, -9223372036854775808, 1e308, 0, 0, true, 'a,"b"' || chr(10) || 'c' || chr(13), DATE '9999-12-31', ` +
    `TIME '23:59:59.999999', TIMESTAMP '0044-03-15 12:00:00 BC', TIMESTAMPTZ '2262-04-11 23:47:16.854775+00', ` +
    `'\\x00ff2c22'::bytea, '[]'`,
  `5, 0, 0, 0, -0.1, 1.5, 1.5, false, '\\.', DATE '1970-01-01', TIME '01:02:03', TIMESTAMP '1970-01-01 00:00:00', ` +
    `TIMESTAMPTZ '1970-01-01 00:00:00+00', '\\x0a0d'::bytea, '"x,y"'`,
];

/** Creates `table` with the many-types columns and rows. */
export async function createManyTypes(pool: DbPool, table: string): Promise<void> {
  await pool.query(`CREATE TABLE ${table} (${MANY_TYPES_COLUMNS})`);
  // hyperd wants VALUES rows of identical types: one INSERT each.
  for (const row of MANY_TYPES_ROWS) await pool.query(`INSERT INTO ${table} VALUES (${row})`);
}
