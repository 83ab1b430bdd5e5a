/** Running counters of one watcher, updated in place as files are processed. */
import type { IngestError } from './types.ts';

export interface LastError {
  readonly file: string;
  readonly code: string;
  readonly message: string;
  readonly at: string;
}

export interface WatcherStats {
  filesIngested: number;
  filesFailed: number;
  rowsIngested: number;
  bytesIngested: number;
  /** ISO time of the last filesystem event or sweep that found work. */
  lastEventAt: string | null;
  lastError: LastError | null;
  maxConcurrent: number;
  /** Tasks (a file, or a group of small files in one transaction) being claimed or ingested; never above `maxConcurrent`. */
  inFlight: number;
  /** Ready files found and waiting for a slot. */
  queued: number;
  /** Transient failures (database away) that were retried. */
  retries: number;
  /** Directory rescans (timer, lost events, queue overflow). */
  rescans: number;
  /** `.ready` files whose data file never appeared within the grace period. */
  orphans: number;
  /** Files left claimed by an earlier run and finished at start-up. */
  recovered: number;
  /** Durability checkpoints (Hyper): committed files are removed after one. */
  checkpoints: number;
}

export function emptyStats(maxConcurrent: number): WatcherStats {
  return {
    filesIngested: 0,
    filesFailed: 0,
    rowsIngested: 0,
    bytesIngested: 0,
    lastEventAt: null,
    lastError: null,
    maxConcurrent,
    inFlight: 0,
    queued: 0,
    retries: 0,
    rescans: 0,
    orphans: 0,
    recovered: 0,
    checkpoints: 0,
  };
}

export function lastErrorOf(error: IngestError, file: string): LastError {
  return { file, code: error.code, message: error.message, at: new Date().toISOString() };
}
