/**
 * Several watchers in one process, each with its own options and database, added and removed at
 * run time: the state behind `hyperwatch serve` and its HTTP API. Each watcher has its own DB
 * adapter (embedded hyperds are shared per binary by the Hyper adapter itself).
 */
import { resolve } from 'node:path';
import { findWatcher, openWatcher } from '../api.ts';
import { createDbAdapter, readersEndpoint } from '../compose.ts';
import { watchOptionsOf } from '../options/serve.ts';
import type { ActiveFile } from '../observe/progress.ts';
import { WatcherRegistry, type WatcherStatus } from '../registry.ts';
import type { DbAdapter, Logger } from '../types.ts';
import type { WatcherHandle, WatchSummary } from '../watcher/handle.ts';
import type { WatcherConfig } from './config.ts';
import type { MetricsSource } from './metrics.ts';

/** A watcher's entry in `GET /watchers`. */
export interface ServedWatcherStatus extends WatcherStatus {
  readonly adapter: string;
  /** Seconds the longest-waiting ready file has waited for a slot (0 when none waits). */
  readonly backlogOldestAgeSeconds: number;
  /** Files being ingested now, with bytes read so far. */
  readonly active: readonly ActiveFile[];
  /** Every live process watching this directory (several may share it), from the lease table. */
  readonly processes: ReturnType<WatcherHandle['processes']>;
  /** Hyper: where readers connect to read the database while the watcher runs (`endpoint`, `user`, `database`). */
  readonly readers?: ReturnType<typeof readersEndpoint>;
}

interface Served {
  readonly handle: WatcherHandle;
  readonly db: DbAdapter;
  readonly config: WatcherConfig;
}

/** Adds `fields` to every line a logger writes (the watcher's directory, in serve's shared log). */
export function withFields(logger: Logger, fields: Record<string, unknown>): Logger {
  return {
    debug: (m, f) => logger.debug(m, { ...fields, ...f }),
    info: (m, f) => logger.info(m, { ...fields, ...f }),
    warn: (m, f) => logger.warn(m, { ...fields, ...f }),
    error: (m, f) => logger.error(m, { ...fields, ...f }),
  };
}

export class ServeInstance {
  readonly #registry = new WatcherRegistry();
  readonly #served = new Map<WatcherHandle, Served>();
  readonly #logger: Logger;
  /** Relative directories (DELETE /watchers/:dir) are resolved against this. */
  readonly #baseDir: string;
  /** Stops every watcher, also one still starting (its initial sweep), when aborted. */
  readonly #signal: AbortSignal | undefined;

  constructor(options: { logger: Logger; baseDir: string; signal?: AbortSignal }) {
    this.#logger = options.logger;
    this.#baseDir = options.baseDir;
    this.#signal = options.signal;
  }

  /**
   * Starts a watcher for a config entry that `validateWatcher`/`validateConfig` accepted (paths
   * resolved). Resolves after its initial sweep; throws DuplicateWatcherError for a watched directory.
   */
  async add(config: WatcherConfig): Promise<WatcherHandle> {
    const signal = this.#signal;
    const logger = withFields(this.#logger, { dir: config.dir });
    const db = createDbAdapter(config, logger);
    try {
      const handle = await openWatcher(config.dir, config.table, {
        db,
        registry: this.#registry,
        logger,
        ...watchOptionsOf(config),
        ...(signal ? { signal } : {}),
      });
      this.#served.set(handle, { handle, db, config });
      return handle;
    } catch (error) {
      await db.close().catch(() => {});
      throw error;
    }
  }

  /** The watcher of `dir` (any path to it), or undefined. */
  find(dir: string): Promise<WatcherHandle | undefined> {
    return findWatcher(resolve(this.#baseDir, dir), this.#registry);
  }

  /** Stops the watcher of `dir` (in-flight files finish) and closes its database; undefined when none. */
  async remove(dir: string): Promise<WatchSummary | undefined> {
    const handle = await this.find(dir);
    const served = handle && this.#served.get(handle);
    if (!served) return undefined;
    return this.#stop(served);
  }

  async #stop(served: Served): Promise<WatchSummary> {
    try {
      return await served.handle.stop();
    } finally {
      this.#served.delete(served.handle);
      await served.db.close().catch(() => {});
    }
  }

  get size(): number {
    return this.#served.size;
  }

  status(now = Date.now()): ServedWatcherStatus[] {
    return this.#registry.status().map((s) => {
      const served = [...this.#served.values()].find((x) => x.handle.dir === s.directory);
      const oldest = served?.handle.oldestQueuedAt();
      return {
        ...s,
        adapter: served?.config.adapter ?? 'hyper',
        backlogOldestAgeSeconds: oldest === undefined ? 0 : Math.max(0, (now - oldest) / 1000),
        active: served?.handle.activeFiles() ?? [],
        processes: served?.handle.processes() ?? [],
        ...(served ? { readers: readersEndpoint(served.config) } : {}),
      };
    });
  }

  metricsSources(): MetricsSource[] {
    return [...this.#served.values()].map(({ handle }) => {
      const s = handle.summary();
      return {
        directory: s.directory,
        table: s.table,
        stats: handle.stats,
        oldestQueuedAt: handle.oldestQueuedAt(),
        processes: handle.processes().length,
      };
    });
  }

  activeFiles(): ActiveFile[] {
    return [...this.#served.keys()].flatMap((h) => h.activeFiles());
  }

  /** Stops every watcher (in parallel) and closes their databases. */
  async stopAll(): Promise<WatchSummary[]> {
    return Promise.all([...this.#served.values()].map((s) => this.#stop(s)));
  }
}
