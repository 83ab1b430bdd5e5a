/** All active watchers of a process (or of a scope the caller chooses), keyed by real path. */
import type { WatcherHandle, WatchSummary } from './watcher/handle.ts';

export interface WatcherStatus {
  readonly directory: string;
  readonly table: string;
  readonly database: string;
  /** The database's file format version (Hyper), once known. */
  readonly databaseVersion?: number;
  readonly startedAt: string;
  readonly stats: WatcherHandle['stats'];
}

export class DuplicateWatcherError extends Error {
  readonly code = 'DUPLICATE_WATCHER';
  constructor(readonly directory: string) {
    super(`${directory} is already being watched (one watcher per directory; stop the other first)`);
    this.name = 'DuplicateWatcherError';
  }
}

export class WatcherRegistry {
  readonly #watchers = new Map<string, WatcherHandle>();
  /** Directories whose watcher is starting: reserved synchronously, so two starts cannot race. */
  readonly #starting = new Set<string>();

  /** Reserves `realDir`; throws `DuplicateWatcherError` when it is taken. */
  reserve(realDir: string): void {
    if (this.#watchers.has(realDir) || this.#starting.has(realDir)) throw new DuplicateWatcherError(realDir);
    this.#starting.add(realDir);
  }

  /** Completes a reservation (`handle`) or drops it (start failed). */
  settle(realDir: string, handle?: WatcherHandle): void {
    this.#starting.delete(realDir);
    if (handle) this.#watchers.set(realDir, handle);
  }

  remove(realDir: string): void {
    this.#watchers.delete(realDir);
  }

  get(realDir: string): WatcherHandle | undefined {
    return this.#watchers.get(realDir);
  }

  list(): WatcherHandle[] {
    return [...this.#watchers.values()];
  }

  get size(): number {
    return this.#watchers.size;
  }

  status(): WatcherStatus[] {
    return this.list().map((w) => {
      const s = w.summary();
      return {
        directory: s.directory,
        table: s.table,
        database: s.database,
        ...(s.databaseVersion !== undefined ? { databaseVersion: s.databaseVersion } : {}),
        startedAt: s.startedAt,
        stats: s.stats,
      };
    });
  }

  async stopAll(): Promise<WatchSummary[]> {
    return Promise.all(this.list().map((w) => w.stop()));
  }
}

/** The registry `startWatching` and `stopWatching` use unless `options.registry` names another. */
export const defaultRegistry = new WatcherRegistry();
