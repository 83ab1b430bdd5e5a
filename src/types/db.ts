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
  /**
   * A transaction that rolls back keeps the DDL it ran (Hyper: its CREATE TABLE and ADD COLUMN
   * stay). Absent or false: DDL rolls back with the rest (PostgreSQL); the core then never drops
   * a table after a failed file, since one there now was made by someone else.
   */
  readonly ddlSurvivesRollback?: boolean;
  /**
   * A table a large COPY just filled reads back only in part inside that same transaction
   * (hyperd 9.1: 68,928 of 200,000 rows). The keyed load modes then stage a file in a transaction
   * of its own and apply it from there. Absent or false: one transaction does both.
   */
  readonly partialReadBack?: boolean;
  /**
   * A staging table's rows read back in the order they were loaded (`ORDER BY ctid`, PostgreSQL):
   * the last of two rows with one key can win, and a NULL key can be named by its line.
   */
  readonly rowsInLoadOrder?: boolean;
}

/** Rows of one table picked by one column's value, for `DbAdapter.endRowLockHolders`. */
export interface RowsOf {
  /** The table as SQL names it (quoted, and qualified when it has a schema). */
  readonly table: string;
  /** A column of it (unquoted). */
  readonly column: string;
  readonly value: string;
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
  /**
   * Runs a `COPY (...) TO STDOUT` statement and yields what the server sends as it arrives; the
   * iteration returns the number of rows the server reports. Optional: the adapters that speak
   * the PostgreSQL wire protocol have it (`hyperwatch export` reads a table through it).
   */
  copyTo?(sql: string): AsyncGenerator<Uint8Array, number>;
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
   * Ends what the database sessions of `owner`, a process known to be dead or whose lease
   * expired, left running on the server (Hyper: a COPY FROM STDIN whose client died, which hyperd
   * never ends by itself and which blocks the table; PostgreSQL: the sessions of a process frozen
   * past its lease, whose open transactions hold their locks for as long as it stays frozen).
   * Returns how many sessions it ended. Present only where sessions can outlive the process that
   * opened them, or its lease (a server shared with other processes).
   */
  endSessionsOf?(owner: string): Promise<number>;
  /**
   * Bounds how long the statements of the transaction on `conn` wait for a row lock another
   * transaction holds: past `ms` they fail. Present where an UPDATE of a row another open
   * transaction has updated waits for it to end (PostgreSQL); absent where it fails at once
   * (Hyper: a serialization failure, 40001). The core bounds its takeover of a dead process's
   * lease this way, so that a frozen transaction of that process cannot hold the takeover.
   */
  limitLockWait?(conn: DbConnection, ms: number): Promise<void>;
  /**
   * Ends the sessions, other than the caller's, whose open transaction holds a row lock on one
   * of `rows` (a transaction frozen between its update of such a row and its COMMIT), through
   * `pool`; returns how many it ended. Present with `limitLockWait`.
   */
  endRowLockHolders?(pool: DbPool, rows: RowsOf): Promise<number>;
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
  /**
   * The file format version of the database, known once a pool was opened: a `.hyper` file's
   * version decides which Tableau releases open it. Undefined when unknown; absent where a
   * database has none (PostgreSQL).
   */
  databaseVersion?(): number | undefined;
  /** Human-readable description for logs and summaries, e.g. the `.hyper` path. */
  describe(): string;
  /** Releases everything the adapter started (pools, an embedded server). Idempotent. */
  close(): Promise<void>;
}
