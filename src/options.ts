/** `WatchOptions`: every field optional, each with a default chosen for unattended operation. */
import { type BadRowLimit, type OnBadRows, parseMaxBadRows } from './bad-rows.ts';
import { DEFAULT_BATCH_FILES, DEFAULT_LEASE_MS, DEFAULT_MAX_CONCURRENT, MAX_CONCURRENT_LIMIT } from './constants.ts';
import { silentLogger } from './log.ts';
import type { WatcherRegistry } from './registry.ts';
import type { DbAdapter, FsAdapter, IngesterPlugin, Logger, SchemaEvolution, SourceColumns } from './types.ts';

export interface WatchOptions {
  /** Parallel ingests (each on its own pooled connection). Default 4; 0 means default; above 32 is clamped. */
  readonly maxConcurrent?: number;
  /**
   * The `.hyper` file on the embedded hyperd. Default `./hyperwatch.hyper`. Hyper's own settings:
   * read by the composition root (compose.ts) to build the adapter, never by the core.
   */
  readonly database?: string;
  /** `host:port` of an already running hyperd, instead of the embedded one (see `database`). */
  readonly endpoint?: string;
  /** A DB adapter instance; overrides `database` and `endpoint`. The caller closes it. */
  readonly db?: DbAdapter;
  /** Registry to register in. Default: the process-wide default registry. */
  readonly registry?: WatcherRegistry;
  /** Filesystem event source. Default: chosen per runtime (see README). */
  readonly fs?: FsAdapter;
  /** Extra ingester plugins; they replace built-ins for the extensions they list. */
  readonly plugins?: readonly IngesterPlugin[];
  readonly logger?: Logger;
  /** Create the table from the first file when it does not exist. Default true. */
  readonly createTable?: boolean;
  /** Rescan the directory this often, to catch anything events missed. Default 5000 ms. */
  readonly rescanIntervalMs?: number;
  /** Report a `.ready` whose data file is missing after this long. Default 30000 ms. */
  readonly orphanGraceMs?: number;
  /** On stop, wait this long for in-flight files before rolling them back. Default 30000 ms. */
  readonly stopTimeoutMs?: number;
  /** First and largest delay between retries of a transient failure. Default 100 ms and 10000 ms. */
  readonly retryDelayMs?: { readonly initial?: number; readonly max?: number };
  /** Ready files held in memory at most; more are found again by the next rescan. Default 10000. */
  readonly queueLimit?: number;
  /**
   * On a database whose commits are not durable at once (Hyper), a checkpoint runs this long
   * after the first file committed since the last one (default 1000 ms), or after this many files
   * (default 1000), whichever comes first. Committed files wait in staging until then.
   */
  readonly checkpointDelayMs?: number;
  readonly checkpointEvery?: number;
  /**
   * Most files committed together in one transaction when several small files (up to 1 MiB each)
   * are ready at once; each still gets its own ledger row, and a bad one still fails alone.
   * A lone file never waits for company. Default 100; 1 commits every file on its own.
   */
  readonly batchFiles?: number;
  /**
   * Skip a file whose content (SHA-256) this table already received: it is removed as if ingested,
   * with a ledger row of 0 rows naming its checksum. Off by default: two drops with identical
   * content are two files (producers do send identical batches).
   */
  readonly skipDuplicateContent?: boolean;
  /**
   * A file with columns the table lacks: `fail` it (default), or `addColumns`: add them as nullable
   * columns (typed as for a new table) before loading it; earlier rows read NULL there.
   */
  readonly schemaEvolution?: SchemaEvolution;
  /**
   * Columns the watcher fills on every row: `file` (the data file's name), `claim` (its claim id,
   * as in the ledger), `committed` (when its transaction began), each under the name given here,
   * e.g. `{ file: '_source_file' }`. None by default.
   */
  readonly sourceColumns?: SourceColumns;
  /**
   * `'skip'`: rows that do not parse or do not convert to their column are left out (CSV, JSON
   * lines), written to `failed/<name>.rejected.csv` (`.jsonl` for JSON) with their line and
   * reason, and the good rows commit. Default `'fail'`: a bad row fails the file.
   */
  readonly onBadRows?: OnBadRows;
  /**
   * With `onBadRows: 'skip'`, a file with more bad rows than this fails as a whole: a count
   * (`100`), or a fraction of the file's rows (`0.01`). Default: no limit.
   */
  readonly maxBadRows?: number;
  /**
   * What happens to a file and its sentinel once its commit is durable: `'delete'` (default)
   * removes them; `'archive'` moves them into `archiveDir`, under a name no earlier file holds.
   */
  readonly onSuccess?: OnSuccess;
  /** Where `'archive'` moves files: default `<dir>/archive`; relative paths are taken from `dir`. */
  readonly archiveDir?: string;
  /** Archive into one subfolder per day (UTC): `archive/2026-12-01/orders.csv`. Default false. */
  readonly archiveByDate?: boolean;
  /**
   * Read `X.csv.gz`, `X.jsonl.zst` and the like (gzip and zstd, by extension), decompressed as they
   * stream. Default true.
   */
  readonly compression?: boolean;
  /** A compressed file that inflates past this many bytes fails (a decompression bomb). Default 4 GiB. */
  readonly maxDecompressedBytes?: number;
  /**
   * The field delimiter of `.csv` files (one ASCII character, e.g. `';'` for spreadsheets' exports
   * in locales with a decimal comma); `.tsv` files are tab-separated. Unset: a comma, and a `.csv`
   * whose header is one field that `;`, tab or `|` split evenly on every line fails as
   * `CSV_DELIMITER` instead of loading whole lines into one column.
   */
  readonly csvDelimiter?: string;
  /**
   * The character set of text files (CSV, TSV, JSON, JSON lines), e.g. `'windows-1252'` for what
   * spreadsheets save as "CSV" in much of Europe and the Americas, `'shift_jis'`, `'utf-16le'`;
   * decoded to UTF-8 as they stream. Default UTF-8, read as it is.
   */
  readonly encoding?: string;
  /**
   * Several processes may watch one directory (README: Running several processes). Each renews a
   * lease in the database every third of this; when one stops renewing for this long, another
   * takes its claimed files over. Default 30000 ms.
   */
  readonly leaseMs?: number;
  /**
   * Stops the watcher when aborted, as `stop()` does, also while it is still starting (a long
   * recovery or initial sweep): `openWatcher` then resolves with the handle, stopped or stopping.
   * The CLI aborts it on SIGINT/SIGTERM.
   */
  readonly signal?: AbortSignal;
}

export const ON_SUCCESS = ['delete', 'archive'] as const;
export type OnSuccess = (typeof ON_SUCCESS)[number];

/** Default `maxDecompressedBytes`: far beyond any real file, far below a full disk. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 4 * 1024 ** 3;

/** 0, missing or not a number → the default; below 1 → 1; above the limit → the limit. */
export function clampMaxConcurrent(value: number | undefined): number {
  if (value === undefined || !Number.isFinite(value) || value === 0) return DEFAULT_MAX_CONCURRENT;
  return Math.min(MAX_CONCURRENT_LIMIT, Math.max(1, Math.floor(value)));
}

export interface ResolvedOptions {
  readonly maxConcurrent: number;
  readonly logger: Logger;
  readonly createTable: boolean;
  readonly rescanIntervalMs: number;
  readonly orphanGraceMs: number;
  readonly stopTimeoutMs: number;
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  readonly queueLimit: number;
  readonly checkpointDelayMs: number;
  readonly checkpointEvery: number;
  readonly batchFiles: number;
  readonly skipDuplicateContent: boolean;
  readonly schemaEvolution: SchemaEvolution;
  readonly sourceColumns: SourceColumns;
  readonly onBadRows: OnBadRows;
  readonly maxBadRows: BadRowLimit;
  readonly onSuccess: OnSuccess;
  /** As given (absolute, or relative to the watched directory); undefined for the default. */
  readonly archiveDir: string | undefined;
  readonly archiveByDate: boolean;
  readonly compression: boolean;
  readonly maxDecompressedBytes: number;
  readonly leaseMs: number;
}

export function resolveOptions(options: WatchOptions): ResolvedOptions {
  return {
    maxConcurrent: clampMaxConcurrent(options.maxConcurrent),
    logger: options.logger ?? silentLogger,
    createTable: options.createTable ?? true,
    rescanIntervalMs: Math.max(10, options.rescanIntervalMs ?? 5000),
    orphanGraceMs: Math.max(0, options.orphanGraceMs ?? 30000),
    stopTimeoutMs: Math.max(0, options.stopTimeoutMs ?? 30000),
    retryInitialMs: Math.max(1, options.retryDelayMs?.initial ?? 100),
    retryMaxMs: Math.max(1, options.retryDelayMs?.max ?? 10000),
    queueLimit: Math.max(1, options.queueLimit ?? 10000),
    checkpointDelayMs: Math.max(0, options.checkpointDelayMs ?? 1000),
    checkpointEvery: Math.max(1, options.checkpointEvery ?? 1000),
    batchFiles: Math.max(1, Math.floor(options.batchFiles ?? DEFAULT_BATCH_FILES)),
    skipDuplicateContent: options.skipDuplicateContent === true,
    schemaEvolution: options.schemaEvolution === 'addColumns' ? 'addColumns' : 'fail',
    sourceColumns: options.sourceColumns ?? {},
    ...badRowOptions(options),
    onSuccess: options.onSuccess === 'archive' ? 'archive' : 'delete',
    archiveDir: options.archiveDir,
    archiveByDate: options.archiveByDate === true,
    compression: options.compression !== false,
    maxDecompressedBytes: Math.max(1, options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES),
    leaseMs: Math.max(300, Math.floor(options.leaseMs ?? DEFAULT_LEASE_MS)),
  };
}

function badRowOptions(options: WatchOptions): { onBadRows: OnBadRows; maxBadRows: BadRowLimit } {
  const onBadRows = options.onBadRows ?? 'fail';
  if (onBadRows !== 'fail' && onBadRows !== 'skip') throw new TypeError(`onBadRows must be 'fail' or 'skip', got ${String(onBadRows)}`);
  const parsed = parseMaxBadRows(options.maxBadRows);
  if ('error' in parsed) throw new TypeError(parsed.error);
  return { onBadRows, maxBadRows: parsed.limit };
}
