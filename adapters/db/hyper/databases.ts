/** What the adapters of one process share per database of one server. */
import { Gate } from './gate.ts';
import type { ResettablePool } from '../postgres-js/pool.ts';
import type { IdleRelease } from './idle.ts';

/**
 * Every pool on one database of one server, across adapters: a checkpoint must close them all,
 * and hold back new work meanwhile, for hyperd to unload (and so write) the database.
 */
export interface DatabaseEntry {
  readonly pools: Set<ResettablePool>;
  readonly gate: Gate;
  /** The file's signature after the last writing transaction not yet checkpointed (see written.ts). */
  written?: { readonly signature: string | undefined; readonly epoch: number } | undefined;
  /** Adapters of this process announcing the database to readers, and what they announced. */
  announcers: number;
  announced?: string | undefined;
  /** Embedded: lets go of the file while idle; shared by the adapters of this process on it. */
  idle?: IdleRelease | undefined;
  idleUsers: number;
}
const databases = new Map<string, DatabaseEntry>();

export function databaseEntry(key: string): DatabaseEntry {
  let entry = databases.get(key);
  if (!entry) databases.set(key, (entry = { pools: new Set(), gate: new Gate(), announcers: 0, idleUsers: 0 }));
  return entry;
}

/** Raised when another process holds the `.hyper` file: what is happening, and what works. */
export class DatabaseHeldError extends Error {
  readonly code = 'DATABASE_HELD';
  constructor(database: string, holder: string) {
    super(
      `${database} is held by ${holder}, and a .hyper file takes one writing process at a time. ` +
        'To watch several directories into one database, run them in one process: hyperwatch serve with one watcher per directory. ' +
        'Or start one hyperd yourself and give every watcher --endpoint host:port (several processes can then share it). ' +
        'To read the database meanwhile, use hyperwatch query / history --database with the same file: they go through the holder.',
    );
    this.name = 'DatabaseHeldError';
  }
}
