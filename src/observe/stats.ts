/** Running counters of one watcher, updated in place as files are processed. */
import type { IngestError } from '../types.ts';

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
  /** Rows left out as bad (`onBadRows: 'skip'`), set aside in failed/<name>.rejected.csv. */
  rowsRejected: number;
  bytesIngested: number;
  /** ISO time of the last filesystem event or sweep that found work. */
  lastEventAt: string | null;
  lastError: LastError | null;
  maxConcurrent: number;
  /** Tasks (a file, or a group of small files in one transaction) being claimed or ingested; never above `maxConcurrent`. */
  inFlight: number;
  /** Ready files found and waiting for a slot. */
  queued: number;
  /** `readyWhen: 'stable'`: files seen that have not yet stayed unchanged for `stableMs` (or are held open for writing). */
  settling: number;
  /** Of those, how long the longest-waiting one has been seen changing, in seconds, as of the last look. */
  settlingLongestSeconds: number;
  /** Files of the watched directory that `include` / `exclude` leave alone, as of the last rescan. */
  ignored: number;
  /** Transient failures (database away) that were retried. */
  retries: number;
  /** Directory rescans (timer, lost events, queue overflow). */
  rescans: number;
  /** `.ready` files whose data file never appeared within the grace period. */
  orphans: number;
  /** Files left claimed by an earlier run and finished at start-up. */
  recovered: number;
  /** Claims taken over from processes that died (see README, Running several processes). */
  takenOver: number;
  /** Durability checkpoints (Hyper): committed files are removed after one. */
  checkpoints: number;
  /** Times the filesystem event source reported lost or failed events (each triggers a rescan). */
  lostEvents: number;
  /** Files skipped because the table already had their content (`skipDuplicateContent`). */
  duplicatesSkipped: number;
  /** Columns added to the table by schema evolution (`schemaEvolution: 'addColumns'`), each counted once. */
  columnsAdded: number;
  /** Seconds from claim to commit of each ingested file. */
  ingestSeconds: DurationHistogram;
  /**
   * What the database waits for now, e.g. another program holding the `.hyper` file (claimed files
   * are retried until it lets go); null when it waits for nothing.
   */
  readonly waitingFor: string | null;
}

/**
 * Upper bounds (seconds) of the ingest duration buckets: from small files on a local database
 * (milliseconds) to multi-gigabyte ones (minutes).
 */
export const INGEST_SECONDS_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** A Prometheus-style histogram: `counts[i]` observations fell in (bounds[i-1], bounds[i]]; the last is +Inf. */
export interface DurationHistogram {
  readonly bounds: readonly number[];
  readonly counts: number[];
  sum: number;
  count: number;
}

export function emptyHistogram(bounds: readonly number[] = INGEST_SECONDS_BUCKETS): DurationHistogram {
  return { bounds, counts: new Array<number>(bounds.length + 1).fill(0), sum: 0, count: 0 };
}

export function observe(histogram: DurationHistogram, value: number): void {
  let i = histogram.bounds.findIndex((b) => value <= b);
  if (i < 0) i = histogram.bounds.length;
  histogram.counts[i] = (histogram.counts[i] ?? 0) + 1;
  histogram.sum += value;
  histogram.count++;
}

export function emptyStats(maxConcurrent: number): WatcherStats {
  return {
    filesIngested: 0,
    filesFailed: 0,
    rowsIngested: 0,
    rowsRejected: 0,
    bytesIngested: 0,
    lastEventAt: null,
    lastError: null,
    maxConcurrent,
    inFlight: 0,
    queued: 0,
    settling: 0,
    settlingLongestSeconds: 0,
    ignored: 0,
    retries: 0,
    rescans: 0,
    orphans: 0,
    recovered: 0,
    takenOver: 0,
    checkpoints: 0,
    lostEvents: 0,
    duplicatesSkipped: 0,
    columnsAdded: 0,
    ingestSeconds: emptyHistogram(),
    waitingFor: null,
  };
}

/** Makes `stats.waitingFor` read the database's state live (a getter, so JSON carries it too). */
export function linkWaitingFor(stats: WatcherStats, waitingFor: (() => string | undefined) | undefined): void {
  if (!waitingFor) return;
  Object.defineProperty(stats, 'waitingFor', { get: () => waitingFor() ?? null, enumerable: true, configurable: true });
}

export function lastErrorOf(error: IngestError, file: string): LastError {
  return { file, code: error.code, message: error.message, at: new Date().toISOString() };
}
