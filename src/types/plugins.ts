/**
 * The contract an ingester plugin implements, and the context the core hands it for each file:
 * schema policy, bad-row sink, logger, retry state.
 */
import type { ResultAsync } from 'neverthrow';
import type { ClaimedFile } from './claimed-file.ts';
import type { DbCapabilities, DbConnection } from './db.ts';
import type { IngestError } from './errors.ts';
import type { ColumnSpec, LogicalType, TableName } from './tables.ts';

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
  /**
   * `partitionColumns`: the `key=value` folders of a file's path are columns the watcher fills
   * on its rows too (see `fileColumnSpecs` and `sourceValues` in the plugin kit).
   */
  readonly partitionColumns?: boolean;
  /**
   * `readyWhen: 'marker'`: a file's name starts with its marker folder (`job-7/date=2026-12-01/part-0.parquet`),
   * which is not a partition folder.
   */
  readonly inMarkerFolder?: boolean;
  /** Types given for columns by name (`zip: 'TEXT'`), in place of inferred ones, for new tables and added columns. */
  readonly columnTypes?: Readonly<Record<string, string>>;
  /** Every new column (of a new table, or added) TEXT, but those of `columnTypes`. */
  readonly allText?: boolean;
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
  append(conn: DbConnection, file: ClaimedFile, table: TableName, ctx: IngestContext): ResultAsync<AppendResult, IngestError>;
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
