/**
 * hyperwatch: a directory watcher that appends dropped files to a database table, exactly once.
 * @module
 */
export { DropError, dropFile, type DropData, type DropResult, fsyncDirectory } from './producer/drop.ts';
export { replayFailed, type ReplayResult } from './producer/replay.ts';
export { exportExtract, type ExportOptions, ExportRefused, type ExportResult } from './export/extract.ts';
export { findWatcher, openWatcher, startWatching, stopWatching, WatchConfigError } from './api.ts';
export { CHECK_ROWS, type CheckedColumn, checkFile, type CheckOptions, type CheckResult, type TableFit } from './check/check-file.ts';
export {
  DEFAULT_MAX_CONCURRENT,
  FAILED_DIR,
  FENCE_TABLE,
  LEASE_TABLE,
  LEDGER_TABLE,
  MAX_CONCURRENT_LIMIT,
  OWN_SCHEMA,
  READY_SUFFIX,
  STAGING_DIR,
} from './constants.ts';
export { fromDbError, ingestError, IngestFailure, isIngestFailure } from './errors.ts';
export { lineLogger, silentLogger } from './log.ts';
export { clampMaxConcurrent, type WatchOptions } from './options.ts';
export { defineIngester, DuplicateExtensionError, PluginRegistry } from './plugins.ts';
export { defaultRegistry, DuplicateWatcherError, WatcherRegistry, type WatcherStatus } from './registry.ts';
export { checkHeaderNames, columnList, createTable, matchColumns } from './columns/schema.ts';
export { parseTableName, qualifiedName, quoteIdent, quoteLiteral, standardSqlType } from './columns/sql.ts';
export { parseSqlType, type SqlType } from './columns/sql-types.ts';
export { fitsColumn, TYPE_FIT, type TypeFit, typeFit } from './columns/type-policy.ts';
export { INGEST_SECONDS_BUCKETS, type DurationHistogram, type LastError, type WatcherStats } from './observe/stats.ts';
export type * from './types.ts';
export { WatcherHandle, type WatchSummary } from './watcher/handle.ts';
export { createHyperAdapter, type HyperAdapter, type HyperAdapterOptions } from '../adapters/db/hyper/index.ts';
export { createPostgresAdapter, type PostgresAdapter, type PostgresAdapterOptions } from '../adapters/db/postgres/index.ts';
export { denoFsAdapter } from '../adapters/fs/deno/index.ts';
export { nodeFsAdapter } from '../adapters/fs/node/index.ts';
export { pollFsAdapter, type PollFsOptions } from '../adapters/fs/poll/index.ts';
export { parcelFsAdapter } from '../adapters/fs/parcel/index.ts';
export { arrowIngester } from '../plugins/arrow/index.ts';
export { csvIngester } from '../plugins/csv/index.ts';
export { jsonIngester } from '../plugins/json/index.ts';
export { parquetIngester } from '../plugins/parquet/index.ts';
