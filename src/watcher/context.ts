/**
 * What the steps of one watcher share: its settings and adapters, read-only, and the few pieces
 * of state that belong to the watcher rather than to a file (the inbox, the table's description,
 * the commits waiting for a checkpoint). A file's own state never lives here: it travels as a
 * record (protocol/record.ts) through the steps' parameters and results.
 */
import { ContentGate } from '../content-gate.ts';
import type { OpenedFile } from '../files.ts';
import { type LedgerEntry, ledgerScratchPath } from '../ledger.ts';
import { Mutex } from '../mutex.ts';
import type { ResolvedOptions } from '../options.ts';
import type { PluginRegistry } from '../plugins.ts';
import type { WatcherStats } from '../stats.ts';
import type { BegunTransaction, ColumnSpec, DbAdapter, DbPool, IngestContext, Logger, TableName } from '../types.ts';
import type { Checkpoints } from './durability.ts';
import type { Inbox } from './discover.ts';
import type { TableKnowledge } from './attempt.ts';
import type { LeaseState } from './lease.ts';

/**
 * Claimed files are held open (the descriptor is what gets read) until their group settles: at
 * most this many across all tasks, so a backlog never runs the process out of descriptors.
 */
export const MAX_OPEN_CLAIMS = 512;

/** The watcher's life as the steps see it; the shell (handle.ts) owns and changes it. */
export interface Life {
  stopping: boolean;
  pool: DbPool | undefined;
  /** Aborted on stop: cuts backoff sleeps short. */
  readonly wake: AbortController;
  /** Tasks running now (a file, or a group, each from claim to settle). */
  readonly tasks: Set<Promise<void>>;
  /** Dispatch is held back while a checkpoint needs the database to itself. */
  paused: boolean;
  /** Start tasks for what is queued, once the events at hand are all in (see the shell). */
  readonly pumpSoon: () => void;
  /** Something finished: start what may start now and wake whoever waits for idleness. */
  readonly nudge: () => void;
}

export interface WatchContext {
  readonly dir: string;
  readonly table: TableName;
  /** `schema.table`, as the ledger and the logs name it. */
  readonly target: string;
  readonly db: DbAdapter;
  readonly plugins: PluginRegistry;
  readonly options: ResolvedOptions;
  readonly log: Logger;
  readonly staging: string;
  readonly failedDir: string;
  readonly stats: WatcherStats;
  readonly life: Life;
  readonly inbox: Inbox;
  readonly known: TableKnowledge;
  readonly checkpoints: Checkpoints;
  /** This process's identity and lease; `staging` is its own folder. */
  readonly lease: LeaseState;
  /** `skipDuplicateContent`: two tasks never ingest the same content at once. */
  readonly contentGate: ContentGate;
  /** Two failures never pick the same name in failed/. */
  readonly failLock: Mutex;
  /** Files inside a transaction, with when it began (epoch ms), for progress reports. */
  readonly active: Map<OpenedFile, number>;
  /** Each claimed file's task's early BEGIN, until a transaction takes it (see claim.ts). */
  readonly early: WeakMap<OpenedFile, { take(): BegunTransaction | undefined; release(): void; readonly sentAt: number }>;
}

export function newSharedState(): Pick<WatchContext, 'contentGate' | 'failLock' | 'active' | 'early'> {
  return { contentGate: new ContentGate(), failLock: new Mutex(), active: new Map(), early: new WeakMap() };
}

export function poolOf(ctx: WatchContext): DbPool {
  const pool = ctx.life.pool;
  if (!pool) throw new Error('the watcher has no connection pool (not started, or stopped)');
  return pool;
}

/** The server's epoch now (see `DbAdapter.epoch`). */
export function epochOf(ctx: WatchContext): number {
  return ctx.db.epoch?.() ?? 0;
}

/** Waits `ms`, or less when the watcher stops meanwhile. */
export function sleep(ctx: WatchContext, ms: number): Promise<void> {
  const signal = ctx.life.wake.signal;
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const wake = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', wake);
      resolve();
    }, ms);
    signal.addEventListener('abort', wake, { once: true });
  });
}

/** Files per task: `batchFiles`, within the bound on open claims. */
export function batchLimit(ctx: WatchContext): number {
  return Math.max(1, Math.min(ctx.options.batchFiles, Math.floor(MAX_OPEN_CLAIMS / ctx.options.maxConcurrent)));
}

/**
 * Where a transaction's ledger rows are written for the server to read (see recordAllInLedger),
 * named after `unique`; undefined to stream them. Only for a server that reads our files and
 * whose sessions can outlive us (a shared hyperd: its adapter can end a dead process's sessions):
 * an embedded hyperd ends with its process, and streaming there is a few per cent cheaper.
 */
export function ledgerFileOf(ctx: WatchContext, unique: string): string | undefined {
  return ctx.db.capabilities.readsLocalFiles && ctx.db.endSessionsOf ? ledgerScratchPath(ctx.staging, unique) : undefined;
}

/** `rowsRejected`: rows left out as bad; with `onBadRows: 'skip'` 0 when not given (a file of a group). */
export function ledgerEntry(ctx: WatchContext, file: OpenedFile, rows: number, rowsRejected?: number): LedgerEntry {
  const rejected = rowsRejected ?? (ctx.options.onBadRows === 'skip' ? 0 : undefined);
  return {
    claimId: file.claimId,
    fileName: file.name,
    fileSize: file.size,
    rows,
    targetTable: ctx.target,
    directory: ctx.dir,
    checksum: file.checksum,
    owner: ctx.lease.me.owner,
    ...(rejected === undefined ? {} : { rowsRejected: rejected }),
  };
}

/** What a plugin's `append` is told: the database's abilities, the schema policy, the attempt. */
export function ingestContext(ctx: WatchContext, attempt: number, fileState: Map<string, unknown>, added?: ColumnSpec[]): IngestContext {
  const { db, options } = ctx;
  return {
    capabilities: db.capabilities,
    sqlType: (t) => db.sqlType(t),
    schema: { createTable: options.createTable, evolution: options.schemaEvolution, sourceColumns: options.sourceColumns },
    logger: options.logger,
    attempt,
    fileState,
    startedAt: new Date(),
    ...(added ? { columnAdded: (column: ColumnSpec) => added.push(column) } : {}),
  };
}

/**
 * Opens every pooled connection now (at start, and after a checkpoint closed them), so the next
 * file does not pay for a connection set-up. Best effort: a failure here shows up, and is
 * handled, on the file's own transaction.
 */
export async function warm(ctx: WatchContext): Promise<void> {
  const pool = ctx.life.pool;
  if (!pool) return;
  await Promise.all(Array.from({ length: ctx.options.maxConcurrent }, () => pool.query('SELECT 1').catch(() => {})));
}
