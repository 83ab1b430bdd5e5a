/**
 * A `DbPool` over postgres.js, shared by the Hyper and PostgreSQL adapters (both speak the
 * PostgreSQL wire protocol). One postgres.js instance per watcher, `max` = its maxConcurrent.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import postgres from 'postgres';
import type { DbConnection, DbPool, Row, TableColumn, TableName } from '../../../src/types.ts';

export type Sql = postgres.Sql<Record<string, never>>;
type TransactionSql = postgres.TransactionSql<Record<string, never>>;
type AnySql = Sql | TransactionSql;

/** The two settle functions postgres.js keeps on every pending query (see `copyFrom`). */
interface SettleHooks {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs `COPY ... FROM STDIN` and streams `source` into it; resolves with the row count.
 *
 * postgres.js resolves the query with a Writable and then settles nothing else: when the server
 * rejects the data after the last chunk, the Writable's `final` callback is never called (an
 * `await` on it hangs and `sql.begin` never rolls back), and on success the "COPY n" row count is
 * dropped. Both arrive as a second resolve/reject of the same query object, so we hook those two
 * functions and turn them into one promise that always settles. Pinned to postgres 3.4.x, and the
 * tests cover both paths (a bad row at the end, a bad row mid-stream, a count).
 */
export async function copyFrom(sql: AnySql, statement: string, source: AsyncIterable<Uint8Array | string>): Promise<number> {
  const query = sql.unsafe(statement);
  const hooks = query as unknown as SettleHooks;
  let streaming = false;
  let settle!: { resolve: (count: number) => void; reject: (error: unknown) => void };
  const done = new Promise<number>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const firstResolve = hooks.resolve;
  const firstReject = hooks.reject;
  hooks.resolve = (value) => {
    if (!streaming) return firstResolve(value);
    const count = (value as { count?: unknown } | null)?.count;
    settle.resolve(typeof count === 'number' ? count : Number(count ?? 0));
  };
  hooks.reject = (error) => (streaming ? settle.reject(error) : firstReject(error));

  const writable = await query.writable();
  streaming = true;
  let sourceError: unknown;
  const piped = pipeline(Readable.from(source, { objectMode: false }), writable).catch((error: unknown) => {
    sourceError ??= error;
  });
  try {
    return await done;
  } catch (error) {
    // When reading the file failed, the server only saw our CopyFail: report the real cause.
    throw sourceError ?? error;
  } finally {
    void piped;
  }
}

/** Columns of `table`, or `null` when it does not exist. pg_catalog works on Hyper and PostgreSQL. */
export async function describeTable(sql: AnySql, table: TableName): Promise<TableColumn[] | null> {
  const rows = await sql.unsafe<{ name: string; sql_type: string; not_null: boolean }[]>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS sql_type, a.attnotnull AS not_null
       FROM pg_catalog.pg_attribute a
       JOIN pg_catalog.pg_class c ON a.attrelid = c.oid
       JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
      WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [table.schema ?? 'public', table.name],
  );
  if (rows.length === 0) return null;
  return rows.map((r) => ({ name: r.name, sqlType: r.sql_type, nullable: !r.not_null }));
}

function connectionOf(sql: AnySql): DbConnection {
  return {
    query: <T extends Row = Row>(text: string, params: readonly unknown[] = []) =>
      sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]) as unknown as Promise<T[]>,
    execute: async (text: string, params: readonly unknown[] = []) => {
      const result = await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]);
      return Number(result.count ?? 0);
    },
    copyFrom: (statement, source) => copyFrom(sql, statement, source),
    describeTable: (table) => describeTable(sql, table),
  };
}

/** A `DbPool` whose connections can all be closed and later reopened on demand. */
export interface ResettablePool extends DbPool {
  /** Ends every connection (after their queries finish); the next use opens new ones. */
  reset(): Promise<void>;
}

/**
 * Wraps postgres.js as a `DbPool`. `make` creates the postgres.js instance, again after each
 * `reset`; `onClose` runs after the pool has ended for good.
 */
export function poolOf(make: () => Sql, onClose?: () => Promise<void>): ResettablePool {
  let sql = make();
  let closed = false;
  return {
    transaction: <T>(fn: (conn: DbConnection) => Promise<T>) =>
      sql.begin((tx) => fn(connectionOf(tx))) as Promise<T>,
    query: <T extends Row = Row>(text: string, params: readonly unknown[] = []) =>
      sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]) as unknown as Promise<T[]>,
    async reset() {
      if (closed) return;
      const old = sql;
      sql = make();
      await old.end({ timeout: 30 });
    },
    async close() {
      if (closed) return;
      closed = true;
      await sql.end({ timeout: 5 });
      await onClose?.();
    },
  };
}
