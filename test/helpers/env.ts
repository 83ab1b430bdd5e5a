/** Shared set-up for integration tests: temp directories and a real embedded hyperd. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

/** A fresh `.hyper` database in a temp dir, on a real embedded hyperd. */
export async function hyperFixture(): Promise<HyperFixture> {
  const root = await tempDir();
  const db = createHyperAdapter({ database: join(root, 'test.hyper') });
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

export async function count(pool: DbPool, table: string, where = 'TRUE'): Promise<number> {
  const rows = await pool.query<{ n: string | number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`);
  return Number(rows[0]!.n);
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
