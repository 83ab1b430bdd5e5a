/**
 * The contract a database adapter implements: its capabilities, its pool, and one connection in
 * one transaction for one file.
 */
import type { LogicalType, TableColumn, TableName } from './tables.ts';

/** What a database can do beyond plain SQL and `COPY ... FROM STDIN` (CSV). */
export interface DbCapabilities {
  /** The server can read files at the watcher's paths (embedded hyperd on the same machine). */
  readonly readsLocalFiles: boolean;
  /** `COPY ... FROM STDIN WITH (FORMAT ARROWSTREAM)` is understood (Hyper). */
  readonly arrowStream: boolean;
  /** The server reads Parquet itself, e.g. `external(path, FORMAT => 'parquet')` (Hyper). */
  readonly parquet: boolean;
  /**
   * A COMMIT is on disk when it returns (PostgreSQL). When false (Hyper writes a database out only
   * when it is unloaded), the core keeps committed files until `DbAdapter.checkpoint` resolves.
   */
  readonly durableCommit: boolean;
}

export type Row = Record<string, unknown>;

/** One connection, inside one transaction, for one file. */
export interface DbConnection {
  query<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a statement and resolves with the number of rows it affected (INSERT, server-side COPY). */
  execute(sql: string, params?: readonly unknown[]): Promise<number>;
  /**
   * Runs a `COPY ... FROM STDIN` statement and streams `source` into it.
   * Resolves with the number of rows the server reports; rejects with the server's error.
   */
  copyFrom(sql: string, source: AsyncIterable<Uint8Array | string>): Promise<number>;
  /** The table's columns, or `null` when it does not exist. */
  describeTable(table: TableName): Promise<TableColumn[] | null>;
}

/** A statement with its parameters, for the database to run later. */
export interface Statement {
  readonly text: string;
  readonly params?: readonly unknown[];
}

export interface TransactionOptions<T> {
  /**
   * The transaction's last statement, made from `fn`'s result. The pool may send it together with
   * COMMIT, one round trip for both: when it fails, the server turns that COMMIT into a ROLLBACK,
   * and the transaction rejects with the statement's error.
   */
  readonly last?: (result: T) => Statement;
}

/** A transaction whose BEGIN is already on its way to the server (see `DbPool.begin`). */
export interface BegunTransaction {
  /** Runs `fn` in it, as `DbPool.transaction` does; once. */
  transaction<T>(fn: (conn: DbConnection) => Promise<T>, options?: TransactionOptions<T>): Promise<T>;
  /**
   * Ends it unused and gives its connection back (resolves once it is back; never rejects). Does
   * nothing once `transaction` was called.
   */
  release(): Promise<void>;
}

/** A pool of connections for one watcher, sized to its `maxConcurrent`. */
export interface DbPool {
  /** Runs `fn` inside BEGIN/COMMIT on a connection of its own; ROLLBACK when `fn` throws. */
  transaction<T>(fn: (conn: DbConnection) => Promise<T>, options?: TransactionOptions<T>): Promise<T>;
  /**
   * Takes an idle connection and sends BEGIN on it at once, without waiting for the reply: the
   * round trip then overlaps the caller's own work (claiming files) instead of following it.
   * `undefined` when no connection is idle. The caller must use it or `release` it before it
   * waits on this pool for anything else (the pool may have no other connection to give).
   */
  begin?(): BegunTransaction | undefined;
  /** A statement outside any file's transaction (set-up, ledger look-ups). */
  query<T extends Row = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export interface DbAdapter {
  readonly name: string;
  readonly capabilities: DbCapabilities;
  /** SQL spelling of each logical type on this database. */
  sqlType(type: LogicalType): string;
  /**
   * Opens a pool of at most `maxConnections` connections (starting the server if it owns one).
   * `owner`: the watcher process's owner id (its lease), so that `endSessionsOf` can find them.
   */
  openPool(options: { readonly maxConnections: number; readonly owner?: string }): Promise<DbPool>;
  /**
   * Ends what the database sessions of `owner`, a process known to be dead, left running on the
   * server (Hyper: a COPY FROM STDIN whose client died, which hyperd never ends by itself and
   * which blocks the table). Returns how many sessions it ended. Present only where sessions can
   * outlive the process that opened them (a server shared with other processes).
   */
  endSessionsOf?(owner: string): Promise<number>;
  /**
   * Makes every commit so far durable (required when `capabilities.durableCommit` is false).
   * The core calls it with none of its transactions open, before deleting the files it covers.
   */
  checkpoint?(): Promise<void>;
  /**
   * A number that changes whenever the server restarted. With `durableCommit` false, a restart
   * loses what was committed since the last checkpoint: the core re-checks those files against
   * the ledger instead of deleting them.
   */
  epoch?(): number;
  /**
   * What the database waits for right now, when it cannot be used for a while without anything
   * being wrong (e.g. another program has the `.hyper` file open); undefined otherwise.
   */
  waitingFor?(): string | undefined;
  /** Human-readable description for logs and summaries, e.g. the `.hyper` path. */
  describe(): string;
  /** Releases everything the adapter started (pools, an embedded server). Idempotent. */
  close(): Promise<void>;
}
