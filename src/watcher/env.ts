/**
 * A watcher's environment: its settings, adapters, logger and paths, built once at construction
 * and never changed. Every step reads it; none writes it. The counters (`stats`) are a sink like
 * the logger: each step adds what it saw. The watcher's changing state is elsewhere, in objects
 * that each change only through their own methods (see watch.ts).
 */
import { join } from 'node:path';
import { FAILED_DIR } from '../constants.ts';
import type { OpenedFile } from '../protocol/files.ts';
import type { Identity } from '../store/lease.ts';
import { type LedgerEntry, ledgerScratchPath } from '../store/ledger.ts';
import type { ResolvedOptions } from '../options.ts';
import type { PluginRegistry } from '../plugins.ts';
import { tableLabel } from '../columns/sql.ts';
import type { WatcherStats } from '../observe/stats.ts';
import type { ColumnSpec, DbAdapter, IngestContext, Logger, TableName } from '../types.ts';
import { MAX_OPEN_CLAIMS } from './limits.ts';
import { fileSelection, type Selection } from './select.ts';

export interface WatchEnv {
  readonly dir: string;
  readonly table: TableName;
  /** `schema.table`, as the ledger and the logs name it. */
  readonly target: string;
  readonly db: DbAdapter;
  readonly plugins: PluginRegistry;
  readonly options: ResolvedOptions;
  readonly log: Logger;
  readonly stats: WatcherStats;
  /** Who this process is, as its lease row says (see lease.ts). */
  readonly me: Identity;
  /** `.hyperwatch/staging`: every process's folder is in here. */
  readonly stagingRoot: string;
  /** This process's own folder in `stagingRoot`, named after its owner id. */
  readonly staging: string;
  readonly failedDir: string;
  /** `include` / `exclude`, compiled (select.ts). */
  readonly selected: Selection;
}

export interface WatchEnvParts {
  readonly dir: string;
  readonly table: TableName;
  readonly db: DbAdapter;
  readonly plugins: PluginRegistry;
  readonly options: ResolvedOptions;
  readonly stats: WatcherStats;
  readonly me: Identity;
  readonly stagingRoot: string;
}

export function watchEnv(parts: WatchEnvParts): WatchEnv {
  return {
    ...parts,
    target: tableLabel(parts.table),
    log: parts.options.logger,
    staging: join(parts.stagingRoot, parts.me.owner),
    failedDir: join(parts.dir, FAILED_DIR),
    selected: fileSelection(parts.options),
  };
}

/** `stableMs` when files are taken as stable (`readyWhen: 'stable'`); undefined with sentinels. */
export function stableMsOf(env: WatchEnv): number | undefined {
  return env.options.readyWhen === 'stable' ? env.options.stableMs : undefined;
}

/** The server's epoch now (see `DbAdapter.epoch`). */
export function epochOf(env: WatchEnv): number {
  return env.db.epoch?.() ?? 0;
}

/**
 * Files per task (and per group): `batchFiles`, within the bound on open claims. One in the
 * modes other than append on a database that does not read back in full what its own
 * transaction wrote (hyperd 9.1, see `partialReadBack`): a file of a group applied by key, or
 * replacing the table, would act on rows an earlier file of the same transaction wrote.
 */
export function batchLimit(env: Pick<WatchEnv, 'options' | 'db'>): number {
  const { options, db } = env;
  if (options.mode !== 'append' && db.capabilities.partialReadBack === true) return 1;
  return Math.max(1, Math.min(options.batchFiles, Math.floor(MAX_OPEN_CLAIMS / options.maxConcurrent)));
}

/**
 * Where a transaction's ledger rows are written for the server to read (see recordAllInLedger),
 * named after `unique`; undefined to stream them. Only for a server that reads our files and
 * whose sessions can outlive us (a shared hyperd: its adapter can end a dead process's sessions):
 * an embedded hyperd ends with its process, and streaming there is a few per cent cheaper.
 */
export function ledgerFileOf(env: WatchEnv, unique: string): string | undefined {
  return env.db.capabilities.readsLocalFiles && env.db.endSessionsOf ? ledgerScratchPath(env.staging, unique) : undefined;
}

/** `rowsRejected`: rows left out as bad; with `onBadRows: 'skip'` 0 when not given (a file of a group). */
export function ledgerEntry(env: WatchEnv, file: OpenedFile, rows: number, rowsRejected?: number): LedgerEntry {
  const rejected = rowsRejected ?? (env.options.onBadRows === 'skip' ? 0 : undefined);
  return {
    claimId: file.claimId,
    fileName: file.name,
    fileSize: file.size,
    rows,
    targetTable: env.target,
    directory: env.dir,
    checksum: file.checksum,
    owner: env.me.owner,
    ...(rejected === undefined ? {} : { rowsRejected: rejected }),
  };
}

/** What a plugin's `append` is told: the database's abilities, the schema policy, the attempt. */
export function ingestContext(env: WatchEnv, attempt: number, fileState: Map<string, unknown>, added?: ColumnSpec[]): IngestContext {
  const { db, options } = env;
  return {
    capabilities: db.capabilities,
    sqlType: (t) => db.sqlType(t),
    schema: {
      createTable: options.createTable,
      evolution: options.schemaEvolution,
      sourceColumns: options.sourceColumns,
      partitionColumns: options.partitionColumns,
      ...(options.readyWhen === 'marker' ? { inMarkerFolder: true } : {}),
      columnTypes: options.columnTypes,
      allText: options.allText,
    },
    logger: options.logger,
    attempt,
    fileState,
    startedAt: new Date(),
    ...(added ? { columnAdded: (column: ColumnSpec) => added.push(column) } : {}),
  };
}
