/**
 * The set-up every watcher integration test repeats: one server and one watcher registry for a
 * whole `describe` (a hyperd or a cluster starts once), and a fresh inbox and table name per test.
 * A fixture that offers a database per test (`DbFixture.perTest`: Hyper) gives each test its own;
 * the others share the suite's, the fresh names keeping the tests apart.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'node:test';
import type { WatchOptions } from '../../src/options.ts';
import { WatcherRegistry } from '../../src/registry.ts';
import type { Logger } from '../../src/types.ts';
import { type DbFixture, LiveFixture, suiteResource } from './env.ts';

export interface Inbox {
  readonly dir: string;
  readonly table: string;
  /** The fixture's adapter, the suite's registry, a short rescan interval. */
  readonly opts: WatchOptions;
}

interface BenchState {
  /** The suite's database, or the running test's own where the fixture offers one. */
  readonly target: () => DbFixture;
  readonly registry: WatcherRegistry;
}

/** The suite's database (root, adapter, pool) and registry, and an inbox per test. */
export class WatchBench extends LiveFixture {
  readonly #state: () => BenchState;
  readonly #tablePrefix: string;
  #inboxes = 0;

  constructor(state: () => BenchState, tablePrefix: string) {
    super(() => state().target());
    this.#state = state;
    this.#tablePrefix = tablePrefix;
  }

  get registry(): WatcherRegistry {
    return this.#state().registry;
  }

  /** A new empty directory under the root and a table name no other test of the suite uses. */
  async inbox(): Promise<Inbox> {
    const state = this.#state();
    const target = state.target();
    const { registry } = state;
    const n = ++this.#inboxes;
    const dir = join(target.root, `inbox-${n}`);
    await mkdir(dir);
    return { dir, table: `${this.#tablePrefix}${n}`, opts: { db: target.db, registry, rescanIntervalMs: 200 } };
  }
}

/**
 * Opens the fixture before the tests of the enclosing `describe` (call this in its body) and,
 * after them, stops every watcher still registered, then closes the fixture. Where the fixture
 * offers a database per test, each test gets one, closed after it once its watchers stopped.
 * Tables are named `${tablePrefix}${n}`: suites that share one database need prefixes of their own.
 */
export function useWatchBench(open: () => Promise<DbFixture>, tablePrefix: string): WatchBench {
  let test: DbFixture | undefined;
  const suite = suiteResource(
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
  beforeEach(async () => {
    const { target } = suite();
    if (!target.perTest) return;
    // The suite's own connection keeps the server up between one test's database and the next.
    await target.pool.query('SELECT 1');
    test = await target.perTest();
  });
  afterEach(async () => {
    const closing = test;
    test = undefined;
    if (!closing) return;
    try {
      await suite().registry.stopAll();
    } finally {
      await closing.close();
    }
  });
  const state = (): BenchState => {
    const { target, registry } = suite();
    return { target: () => test ?? target, registry };
  };
  return new WatchBench(state, tablePrefix);
}

/** A logger that keeps the size of every group a file was committed in (1 for a file alone). */
export function groupLogger(): Logger & { readonly groups: number[]; readonly splits: { files: number; index: number | undefined }[] } {
  const groups: number[] = [];
  const splits: { files: number; index: number | undefined }[] = [];
  return {
    groups,
    splits,
    debug(message, fields) {
      if (message === 'group failed; splitting it')
        splits.push({ files: Number(fields?.files), index: fields?.index as number | undefined });
    },
    warn() {},
    error() {},
    info(message, fields) {
      if (message === 'ingested') groups.push(Number(fields?.group ?? 1));
    },
  };
}
