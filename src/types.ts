/**
 * The small contracts between the core and its adapters and plugins. Everything a third party
 * implements (an ingester plugin, a DB adapter, an FS adapter) is described here.
 */
import type { ResultAsync } from 'neverthrow';

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * What went wrong, by what the operator should do about it:
 * - `data`: the file's content is wrong (fix the producer, then replay the file);
 * - `schema`: the file does not fit the table (columns or types);
 * - `io`: the file could not be read;
 * - `security`: the data file was a symlink, FIFO, device or directory, or was swapped;
 * - `transient`: the database was away; retried, never a reason to fail a file;
 * - `config`: the watcher itself is misconfigured (unknown extension, bad table name).
 */
export const ERROR_KINDS = ['data', 'schema', 'io', 'security', 'transient', 'config'] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** A failure, as a value. Serialized as-is (minus `cause`) into `failed/<name>.error`. */
export interface IngestError {
  readonly kind: ErrorKind;
  /** Stable machine-readable code, e.g. `CSV_HEADER_MISMATCH`, `EMPTY_FILE`, `DB_22P02`. */
  readonly code: string;
  readonly message: string;
  /** What the operator should do about it. */
  readonly hint: string;
  /** The data file's name as the producer dropped it. */
  readonly file?: string;
  /** 1-based line (CSV, JSON lines) or record number where known. */
  readonly line?: number;
  /** 1-based column number or column name where known. */
  readonly column?: number | string;
  /**
   * Set by a plugin when a fresh transaction can succeed where this one failed, e.g. after
   * widening a column type it had inferred. The core retries at once (a few times at most), and
   * `IngestContext.fileState` carries what the plugin learned to the next attempt.
   */
  readonly retry?: { readonly reason: string };
  /** SQLSTATE when the database reported the error. */
  readonly sqlState?: string;
  /** The statement the database rejected. */
  readonly sql?: string;
  readonly cause?: unknown;
}

// ---------------------------------------------------------------------------------------------
// Tables and types
// ---------------------------------------------------------------------------------------------

/** A validated, unquoted table name. */
export interface TableName {
  readonly schema?: string;
  readonly name: string;
}

/**
 * Column types hyperwatch creates, independent of the database. Each DB adapter maps them to
 * its own SQL (see `SqlTypeMap`). Decimal carries precision and scale.
 */
export type LogicalType =
  | { readonly kind: 'boolean' }
  | { readonly kind: 'smallint' }
  | { readonly kind: 'integer' }
  | { readonly kind: 'bigint' }
  | { readonly kind: 'real' }
  | { readonly kind: 'double' }
  | { readonly kind: 'decimal'; readonly precision: number; readonly scale: number }
  | { readonly kind: 'text' }
  | { readonly kind: 'json' }
  | { readonly kind: 'bytes' }
  | { readonly kind: 'date' }
  | { readonly kind: 'time' }
  | { readonly kind: 'timestamp' }
  | { readonly kind: 'timestamptz' }
  | { readonly kind: 'interval' };

export interface ColumnSpec {
  readonly name: string;
  readonly type: LogicalType;
}

/** A column of an existing table, as the database describes it. */
export interface TableColumn {
  readonly name: string;
  /** The database's own spelling of the type, e.g. `bigint`, `numeric(18,3)`. */
  readonly sqlType: string;
  readonly nullable: boolean;
}

// ---------------------------------------------------------------------------------------------
// DB adapter
// ---------------------------------------------------------------------------------------------

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
  /** Opens a pool of at most `maxConnections` connections (starting the server if it owns one). */
  openPool(options: { readonly maxConnections: number }): Promise<DbPool>;
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

// ---------------------------------------------------------------------------------------------
// The claimed file, as plugins see it
// ---------------------------------------------------------------------------------------------

/**
 * A data file the watcher has claimed: moved into its private staging folder and opened without
 * following symlinks. Plugins read it only through this object, never through the producer's path.
 */
export interface ClaimedFile {
  /** The name the producer gave it, e.g. `orders-0001.csv`. */
  readonly name: string;
  /** The plugin extension it matched, lower-case with the dot, e.g. `.csv`. */
  readonly extension: string;
  readonly size: number;
  readonly mtimeMs: number;
  /** Unique id given at claim time; the ledger records it. */
  readonly claimId: string;
  /**
   * Path of the claimed copy inside the staging folder. Only the watcher writes there; a database
   * with `readsLocalFiles` may read it directly.
   */
  readonly stagedPath: string;
  /** The file's bytes from the descriptor opened at claim time, in large chunks. */
  stream(options?: { readonly start?: number; readonly end?: number }): AsyncIterable<Uint8Array>;
  /** Reads `length` bytes at `position` (fewer at end of file). */
  read(position: number, length: number): Promise<Uint8Array>;
}

// ---------------------------------------------------------------------------------------------
// Ingester plugins
// ---------------------------------------------------------------------------------------------

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** How a file may change the target table. */
export interface SchemaPolicy {
  /** Create the table from the file when it does not exist (default true). */
  readonly createTable: boolean;
  /**
   * A file with columns the table lacks: `fail` it (the default), or `addColumns` (nullable, typed
   * as for a new table) before loading it.
   */
  readonly evolution?: SchemaEvolution;
  /** Columns the watcher fills itself on every row (none by default). */
  readonly sourceColumns?: SourceColumns;
}

export const SCHEMA_EVOLUTIONS = ['fail', 'addColumns'] as const;
export type SchemaEvolution = (typeof SCHEMA_EVOLUTIONS)[number];

/**
 * Columns filled by the watcher, named by the user: `file` the data file's name as dropped (text),
 * `claim` its claim id, as in the ledger (text), `committed` when the transaction that loaded it
 * began (timestamptz; one value for every file of a transaction).
 */
export interface SourceColumns {
  readonly file?: string;
  readonly claim?: string;
  readonly committed?: string;
}

export interface IngestContext {
  readonly capabilities: DbCapabilities;
  /** 1 for the first attempt at this file, then 2, 3, ... */
  readonly attempt: number;
  /** Kept across the attempts at one file (see `IngestError.retry`); empty on the first. */
  readonly fileState: Map<string, unknown>;
  readonly sqlType: (type: LogicalType) => string;
  readonly schema: SchemaPolicy;
  readonly logger: Logger;
  /** When this attempt's transaction began: the value of a `committed` source column. */
  readonly startedAt?: Date;
  /** A plugin added `column` to the table (schema evolution): the core logs and counts it once committed. */
  readonly columnAdded?: (column: ColumnSpec) => void;
  /**
   * Present when bad rows are to be skipped (`onBadRows: 'skip'`) and the file is ingested alone:
   * a plugin that can tell one bad row from the rest leaves such rows out of the load and hands
   * them here; without it, a bad row fails the file.
   */
  readonly badRows?: BadRowSink;
}

/** A row left out of the load: where it is in the file, why, and its text as it was. */
export interface RejectedRow {
  /** 1-based line in the file where the row starts (the header is line 1). */
  readonly line: number;
  readonly reason: string;
  readonly record: string;
}

/** Where a plugin puts the rows it leaves out (see `IngestContext.badRows`). */
export interface BadRowSink {
  /**
   * Sets a row aside (written to the rejected-rows file before the commit). Rejects with an
   * `IngestFailure` once more rows were rejected than `maxBadRows` allows: the file then fails.
   */
  reject(row: RejectedRow): Promise<void>;
  /** Rows rejected so far in this attempt. */
  readonly rejected: number;
}

export interface AppendResult {
  readonly rows: number;
}

/** Why `appendMany` failed; `index` is the file (in the list it was given) the failure belongs to, when known. */
export interface AppendManyError {
  readonly error: IngestError;
  readonly index?: number;
}

/**
 * An ingester: appends one claimed file to a table. It runs inside a transaction the core opens
 * and commits; it never moves or deletes files, and reports failures as values.
 */
export interface IngesterPlugin {
  readonly name: string;
  /** Lower-case, with the dot: `['.csv', '.tsv']`. Longest match wins (`.csv.gz` over `.gz`). */
  readonly extensions: readonly string[];
  append(
    conn: DbConnection,
    file: ClaimedFile,
    table: TableName,
    ctx: IngestContext,
  ): ResultAsync<AppendResult, IngestError>;
  /**
   * Optional: appends several small claimed files at once (e.g. one multi-file COPY) inside one
   * transaction the core opens, with one ledger row per file. Resolves with each file's result,
   * in order; each `rows` must be that file's own row count. When it fails, the core rolls back
   * and splits the group (the file at `index` alone, or in parts when no index is given) until
   * every bad file has failed on its own through `append`. Without it, the core calls `append`
   * once per file, in the same transaction.
   */
  appendMany?(
    conn: DbConnection,
    files: readonly ClaimedFile[],
    table: TableName,
    ctx: IngestContext,
  ): ResultAsync<readonly AppendResult[], AppendManyError>;
}

// ---------------------------------------------------------------------------------------------
// FS adapter
// ---------------------------------------------------------------------------------------------

/** A batch of names that appeared or changed in the watched directory (no path, no kind). */
export type FsEventHandler = (names: readonly string[]) => void;

export interface FsSubscription {
  close(): Promise<void>;
}

export interface FsAdapter {
  readonly name: string;
  /** True when events can be dropped (overflow, network filesystems): the core then rescans. */
  readonly mayLoseEvents: boolean;
  /**
   * Watches `dir` (not recursively). `onError` reports a failure of the watch itself; the core
   * answers with a rescan.
   */
  subscribe(dir: string, onEvents: FsEventHandler, onError: (error: unknown) => void): Promise<FsSubscription>;
}
