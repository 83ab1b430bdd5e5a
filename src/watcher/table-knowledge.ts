/**
 * What the watcher knows about its target table: whether it exists, and its columns as last
 * committed (a catalog query spared per file). Learned at start (start-up.ts), by the first
 * transaction that finds or creates the table (attempt.ts), and by a batch that looks before
 * forming groups (group.ts); all through the methods below.
 */
import { Mutex } from '../util/mutex.ts';
import type { DbConnection, DbPool, TableColumn, TableName } from '../types.ts';

/** What one transaction learned about the target table; kept only if it commits (see `TableKnowledge.describing`). */
export interface Described {
  columns: TableColumn[] | undefined;
  /** It was served the cached description. */
  usedCache: boolean;
}

export function sameTable(a: TableName, b: TableName): boolean {
  return a.name === b.name && (a.schema ?? 'public') === (b.schema ?? 'public');
}

export class TableKnowledge {
  /** Once the table is known to exist, files no longer serialize on the schema lock. */
  #exists = false;
  /**
   * The target table's columns as last committed: describing it costs a catalog query (about
   * 5 ms on hyperd) per file. Dropped on any failed transaction; a file that fails while using it
   * is tried once more with a fresh description, so a table changed behind our back costs a
   * retry, never a wrongly failed file.
   */
  #described: TableColumn[] | undefined;
  /** Until the table exists, files take turns: two transactions creating it would conflict. */
  readonly #schemaLock = new Mutex();
  /** Columns schema evolution added (and a committed file used), each logged and counted once. */
  readonly #added = new Set<string>();

  constructor(readonly table: TableName) {}

  get exists(): boolean {
    return this.#exists;
  }

  /** The table is there (it never goes away as far as the watcher is concerned). */
  found(): void {
    this.#exists = true;
  }

  /** A committed transaction described the table: its columns serve the next ones. */
  remember(columns: TableColumn[]): void {
    this.#described = columns;
  }

  /** The cached description may be wrong (a transaction failed, or one added columns). */
  forget(): void {
    this.#described = undefined;
  }

  /** Until the table exists: one transaction at a time. Resolves with the release. */
  lockSchema(): Promise<() => void> {
    return this.#schemaLock.acquire();
  }

  /** True the first time a column of this name is reported added. */
  firstAdded(column: string): boolean {
    if (this.#added.has(column)) return false;
    this.#added.add(column);
    return true;
  }

  /** Whether the table is there now, asked on a connection of its own. */
  async isThere(pool: DbPool): Promise<boolean> {
    return (await pool.transaction((conn) => conn.describeTable(this.table))) !== null;
  }

  /** Knowing the table before the first file spares that file the schema lock and catalog queries. */
  async describeAtStart(pool: DbPool): Promise<void> {
    try {
      const columns = await pool.transaction((conn) => conn.describeTable(this.table));
      if (columns) {
        this.#exists = true;
        this.#described = columns;
      }
    } catch {
      // The first file finds out, under the schema lock.
    }
  }

  /** A table created by an earlier run (recovery, the initial sweep): looked up once, so that files can form groups. */
  async lookUp(pool: DbPool): Promise<void> {
    if (await this.isThere(pool).catch(() => false)) this.#exists = true;
  }

  /**
   * `conn` with the target table's description served from the cache; what a transaction reads
   * from the database lands in `described`, kept only if it commits (`remember`).
   * `afterExecute` runs right after each `execute` was handed to the connection, before its reply.
   */
  describing(conn: DbConnection, described: Described, afterExecute?: () => void): DbConnection {
    return {
      query: (sql, params) => conn.query(sql, params),
      execute: (sql, params) => {
        const done = conn.execute(sql, params);
        afterExecute?.();
        return done;
      },
      copyFrom: (sql, source) => conn.copyFrom(sql, source),
      describeTable: async (table) => {
        if (!sameTable(table, this.table)) return conn.describeTable(table);
        const cached = this.#described;
        if (cached) {
          described.usedCache = true;
          return cached.map((c) => ({ ...c }));
        }
        const columns = await conn.describeTable(table);
        if (columns) described.columns = columns.map((c) => ({ ...c }));
        return columns;
      },
    };
  }
}
