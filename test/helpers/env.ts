/** Shared set-up for integration tests: temp directories and a real embedded hyperd. */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { createHyperAdapter, type HyperAdapter } from '../../adapters/db/hyper/index.ts';
import type { DbAdapter, DbPool } from '../../src/types.ts';

export async function tempDir(prefix = 'hyperwatch-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** A database to test against, with a temp directory for the test's files. */
export interface DbFixture<D extends DbAdapter = DbAdapter> {
  readonly root: string;
  readonly db: D;
  /** A pool for the test's own checks (separate from any watcher's pool). */
  readonly pool: DbPool;
  /**
   * A fresh database for one test, on the same server, in a folder of its own under `root` (closed
   * and removed by its own `close`). Offered by fixtures whose suites should not share one database
   * (Hyper: see hyperFixture); absent where sharing costs nothing.
   */
  readonly perTest?: () => Promise<DbFixture<D>>;
  close(): Promise<void>;
}

export type HyperFixture = DbFixture<HyperAdapter>;

/**
 * A pool on `db` and the temp directory `root`, closed and removed together; `db` is closed too
 * when the fixture owns it (not when the test file shares one adapter between suites).
 */
export async function dbFixture<D extends DbAdapter>(root: string, db: D, options: { ownsDb: boolean }): Promise<DbFixture<D>> {
  const pool = await db.openPool({ maxConnections: 2 });
  return {
    root,
    db,
    pool,
    async close() {
      await pool.close();
      if (options.ownsDb) await db.close();
      await removeDir(root);
    },
  };
}

/**
 * A fresh `.hyper` database in a temp dir, on a real embedded hyperd (one server for every
 * fixture of the process). `databaseVersion` as in createHyperAdapter (the server's default: 2);
 * `adapt` wraps each adapter (e.g. streamedOnly).
 */
export async function hyperFixture(
  options: { databaseVersion?: number; adapt?: (db: HyperAdapter) => HyperAdapter } = {},
): Promise<HyperFixture> {
  const root = await tempDir();
  const adapt = options.adapt ?? ((db) => db);
  const inFolder = (dir: string) =>
    dbFixture(dir, adapt(createHyperAdapter({ database: join(dir, 'test.hyper'), databaseVersion: options.databaseVersion })), {
      ownsDb: true,
    });
  const suite = await inFolder(root);
  let tests = 0;
  return {
    ...suite,
    // Each time hyperd loads a database it generates code for every table in it (about 9 ms of its
    // CPU a table, measured here), and every checkpoint unloads it: a suite whose tests each add a
    // table to one database made hyperd spend most of its time reloading the earlier tests' tables.
    async perTest() {
      const dir = join(root, `test-${++tests}`);
      await mkdir(dir);
      return inFolder(dir);
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

/**
 * The root, adapter and pool of a fixture that a `before` hook opens, read at each use: the
 * describe body holds this view from the start, before there is anything to read.
 */
export class LiveFixture<D extends DbAdapter = DbAdapter> {
  readonly #current: () => DbFixture<D>;

  constructor(current: () => DbFixture<D>) {
    this.#current = current;
  }

  get root(): string {
    return this.#current().root;
  }

  get db(): D {
    return this.#current().db;
  }

  get pool(): DbPool {
    return this.#current().pool;
  }
}

/** A hyperFixture for the tests of the enclosing `describe`, opened before them and closed after. */
export function useHyperFixture(options: { databaseVersion?: number } = {}): LiveFixture<HyperAdapter> {
  return new LiveFixture(
    suiteResource(
      () => hyperFixture(options),
      (f) => f.close(),
      'the hyper fixture',
    ),
  );
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
