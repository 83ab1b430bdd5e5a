/**
 * The set-up every watcher integration test repeats: one database (adapter, and a pool for the
 * test's own checks) and one watcher registry for a whole `describe`, and a fresh inbox and table
 * name per test. Sharing the database keeps suites fast (a hyperd or a cluster starts once); fresh
 * names keep the tests apart.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { WatchOptions } from '../../src/options.ts';
import { WatcherRegistry } from '../../src/registry.ts';
import type { DbAdapter, DbPool, Logger } from '../../src/types.ts';
import { suiteResource } from './env.ts';

/** A database to watch into, with a temp directory for inboxes. A HyperFixture is one. */
export interface WatchTarget {
  readonly root: string;
  readonly db: DbAdapter;
  /** For the test's own checks, separate from any watcher's pool. */
  readonly pool: DbPool;
  close(): Promise<void>;
}

export interface Inbox {
  readonly dir: string;
  readonly table: string;
  /** The target's adapter, the suite's registry, a short rescan interval. */
  readonly opts: WatchOptions;
}

export interface WatchBench {
  readonly root: string;
  readonly db: DbAdapter;
  readonly pool: DbPool;
  readonly registry: WatcherRegistry;
  /** A new empty directory under the root and a table name no other test of the suite uses. */
  inbox(): Promise<Inbox>;
}

/**
 * Opens the target before the tests of the enclosing `describe` (call this in its body) and,
 * after them, stops every watcher still registered, then closes the target. Tables are named
 * `${tablePrefix}${n}`: suites that share one database need prefixes of their own.
 */
export function useWatchBench(open: () => Promise<WatchTarget>, tablePrefix: string): WatchBench {
  const state = suiteResource(
    async () => ({ target: await open(), registry: new WatcherRegistry() }),
    async ({ target, registry }) => {
      try {
        await registry.stopAll();
      } finally {
        await target.close();
      }
    },
    'the watch bench',
  );
  let n = 0;
  return {
    get root() {
      return state().target.root;
    },
    get db() {
      return state().target.db;
    },
    get pool() {
      return state().target.pool;
    },
    get registry() {
      return state().registry;
    },
    async inbox() {
      const { target, registry } = state();
      const dir = join(target.root, `inbox-${++n}`);
      await mkdir(dir);
      return { dir, table: `${tablePrefix}${n}`, opts: { db: target.db, registry, rescanIntervalMs: 200 } };
    },
  };
}

/** A logger that keeps the size of every group a file was committed in (1 for a file alone). */
export function groupLogger(): Logger & { readonly groups: number[] } {
  const groups: number[] = [];
  return {
    groups,
    debug() {},
    warn() {},
    error() {},
    info(message, fields) {
      if (message === 'ingested') groups.push(Number(fields?.group ?? 1));
    },
  };
}
