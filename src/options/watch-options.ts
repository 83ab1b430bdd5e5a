/**
 * The types of the settings a watcher takes: `WatchOptions` (the API; every field optional, each
 * with a default chosen for unattended operation) and the database settings that only the CLI and
 * serve configs take. Each is declared once more, with its default, check, flag, serve key and doc,
 * in the option table (table.ts); the compiler holds the two to the same names.
 */
import type { OnBadRows } from '../columns/bad-rows.ts';
import type { AdapterName } from '../compose.ts';
import type { WatcherRegistry } from '../registry.ts';
import type { ApplyOrder, DuplicateKeys, LoadMode } from './load-modes.ts';
import type { DbAdapter, FsAdapter, IngesterPlugin, Logger, SchemaEvolution, SourceColumns } from '../types.ts';
import type { DatabaseVersion, EndpointReadsFiles } from '../../adapters/db/hyper/index.ts';
import { DATE_STYLES, type DateStyle } from '../constants.ts';
import type { CsvFileSettings } from '../types/csv-dialect.ts';

export { DATE_STYLES, type DateStyle };

/**
 * How CSV and TSV files write their values (README: "CSV dialects"). The field delimiter
 * (`csvDelimiter`) and character set (`encoding`) are with the other options below.
 */
/** The settings of how CSV files (and, for NULL markers and dates, JSON files) are written: src/types/csv-dialect.ts. */
export type CsvOptions = CsvFileSettings;

export interface WatchOptions extends CsvOptions {
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
  /**
   * When a data file is taken: `'sentinel'` (default) once its `X.ready` is there; `'stable'` once
   * its size and modification time have not changed for `stableMs` (for producers that cannot write
   * a sentinel: SFTP and SMB uploads, a person saving from a spreadsheet); `'marker'` a whole
   * subfolder once it holds its `marker` file (Spark's `_SUCCESS`). See the README's
   * "Producers that cannot write .ready" for what `'stable'` cannot promise.
   */
  readonly readyWhen?: ReadyWhen;
  /**
   * `readyWhen: 'marker'`: the file that completes a subfolder of the watched directory (default
   * `_SUCCESS`). The folder's data files (recursively) then land in one transaction, or none does.
   */
  readonly marker?: string;
  /** `readyWhen: 'stable'`: how long a file must stay unchanged before it is taken. Default 5000 ms. */
  readonly stableMs?: number;
  /**
   * Globs over the path relative to the watched directory (`'*.csv'`, `'orders_*'`): when given,
   * only files matching one of them are taken; the others are left alone (never claimed, failed or
   * counted as files). In sentinel mode the data file's name is matched, not its `.ready`.
   */
  readonly include?: readonly string[];
  /** Globs as for `include`: files matching one of them are left alone, even when `include` matches them. */
  readonly exclude?: readonly string[];
  /**
   * Take data files in subfolders too (`a/b/x.csv`, with `a/b/x.csv.ready` next to it in sentinel
   * mode), not only in the watched directory itself; never in `failed/`, the archive, dot-folders,
   * or through symbolic links. A file is named by its path relative to the watched directory
   * (ledger, `failed/a/b/x.csv`, archive, history). Empty subfolders are removed once they have
   * stayed empty for `orphanGraceMs`. Default false.
   */
  readonly recursive?: boolean;
  /**
   * With `recursive`: the `key=value` folders between the watched directory and a file
   * (`date=2026-12-01/region=eu/part-0.parquet`, as Hive, Spark and DuckDB write them) become
   * columns `key` with `value` on every row, typed DATE, BIGINT or TEXT as the value reads,
   * percent-escapes decoded, `__HIVE_DEFAULT_PARTITION__` NULL. A file in a folder that is not
   * `key=value` fails. Default false.
   */
  readonly partitionColumns?: boolean;
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
   * Types for columns by name, in place of the inferred ones, when a CSV or JSON file creates the
   * table or adds a column: any SQL type the database has, e.g. `{ zip: 'TEXT', amount:
   * 'NUMERIC(12,2)' }` (a zip code `00501` inferred as a number loses its zeros). A type the
   * database does not have stops the watcher from starting. Existing columns keep their types.
   */
  readonly columnTypes?: Readonly<Record<string, string>>;
  /** Every column a CSV or JSON file creates (new table, or added) is TEXT, but those of `columnTypes`. Default false. */
  readonly allText?: boolean;
  /**
   * What a file does to the table: `'append'` its rows (default); `'replace'`: it becomes the
   * table's whole content; `'upsert'`: its rows replace the rows with the same `key` (columns it
   * lacks keep their values) and the others are inserted; `'replace-keys'`: every row whose key
   * value appears in the file is removed, then its rows are inserted. One transaction per file,
   * atomic for readers.
   */
  readonly mode?: LoadMode;
  /** The columns that identify a row, for `'upsert'` and `'replace-keys'`: `'id'` or `['region', 'day']`. */
  readonly key?: string | readonly string[];
  /** Two rows of one file with the same key (`'upsert'`): the later one wins (`'last'`, default), or the file fails. */
  readonly duplicateKeys?: DuplicateKeys;
  /**
   * The order ready files are applied in: `'arrival'` (default) or `'name'` (a file never
   * overtakes a ready file whose name sorts before it; files then go one at a time).
   */
  readonly order?: ApplyOrder;
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
   * Ledger rows of this directory older than this (`'90d'`, `'12h'`, `'30m'`) are removed at start
   * and once a day, never one a staged claim or a takeover still needs. Default: kept for ever.
   */
  readonly ledgerRetention?: string;
  /**
   * Stops the watcher when aborted, as `stop()` does, also while it is still starting (a long
   * recovery or initial sweep): `openWatcher` then resolves with the handle, stopped or stopping.
   * The CLI aborts it on SIGINT/SIGTERM.
   */
  readonly signal?: AbortSignal;
}

/** `readyWhen`'s values. */
export const READY_WHEN = ['sentinel', 'stable', 'marker'] as const;
export type ReadyWhen = (typeof READY_WHEN)[number];

export const ON_SUCCESS = ['delete', 'archive'] as const;
export type OnSuccess = (typeof ON_SUCCESS)[number];

/**
 * Database settings the CLI (`--adapter`, `--url`, ...) and serve configs take besides
 * `WatchOptions`' `database` and `endpoint`; the API takes an adapter instead (`db`, made by
 * `createHyperAdapter` or `createPostgresAdapter`). Read by the composition root (compose.ts).
 */
export interface DatabaseSettings {
  /** `hyper` (default) or `postgres`. */
  readonly adapter?: AdapterName;
  /** PostgreSQL: the server's URL (default: the `DATABASE_URL` environment variable). */
  readonly url?: string;
  /** Hyper endpoint: whether that hyperd reads the claimed files itself (default `auto`: probed). */
  readonly endpointReadsFiles?: EndpointReadsFiles;
  /** Hyper: idle this long after a checkpoint, let go of the `.hyper` file (default 2000; 0: keep it). */
  readonly releaseIdleMs?: number;
  /** Hyper: the file format version of a new `.hyper` file, 0–4 (default 2; an existing file keeps its own). */
  readonly databaseVersion?: DatabaseVersion;
}

/** Every setting of the option table: the API's and the database's. */
export type Settings = WatchOptions & DatabaseSettings;
