/**
 * Fresh databases for the tests of hyperwatch's own tables, on a real hyperd and a real
 * PostgreSQL: each `fresh()` is a database of its own (a new `.hyper` file; a new PostgreSQL
 * database), with a pool for the test's own checks and the description a child process
 * (test/fixtures/move-child.ts) opens it by.
 */
import { join } from 'node:path';
import postgres from 'postgres';
import { createHyperAdapter } from '../../adapters/db/hyper/index.ts';
import { createPostgresAdapter } from '../../adapters/db/postgres/index.ts';
import type { DbAdapter, DbPool } from '../../src/types.ts';
import { removeDir, tempDir } from './env.ts';
import { startPostgres } from './postgres.ts';
import { startStandaloneHyperd } from './standalone-hyperd.ts';

export type ChildSpec = { adapter: 'hyper'; endpoint: string; database: string } | { adapter: 'postgres'; url: string };

export interface FreshDatabase {
  /** A new adapter on it each call (a watcher's own, or a second process's); closed by `close`. */
  adapter(): DbAdapter;
  readonly pool: DbPool;
  readonly spec: ChildSpec;
  /** A folder for the test's inboxes. */
  readonly root: string;
  close(): Promise<void>;
}

export interface Target {
  readonly name: string;
  fresh(): Promise<FreshDatabase>;
  stop(): Promise<void>;
}

async function freshOn(root: string, make: () => DbAdapter, spec: ChildSpec, dropDb?: () => Promise<void>): Promise<FreshDatabase> {
  const adapters: DbAdapter[] = [];
  const adapter = () => {
    const db = make();
    adapters.push(db);
    return db;
  };
  const pool = await adapter().openPool({ maxConnections: 2 });
  return {
    adapter,
    pool,
    spec,
    root,
    async close() {
      await pool.close();
      for (const db of adapters) await db.close();
      await dropDb?.();
      await removeDir(root);
    },
  };
}

/**
 * A hyperd started by hand (as `--endpoint` uses one): a client killed in the middle of a step
 * leaves that hyperd running, with everything committed so far in it, as a shared hyperd does.
 */
export async function hyperdTarget(): Promise<Target> {
  const logs = await tempDir('hyperwatch-own-hyperd-');
  const hyperd = await startStandaloneHyperd({ user: 'hyperwatch', logDir: logs });
  const endpoint = `127.0.0.1:${hyperd.port}`;
  return {
    name: 'hyperd',
    async fresh() {
      const root = await tempDir('hyperwatch-own-');
      const database = join(root, 'own.hyper');
      return freshOn(root, () => createHyperAdapter({ endpoint, database, endpointReadsFiles: 'no' }), {
        adapter: 'hyper',
        endpoint,
        database,
      });
    },
    async stop() {
      await hyperd.stop();
      await removeDir(logs);
    },
  };
}

/** The embedded hyperd (the default setup): no child process can share it. */
export function embeddedTarget(): Target {
  return {
    name: 'embedded hyperd',
    async fresh() {
      const root = await tempDir('hyperwatch-own-');
      const database = join(root, 'own.hyper');
      const db = createHyperAdapter({ database });
      // One adapter per file: a second embedded adapter on it would be another holder.
      return freshOn(root, () => db, { adapter: 'hyper', endpoint: '', database });
    },
    async stop() {},
  };
}

/** One PostgreSQL server; every fresh database is created on it, and dropped after. */
export async function postgresTarget(): Promise<Target> {
  const pg = await startPostgres();
  const admin = postgres(pg.url, { onnotice: () => {}, max: 1 });
  let n = 0;
  return {
    name: 'PostgreSQL',
    async fresh() {
      const name = `own_${++n}`;
      await admin.unsafe(`CREATE DATABASE ${name}`);
      const url = new URL(pg.url);
      url.pathname = `/${name}`;
      const root = await tempDir('hyperwatch-own-');
      return freshOn(
        root,
        () => createPostgresAdapter({ url: url.toString() }),
        { adapter: 'postgres', url: url.toString() },
        async () => {
          await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        },
      );
    },
    async stop() {
      await admin.end({ timeout: 1 });
      await pg.stop();
    },
  };
}
