/**
 * The definition of the table a file is checked against, read from the user's database and
 * nothing written there: on Hyper through the hyperd that holds the file (a running watcher's,
 * or the endpoint given), else a hyperd of our own that never creates the file; on PostgreSQL
 * through the adapter given.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { type ColumnDefinition, readTableDefinition } from '../../adapters/db/hyper/table-definition.ts';
import { DEFAULT_DATABASE } from '../../adapters/db/hyper/index.ts';
import { exportSource } from '../export/source.ts';
import type { DbAdapter, DbPool, Logger, TableName } from '../types.ts';

export type { ColumnDefinition };

/** Where the user's table lives: a Hyper file (maybe on an endpoint), or a database adapter. */
export type UserDatabase =
  | { readonly kind: 'hyper'; readonly database?: string; readonly endpoint?: string }
  | { readonly kind: 'adapter'; readonly db: DbAdapter };

/** What the user's database says about the table: its columns (null: no such table), and the file's format version (Hyper). */
export interface Existing {
  readonly columns: ColumnDefinition[] | null;
  readonly databaseVersion?: number;
}

/** The columns of `table` in the user's database; none when it (or the database file) does not exist. */
export async function existingTable(where: UserDatabase, table: TableName, logger: Logger): Promise<Existing> {
  if (where.kind === 'adapter') return readThrough(where.db, table, async (pool) => pool?.close());
  const database = resolve(where.database ?? DEFAULT_DATABASE);
  // No file, no table: the check must not create one by opening it.
  if (where.endpoint === undefined && !existsSync(database)) return { columns: null };
  const source = exportSource(database, where.endpoint, logger);
  return readThrough(source.db, table, (pool) => source.close(pool));
}

async function readThrough(db: DbAdapter, table: TableName, close: (pool: DbPool | undefined) => Promise<void>): Promise<Existing> {
  let pool: DbPool | undefined;
  try {
    pool = await db.openPool({ maxConnections: 1 });
    const columns = await pool.transaction((conn) => readTableDefinition(conn, table));
    const version = db.databaseVersion?.();
    return { columns, ...(version !== undefined ? { databaseVersion: version } : {}) };
  } finally {
    await close(pool);
  }
}
