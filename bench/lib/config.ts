/**
 * What the benchmark measures and against what: data-set sizes per mode, the reference figures,
 * and the targets. One place, so the table, the JSON and BENCHMARKS.md all say the same thing.
 */

export type Mode = 'full' | 'quick';

export interface Sizes {
  /** Rows of the bulk CSV, and of the Parquet and Arrow files made from it. */
  readonly bulkRows: number;
  /** Small-file flood: files and rows per file; one more file among them is bad on purpose. */
  readonly floodFiles: number;
  readonly floodRowsPerFile: number;
  /** Trickle: files, rows per file, milliseconds between two drops. */
  readonly trickleFiles: number;
  readonly trickleRowsPerFile: number;
  readonly trickleIntervalMs: number;
  /** Memory workloads: bytes of the big CSV and the big JSON-lines file. */
  readonly bigBytes: number;
  /** Backlog of ready files present when the watcher starts: a small and a large one. */
  readonly backlogSmall: number;
  readonly backlogLarge: number;
  /** Repeats of each timed figure (memory workloads run once). */
  readonly runs: number;
  /** Repeats of each case of the format set (files-own, files-other). */
  readonly formatRuns: number;
}

export const SIZES: Record<Mode, Sizes> = {
  full: {
    bulkRows: 1_000_000,
    floodFiles: 1000,
    floodRowsPerFile: 100,
    trickleFiles: 50,
    trickleRowsPerFile: 100,
    trickleIntervalMs: 200,
    bigBytes: 2 * 1024 ** 3,
    backlogSmall: 10_000,
    backlogLarge: 100_000,
    runs: 3,
    // Five: the median of five stays put when two runs of a case are hit by other work on the
    // machine; with three, one slow run of hyperd's own load moved a ratio by 0.2.
    formatRuns: 5,
  },
  // About a minute: the same shapes, smaller where a full size takes long. The report says so.
  quick: {
    bulkRows: 1_000_000,
    floodFiles: 1000,
    floodRowsPerFile: 100,
    trickleFiles: 25,
    trickleRowsPerFile: 100,
    trickleIntervalMs: 200,
    bigBytes: 64 * 1024 ** 2,
    backlogSmall: 100,
    backlogLarge: 1_000,
    runs: 1,
    formatRuns: 1,
  },
};

/** The seed of every generated data set: the same bytes on every run. */
export const SEED = 20261129;

/**
 * Figures measured for the reference watcher, hyperdb-mcp 0.7.3 (Rust), on a 2-core machine of
 * this kind, median of 3 runs (from the performance issue). Not re-measured by this bench.
 */
export const REFERENCE = {
  label: 'hyperdb-mcp 0.7.3, 2-core machine, median of 3, measured on another day',
  bulkCsvSeconds: { scratch: 1.19, persistent: 1.34 },
  bulkCsvHyperdCopySeconds: 0.59,
  floodSeconds: { scratch: 2.1, persistent: 6.6 },
  trickleMs: { scratch: { p50: 8.6, p95: 11.4 }, persistent: { p50: 11.7, p95: 15.3 } },
  parquetSeconds: 0.96,
  parquetHyperdExternalSeconds: 0.69,
  arrowSeconds: 1.61,
  /** All reference files hold 1,000,000 rows. */
  rows: 1_000_000,
} as const;

/** The targets, each checked on figures measured side by side in one run. */
export const TARGETS = {
  /** hyperwatch rows/s over the raw load's rows/s, same file, same kind of pre-created table. */
  bulkCsvVsHyperd: 0.9,
  floodFilesPerSecond: 2000,
  trickleP50Ms: 8,
  trickleP95Ms: 15,
  /** Format set: hyperwatch rows/s over hyperd's fastest own load of the same file, per case. */
  formatVsHyperd: 0.95,
  /** hyperwatch rows/s over the reference's rows/s (figures from another day). */
  parquetVsReference: 1.1,
  arrowVsReference: 1.5,
  peakRssMb: 200,
  /** Peak RSS with the large backlog over peak RSS with the small one. */
  backlogGrowth: 1.15,
} as const;
