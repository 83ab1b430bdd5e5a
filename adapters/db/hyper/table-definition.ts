/**
 * A Hyper table's definition as CREATE TABLE needs it to make the same table elsewhere: each
 * column's exact type (`numeric(18,3)`, `character varying(10)`), its collation and NOT NULL, read
 * from hyperd's pg_catalog; and the tables of a database that are the user's, not hyperwatch's.
 */
import { qualifiedName, quoteIdent, tableLabel } from '../../../src/columns/sql.ts';
import type { DbConnection, TableName } from '../../../src/types.ts';
import { versionNeededBy } from './database-version.ts';

export interface ColumnDefinition {
  readonly name: string;
  /** The type as CREATE TABLE takes it, e.g. `numeric(18,3)`, `timestamptz`, `GEOGRAPHY`. */
  readonly sqlType: string;
  readonly nullable: boolean;
  /** A collation other than the database default, e.g. `en_US_CI`. */
  readonly collation?: string;
}

interface ColumnRow {
  readonly name: string;
  readonly sql_type: string;
  readonly attnotnull: boolean;
  readonly collation: string | null;
}

/** `format_type` spellings that hyperd's CREATE TABLE does not take back. */
const CREATE_SPELLING: Readonly<Record<string, string>> = { tabgeography: 'GEOGRAPHY' };

/** The columns of `table` in order, or null when it does not exist. */
export async function readTableDefinition(conn: DbConnection, table: TableName): Promise<ColumnDefinition[] | null> {
  const rows = await conn.query<ColumnRow & Record<string, unknown>>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS sql_type, a.attnotnull,
            CASE WHEN co.collname = 'default' THEN NULL ELSE co.collname END AS collation
       FROM pg_catalog.pg_attribute a
       JOIN pg_catalog.pg_class c ON a.attrelid = c.oid
       JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
       LEFT JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation
      WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [table.schema ?? 'public', table.name],
  );
  if (rows.length === 0) return null;
  return rows.map((r) => ({
    name: r.name,
    sqlType: CREATE_SPELLING[r.sql_type] ?? r.sql_type,
    nullable: !r.attnotnull,
    ...(r.collation ? { collation: r.collation } : {}),
  }));
}

/** `CREATE TABLE` for `columns` under the name `table`. */
export function createTableStatement(table: TableName, columns: readonly ColumnDefinition[]): string {
  const column = (c: ColumnDefinition) =>
    `${quoteIdent(c.name)} ${c.sqlType}${c.collation ? ` COLLATE ${quoteIdent(c.collation)}` : ''}${c.nullable ? '' : ' NOT NULL'}`;
  return `CREATE TABLE ${qualifiedName(table)} (${columns.map(column).join(', ')})`;
}

/** The columns a file of `version` cannot hold, each with the version it needs. */
export function columnsBeyond(version: number, columns: readonly ColumnDefinition[]): { column: ColumnDefinition; needs: number }[] {
  return columns.map((column) => ({ column, needs: versionNeededBy(column.sqlType) })).filter((c) => c.needs > version);
}

/**
 * The user's tables (`schema.name` labels): every persistent table but hyperwatch's own, in the
 * schema `hyperwatch` or named `hyperwatch_*` (where earlier releases kept them, in `public`).
 */
export async function userTables(conn: DbConnection): Promise<string[]> {
  const rows = await conn.query<{ schema: string; name: string }>(
    `SELECT n.nspname AS schema, c.relname AS name
       FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
      WHERE c.relkind = 'r' AND c.relpersistence = 'p' AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'hyperwatch')
      ORDER BY 1, 2`,
  );
  return rows
    .filter((r) => !r.name.startsWith('hyperwatch_'))
    .map((r) => tableLabel(r.schema === 'public' ? { name: r.name } : { schema: r.schema, name: r.name }));
}
