/**
 * The bench's one hyperd, and short-lived SQL sessions on it. Sessions are opened per step and
 * closed after: hyperd writes a database out when its last session ends, and the watcher's
 * checkpoints rely on that, so the bench holds no session while a watcher runs.
 */
import net from 'node:net';
import process from 'node:process';
import postgres from 'postgres';
import { TABLEAU_ROLE } from '../../adapters/db/hyper/file-role.ts';
import { Hyperd } from '../../adapters/db/hyper/hyperd.ts';
import { locateHyperd } from '../../adapters/db/hyper/locate.ts';
import type { Sql } from '../../adapters/db/postgres-js/pool.ts';
import { silentLogger } from '../../src/log.ts';
import { quoteIdent } from '../../src/columns/sql.ts';
import { TABLE_COLUMNS } from './data.ts';

export interface Server {
  readonly host: string;
  readonly port: number;
  /** `host:port`, as `WatchOptions.endpoint` and `createHyperAdapter` take it. */
  readonly endpoint: string;
  readonly pid: number;
  readonly binary: string;
  stop(): Promise<void>;
}

export async function startServer(): Promise<Server> {
  const located = locateHyperd();
  if (!located.ok) throw new Error(located.message);
  // `HYPERWATCH_BENCH_HYPERD_LOG=dir` keeps the bench's hyperd log in `dir` (it is removed otherwise).
  const logDir = process.env.HYPERWATCH_BENCH_HYPERD_LOG;
  const hyperd = new Hyperd({ binary: located.path, logger: silentLogger, ...(logDir ? { logDir } : {}) });
  const { host, port } = await hyperd.endpoint();
  return { host, port, endpoint: `${TABLEAU_ROLE}@${host}:${port}`, pid: hyperd.pid!, binary: located.path, stop: () => hyperd.stop() };
}

/** One session on `database` ('' for none), with no-delay sockets as the watcher's own pool. */
export function session(server: Server, database: string): Sql {
  // `socket` is a postgres.js option its types leave out (the Hyper adapter passes it the same way).
  const options = {
    user: TABLEAU_ROLE,
    database,
    max: 1,
    fetch_types: false,
    prepare: false,
    idle_timeout: 0,
    connect_timeout: 30,
    onnotice: () => {},
    socket: () => net.connect({ host: server.host, port: server.port, noDelay: true }),
  };
  return postgres(options) as Sql;
}

export async function withSession<T>(server: Server, database: string, fn: (sql: Sql) => Promise<T>): Promise<T> {
  const sql = session(server, database);
  try {
    return await fn(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

export async function createDatabase(server: Server, database: string): Promise<void> {
  await withSession(server, '', (sql) => sql.unsafe(`CREATE DATABASE IF NOT EXISTS ${quoteIdent(database)}`));
}

/** A fresh, empty table with the generated files' columns. */
export async function freshTable(sql: Sql, table: string): Promise<void> {
  await sql.unsafe(`DROP TABLE IF EXISTS ${quoteIdent(table)}`);
  await sql.unsafe(`CREATE TABLE ${quoteIdent(table)} (${TABLE_COLUMNS.map(([n, t]) => `${quoteIdent(n)} ${t}`).join(', ')})`);
}

export async function countRows(sql: Sql, table: string): Promise<number> {
  const rows = await sql.unsafe<{ n: string | number }[]>(`SELECT COUNT(*) AS n FROM ${quoteIdent(table)}`);
  return Number(rows[0]!.n);
}

export async function dropTable(sql: Sql, table: string): Promise<void> {
  await sql.unsafe(`DROP TABLE IF EXISTS ${quoteIdent(table)}`);
}
