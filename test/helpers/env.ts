/** Shared set-up for integration tests: temp directories and a real embedded hyperd. */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { createHyperAdapter, type HyperAdapter } from '../../adapters/db/hyper/index.ts';
import type { DbPool } from '../../src/types.ts';

export async function tempDir(prefix = 'hyperwatch-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export interface HyperFixture {
  readonly root: string;
  readonly db: HyperAdapter;
  /** A pool for the test's own checks (separate from any watcher's pool). */
  readonly pool: DbPool;
  close(): Promise<void>;
}

/**
 * A fresh `.hyper` database in a temp dir, on a real embedded hyperd (one server for every
 * fixture of the process). `databaseVersion` as in createHyperAdapter (the server's default: 2).
 */
export async function hyperFixture(options: { databaseVersion?: number } = {}): Promise<HyperFixture> {
  const root = await tempDir();
  const db = createHyperAdapter({ database: join(root, 'test.hyper'), databaseVersion: options.databaseVersion });
  const pool = await db.openPool({ maxConnections: 2 });
  return {
    root,
    db,
    pool,
    async close() {
      await pool.close();
      await db.close();
      await removeDir(root);
    },
  };
}

/**
 * Something the tests of the enclosing `describe` share, opened by its `before` hook and closed by
 * its `after` hook (registered here, so call this in the describe's body). The getter throws if a
 * test reaches the value outside the hooks' span, instead of handing out undefined.
 */
export function suiteResource<T>(open: () => Promise<T>, close: (value: T) => Promise<void>, what: string): () => T {
  let value: T | undefined;
  before(async () => {
    value = await open();
  });
  after(async () => {
    if (value === undefined) return;
    const closing = value;
    value = undefined;
    await close(closing);
  });
  return () => {
    if (value === undefined) throw new Error(`${what} is only open while the suite's tests run`);
    return value;
  };
}

/** A hyperFixture for the tests of the enclosing `describe`, opened before them and closed after. */
export function useHyperFixture(options: { databaseVersion?: number } = {}): Omit<HyperFixture, 'close'> {
  const fx = suiteResource(() => hyperFixture(options), (f) => f.close(), 'the hyper fixture');
  return {
    get root() {
      return fx().root;
    },
    get db() {
      return fx().db;
    },
    get pool() {
      return fx().pool;
    },
  };
}

export interface SuiteTempDir {
  /** A path inside the directory (the directory itself without arguments). */
  path(...parts: string[]): string;
  /** Creates the subdirectory `name` and returns its path. */
  dir(name: string): Promise<string>;
}

/** A temp directory for the tests of the enclosing `describe`: made before them, removed after. */
export function useTempDir(prefix?: string): SuiteTempDir {
  const root = suiteResource(() => tempDir(prefix), removeDir, 'the temp directory');
  return {
    path: (...parts) => join(root(), ...parts),
    async dir(name) {
      const dir = join(root(), name);
      await mkdir(dir);
      return dir;
    },
  };
}

export async function count(pool: DbPool, table: string, where = 'TRUE'): Promise<number> {
  const rows = await pool.query<{ n: string | number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`);
  return Number(rows[0]!.n);
}

/** The SQL types of the table's columns, in column order (undefined when there is no such table). */
export async function sqlTypes(pool: DbPool, table: string): Promise<string[] | undefined> {
  const columns = await pool.transaction((conn) => conn.describeTable({ name: table }));
  return columns?.map((c) => c.sqlType);
}

/** The table's columns in order as `name type`, e.g. `id bigint` (undefined when there is no such table). */
export async function columnsOf(pool: DbPool, table: string): Promise<string[] | undefined> {
  const columns = await pool.transaction((conn) => conn.describeTable({ name: table }));
  return columns?.map((c) => `${c.name} ${c.sqlType}`);
}

/**
 * Environment for a child that must not need the network: every request fails fast through this
 * proxy (Deno, npm and Bun honour HTTP(S)_PROXY).
 */
export const OFFLINE_ENV: Readonly<Record<string, string>> = {
  HTTPS_PROXY: 'http://127.0.0.1:9',
  HTTP_PROXY: 'http://127.0.0.1:9',
  NO_PROXY: '',
  DENO_NO_UPDATE_CHECK: '1',
  DENO_NO_PROMPT: '1',
};
