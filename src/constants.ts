import type { TableName } from './types/tables.ts';

/** Suffix of the sentinel file: `orders.csv` is ready once `orders.csv.ready` exists. */
export const READY_SUFFIX = '.ready';

/**
 * Default ceiling on parallel ingests per watcher. Each parallel ingest holds one pooled
 * connection and one open transaction; most inboxes have fewer than four producers at a time.
 */
export const DEFAULT_MAX_CONCURRENT = 4;

/** Hard upper bound on `maxConcurrent`, so a typo cannot exhaust the database's connections. */
export const MAX_CONCURRENT_LIMIT = 32;

/**
 * Default most files per transaction when small files are ready at once. Measured on a persistent
 * .hyper (2 cores, 100-row CSV files): one multi-file COPY and one ledger INSERT per group make
 * the per-file cost a fraction of a millisecond, against several round trips per file alone.
 */
export const DEFAULT_BATCH_FILES = 100;

/** Files larger than this are committed on their own: grouping pays only for small files. */
export const BATCH_FILE_MAX_BYTES = 1 << 20;

/** Where failed files, their sentinels and `.error` reports go, inside the watched directory. */
export const FAILED_DIR = 'failed';

/** Where `onSuccess: 'archive'` moves ingested files by default, inside the watched directory. */
export const ARCHIVE_DIR = 'archive';

/**
 * The watcher's private folder inside the watched directory (same filesystem, so claiming a
 * file is an atomic rename). Dot-prefixed: producers' tools and the watcher itself ignore it.
 */
export const STATE_DIR = '.hyperwatch';

/** Claimed files wait here, under their claim id, until committed or failed. */
export const STAGING_DIR = `${STATE_DIR}/staging`;

/**
 * On a shared hyperd, each process lists its database sessions' cancel keys here, one file per
 * process, so that another can cancel what a dead one left running (see adapters/db/hyper/sessions.ts).
 */
export const SESSIONS_DIR = `${STATE_DIR}/sessions`;

/** Suffix of the JSON report written next to a failed file. */
export const ERROR_SUFFIX = '.error';

/**
 * The schema of hyperwatch's own tables, apart from the user's: a `.hyper` file that Tableau
 * publishes holds the user's table alone in its schema (Tableau Server up to 2021.3 takes only a
 * single-table extract). Not `hyperwatch`: the default search path, `"$user", public`, puts a
 * schema named like the role first, and `hyperwatch` is the role of the embedded hyperd's files
 * so far (and a likely PostgreSQL role): every unqualified `CREATE TABLE` that role ran (in
 * `hyperwatch query`, psql, a script) would land among these tables instead of in `public`.
 */
export const OWN_SCHEMA = 'hyperwatch_internal';

/** The ledger table: one row per committed file, written in the file's transaction. */
export const LEDGER_TABLE: TableName = { schema: OWN_SCHEMA, name: 'ingest_log' };

/** The lease table: one row per running watcher process (see lease.ts). */
export const LEASE_TABLE: TableName = { schema: OWN_SCHEMA, name: 'leases' };

/** The fence table: a few rows per process, updated by each of its file transactions. */
export const FENCE_TABLE: TableName = { schema: OWN_SCHEMA, name: 'fences' };

/** Where versions before the schema of their own kept those three (moved at start: own-layout.ts). */
export const OLD_LEDGER_TABLE: TableName = { schema: 'public', name: 'hyperwatch_ingest_log' };
export const OLD_LEASE_TABLE: TableName = { schema: 'public', name: 'hyperwatch_leases' };
export const OLD_FENCE_TABLE: TableName = { schema: 'public', name: 'hyperwatch_fences' };

/** How long a process's lease lasts without a heartbeat before another may take its files over. */
export const DEFAULT_LEASE_MS = 30_000;

/** The orders of year, month and day a CSV date style (`dateStyle`) can say. */
export const DATE_STYLES = ['YMD', 'DMY', 'MDY'] as const;
export type DateStyle = (typeof DATE_STYLES)[number];
