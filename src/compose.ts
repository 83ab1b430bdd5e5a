/**
 * The composition root: the one module that knows which built-in database adapters, filesystem
 * adapters and ingester plugins exist, and builds them from settings. The core (src/watcher/,
 * src/protocol/) knows only their contracts (src/types.ts); settings that concern one adapter
 * (Hyper's `database` and `endpoint`, PostgreSQL's `url`) are read here and nowhere in the core.
 */
import { join, resolve } from 'node:path';
import process from 'node:process';
import {
  createHyperAdapter,
  databaseVersionProblem,
  DEFAULT_DATABASE,
  ENDPOINT_READS_FILES,
  type EndpointReadsFiles,
  type Holder,
  readHolder,
} from '../adapters/db/hyper/index.ts';
import { createPostgresAdapter } from '../adapters/db/postgres/index.ts';
import { denoFsAdapter, isDenoRuntime } from '../adapters/fs/deno/index.ts';
import { nodeFsAdapter } from '../adapters/fs/node/index.ts';
import { parcelFsAdapter } from '../adapters/fs/parcel/index.ts';
import { DEFAULT_POLL_INTERVAL_MS, pollFsAdapter } from '../adapters/fs/poll/index.ts';
import { arrowIngester } from '../plugins/arrow/index.ts';
import { compressedIngester } from '../plugins/compressed/index.ts';
import { createCsvIngester, type CsvDialect, csvIngester, dialectProblems } from '../plugins/csv/index.ts';
import { encodedIngester, isUtf8, utf16MarkedIngester } from '../plugins/encoding/index.ts';
import { createJsonIngester, type JsonDialect, jsonIngester } from '../plugins/json/index.ts';
import { parquetIngester } from '../plugins/parquet/index.ts';
import { SESSIONS_DIR, STAGING_DIR } from './constants.ts';
import { PluginRegistry } from './plugins.ts';
import { quoteIdent } from './columns/sql.ts';
import type { CsvOptions } from './options.ts';
import type { DbAdapter, DbPool, FsAdapter, IngesterPlugin, Logger } from './types.ts';

// ---------------------------------------------------------------------------------------------
// Ingester plugins
// ---------------------------------------------------------------------------------------------

export { delimiterProblem as csvDelimiterProblem, sniffCsv, sniffedFlags } from '../plugins/csv/index.ts';
export { encodingProblem } from '../plugins/encoding/index.ts';

/** The CSV settings of a watcher's options (`CsvOptions` and `csvDelimiter`), as the CSV plugin's dialect. */
export function csvDialectOf(options: CsvOptions & { readonly csvDelimiter?: string }): CsvDialect {
  const dialect: { -readonly [K in keyof CsvDialect]: CsvDialect[K] } = {};
  if (options.csvDelimiter !== undefined) dialect.delimiter = options.csvDelimiter;
  if (options.dateStyle !== undefined) dialect.dateStyle = options.dateStyle;
  if (options.dateFormat !== undefined) dialect.dateFormat = options.dateFormat;
  if (options.timestampFormat !== undefined) dialect.timestampFormat = options.timestampFormat;
  if (options.nullValues !== undefined) dialect.nullValues = options.nullValues;
  if (options.decimalSeparator !== undefined) dialect.decimalSeparator = options.decimalSeparator;
  if (options.thousandsSeparator !== undefined) dialect.thousandsSeparator = options.thousandsSeparator;
  if (options.quote !== undefined) dialect.quote = options.quote;
  if (options.escape !== undefined) dialect.escape = options.escape;
  if (options.skipLines !== undefined) dialect.skipLines = options.skipLines;
  if (options.commentPrefix !== undefined) dialect.commentPrefix = options.commentPrefix;
  if (options.header !== undefined) dialect.header = options.header;
  if (options.columnNames !== undefined) dialect.columnNames = options.columnNames;
  if (options.sniff !== undefined) dialect.sniff = options.sniff;
  return dialect;
}

/** The settings that mean something in JSON (NULL markers, how dates are written in strings), as the JSON plugin's dialect. */
export function jsonDialectOf(options: CsvOptions): JsonDialect {
  const dialect: { -readonly [K in keyof JsonDialect]: JsonDialect[K] } = {};
  if (options.nullValues !== undefined) dialect.nullValues = options.nullValues;
  if (options.dateStyle !== undefined) dialect.dateStyle = options.dateStyle;
  if (options.dateFormat !== undefined) dialect.dateFormat = options.dateFormat;
  if (options.timestampFormat !== undefined) dialect.timestampFormat = options.timestampFormat;
  return dialect;
}

/**
 * What is wrong with a watcher's CSV settings, each under the option's own name (`dateStyle`, `csvDelimiter`);
 * `alone`: each setting by itself, not what is wrong with them together (see `dialectProblems`).
 */
export function csvOptionProblems(
  options: CsvOptions & { readonly csvDelimiter?: string },
  alone = false,
): { readonly option: string; readonly problem: string }[] {
  return dialectProblems(csvDialectOf(options), alone).map((p) => ({
    option: p.field === 'delimiter' ? 'csvDelimiter' : p.field,
    problem: p.problem,
  }));
}

/** The ingesters every watcher has unless `WatchOptions.plugins` replaces them. */
export const builtinIngesters: readonly IngesterPlugin[] = [csvIngester, jsonIngester, parquetIngester, arrowIngester];

/**
 * The text formats: read compressed too (`.csv.gz`, `.jsonl.zst`, ...) and decoded from `encoding`,
 * by whichever plugin reads them plain.
 */
export const COMPRESSIBLE_EXTENSIONS = ['.csv', '.tsv', '.json', '.jsonl', '.ndjson'] as const;

/** How a watcher's plugins read text files (see `WatchOptions`). */
export interface TextSettings {
  readonly compression: boolean;
  readonly maxDecompressedBytes: number;
  /** How `.csv` and `.tsv` files are written (delimiter, dates...); empty: the defaults. */
  readonly csv?: CsvDialect;
  /** How JSON strings are read (NULL markers, dates); empty: the defaults. */
  readonly json?: JsonDialect;
  /** The character set of text files; undefined or UTF-8: read as they are. */
  readonly encoding?: string;
}

/**
 * The plugins a watcher uses: the built-ins, then `extra`, which replace them for the extensions
 * they list; the text formats (`COMPRESSIBLE_EXTENSIONS`, whichever plugin reads them) decoded
 * from `encoding` when one is set, and read compressed too (`.csv.gz`) unless `compression` is off.
 */
export function watcherPlugins(extra: readonly IngesterPlugin[], text: TextSettings): PluginRegistry {
  const customCsv = text.csv !== undefined && Object.keys(text.csv).length > 0;
  const customJson = text.json !== undefined && Object.keys(text.json).length > 0;
  const builtins = builtinIngesters.map((p) => {
    if (p === csvIngester && customCsv) return createCsvIngester(text.csv);
    if (p === jsonIngester && customJson) return createJsonIngester(text.json);
    return p;
  });
  // Checks that no two extras claim one extension; then builtins, extras and the variants below
  // in one list, where a later plugin replaces an earlier one for the extensions it lists.
  let registry = new PluginRegistry(builtins, extra);
  const layers: IngesterPlugin[] = [...builtins, ...extra];
  // In another character set when one is set; else UTF-8, or UTF-16 when a file's byte order mark says so.
  const utf8 = text.encoding === undefined || isUtf8(text.encoding);
  layers.push(
    ...textPlugins(registry).map(([plugin, extensions]) =>
      utf8 ? utf16MarkedIngester(plugin, extensions) : encodedIngester(plugin, { encoding: text.encoding!, extensions }),
    ),
  );
  registry = new PluginRegistry(layers);
  if (!text.compression) return registry;
  const compressed = textPlugins(registry).map(([plugin, extensions]) =>
    compressedIngester(plugin, { maxDecompressedBytes: text.maxDecompressedBytes, extensions }),
  );
  return new PluginRegistry([...layers, ...compressed]);
}

/** The plugin that reads each text extension in `registry`, with the text extensions it reads. */
function textPlugins(registry: PluginRegistry): [IngesterPlugin, string[]][] {
  const byPlugin = new Map<IngesterPlugin, string[]>();
  for (const ext of COMPRESSIBLE_EXTENSIONS) {
    const match = registry.match(`x${ext}`);
    if (match?.extension === ext) byPlugin.set(match.plugin, [...(byPlugin.get(match.plugin) ?? []), ext]);
  }
  return [...byPlugin];
}

// ---------------------------------------------------------------------------------------------
// Filesystem adapters
// ---------------------------------------------------------------------------------------------

/**
 * The FS adapter used when `WatchOptions.fs` is not given, chosen by measured event latency
 * (`npm run bench:fs`, see README): on Linux, `node:fs` `watch` delivers an event in well under a
 * millisecond on Node and Bun while @parcel/watcher batches for about 50 ms; on Deno,
 * `Deno.watchFs` (no FFI needed). Elsewhere @parcel/watcher's native backends (FSEvents,
 * ReadDirectoryChangesW). The core rescans anyway for anything an adapter may lose.
 */
export function defaultFsAdapter(): FsAdapter {
  if (isDenoRuntime()) return denoFsAdapter();
  return process.platform === 'linux' ? nodeFsAdapter() : parcelFsAdapter();
}

/** `node`, `parcel`, `deno`, `poll` or `poll:<ms>` (the CLI's `--fs`). */
export function fsAdapterByName(name: string): FsAdapter | undefined {
  if (name === 'node-fs' || name === 'node') return nodeFsAdapter();
  if (name === 'parcel') return parcelFsAdapter();
  if (name === 'deno') return isDenoRuntime() ? denoFsAdapter() : undefined;
  const poll = /^poll(?::(\d+))?$/.exec(name);
  if (poll) return pollFsAdapter({ intervalMs: poll[1] ? Number(poll[1]) : DEFAULT_POLL_INTERVAL_MS });
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Database adapters
// ---------------------------------------------------------------------------------------------

/*
 * Which database a watcher, query or history command uses: the embedded Hyper (default), a running
 * hyperd (`endpoint`), or PostgreSQL (`url`, else `DATABASE_URL`). Shared by the CLI flags, the
 * serve config and `WatchOptions`, so all reject the same mixtures the same way.
 */
export const ADAPTERS = ['hyper', 'postgres'] as const;
export type AdapterName = (typeof ADAPTERS)[number];

export interface DbChoice {
  readonly adapter?: AdapterName | string;
  readonly database?: string;
  readonly endpoint?: string;
  /** Whether the endpoint reads the claimed files itself: `auto` (probe at start), `yes`, `no`. */
  readonly endpointReadsFiles?: EndpointReadsFiles | string;
  readonly url?: string;
  /** Hyper: idle this long after a checkpoint, the watcher lets go of the `.hyper` file (0: never). */
  readonly releaseIdleMs?: number;
  /** The watched folder: the `auto` probe checks that the endpoint can read its staging folder. */
  readonly dir?: string;
  /** Hyper: the file format version of a new `.hyper` file, 0–4 (default: the server's, 2). */
  readonly databaseVersion?: number;
}

/** A problem with a choice: the setting it concerns (`url`, `database`...), what is wrong, the fix. */
export interface DbChoiceProblem {
  readonly field: 'adapter' | 'database' | 'endpoint' | 'endpointReadsFiles' | 'url' | 'releaseIdleMs' | 'databaseVersion';
  readonly problem: string;
  readonly fix: string;
}

/**
 * Everything wrong with `choice`; empty when it can be opened. `env` supplies DATABASE_URL; `flags`
 * names the settings as the CLI's flags (`--url`) in the fixes.
 */
export function checkDbChoice(choice: DbChoice, env: Record<string, string | undefined> = process.env, flags = false): DbChoiceProblem[] {
  const n = (field: string) => (flags ? flagName(field) : field);
  const adapter = choice.adapter ?? 'hyper';
  if (!(ADAPTERS as readonly string[]).includes(adapter)) {
    return [
      {
        field: 'adapter',
        problem: `is ${JSON.stringify(adapter)}, not a known adapter`,
        fix: `Use ${n('adapter')} hyper or ${n('adapter')} postgres.`,
      },
    ];
  }
  const problems: DbChoiceProblem[] = [];
  const reads = choice.endpointReadsFiles;
  if (reads !== undefined && !(ENDPOINT_READS_FILES as readonly string[]).includes(reads)) {
    problems.push({
      field: 'endpointReadsFiles',
      problem: `is ${JSON.stringify(reads)}`,
      fix: `Use ${n('endpointReadsFiles')} auto, yes or no.`,
    });
  }
  if (adapter === 'postgres') {
    for (const field of ['database', 'endpoint', 'endpointReadsFiles', 'releaseIdleMs', 'databaseVersion'] as const) {
      if (choice[field] !== undefined)
        problems.push({
          field,
          problem: 'applies to the hyper adapter only',
          fix: `Remove ${n(field)}; give the PostgreSQL server as ${n('url')}.`,
        });
    }
    if (choice.url === undefined && !env.DATABASE_URL) {
      problems.push({
        field: 'url',
        problem: 'is missing (and DATABASE_URL is not set)',
        fix: `Give ${n('url')} postgres://user:password@host:5432/db, or set DATABASE_URL.`,
      });
    }
  } else if (choice.url !== undefined) {
    problems.push({
      field: 'url',
      problem: 'applies to the postgres adapter only',
      fix: `Add ${n('adapter')} postgres, or remove ${n('url')} (Hyper uses ${n('database')} or ${n('endpoint')}).`,
    });
  }
  if (choice.releaseIdleMs !== undefined && !(Number.isInteger(choice.releaseIdleMs) && choice.releaseIdleMs >= 0)) {
    problems.push({
      field: 'releaseIdleMs',
      problem: `is ${JSON.stringify(choice.releaseIdleMs)}, not a whole number of milliseconds`,
      fix: `Use ${n('releaseIdleMs')} 2000 (or 0 to keep the file).`,
    });
  }
  const versionProblem =
    choice.databaseVersion === undefined || adapter === 'postgres' ? undefined : databaseVersionProblem(choice.databaseVersion);
  if (versionProblem)
    problems.push({
      field: 'databaseVersion',
      problem: versionProblem,
      fix: `Use ${n('databaseVersion')} 2 (opens in Tableau 2020.4.15 / 2022.1.2 and later; README: Options, databaseVersion).`,
    });
  return problems;
}

/** A setting's CLI flag: `endpointReadsFiles` → `--endpoint-reads-files`. */
export function flagName(field: string): string {
  return `--${field.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/** Builds the adapter for a choice that `checkDbChoice` accepted. The caller closes it. */
export function createDbAdapter(choice: DbChoice, logger?: Logger): DbAdapter {
  if (choice.adapter === 'postgres')
    return createPostgresAdapter({ ...(choice.url !== undefined ? { url: choice.url } : {}), ...(logger ? { logger } : {}) });
  return createHyperAdapter({
    database: choice.database,
    endpoint: choice.endpoint,
    ...(choice.releaseIdleMs !== undefined ? { releaseIdleMs: choice.releaseIdleMs } : {}),
    ...(choice.databaseVersion !== undefined ? { databaseVersion: choice.databaseVersion } : {}),
    ...(choice.endpointReadsFiles !== undefined ? { endpointReadsFiles: choice.endpointReadsFiles as EndpointReadsFiles } : {}),
    ...(choice.dir !== undefined
      ? { probeDir: join(resolve(choice.dir), STAGING_DIR), sessionsDir: join(resolve(choice.dir), SESSIONS_DIR) }
      : {}),
    ...(logger ? { logger } : {}),
  });
}

/**
 * Where a reader (psql, a BI tool, `hyperwatch query`) connects to read what a watcher of `choice`
 * writes, while it runs: the hyperd the watcher uses. Undefined for PostgreSQL (its own server) and
 * while an embedded hyperd has not published its endpoint.
 */
export function readersEndpoint(
  choice: DbChoice,
): { readonly endpoint: string; readonly user?: string; readonly database: string } | undefined {
  if ((choice.adapter ?? 'hyper') !== 'hyper') return undefined;
  const database = resolve(choice.database ?? DEFAULT_DATABASE);
  if (choice.endpoint !== undefined) {
    const at = choice.endpoint.lastIndexOf('@');
    return at < 0
      ? { endpoint: choice.endpoint, database }
      : { endpoint: choice.endpoint.slice(at + 1), user: choice.endpoint.slice(0, at), database };
  }
  const holder = readHolder(database);
  return holder ? { endpoint: holder.endpoint, user: holder.user, database } : undefined;
}

/**
 * The adapter a watcher uses: `options.db` when given (the caller closes it), else one built from
 * the Hyper settings `database` and `endpoint`, owned (closed) by the watcher.
 */
export function watcherDb(
  options: { readonly db?: DbAdapter; readonly database?: string; readonly endpoint?: string },
  logger: Logger,
  dir?: string,
): { db: DbAdapter; owned: boolean } {
  if (options.db) return { db: options.db, owned: false };
  return {
    db: createDbAdapter(
      { adapter: 'hyper', database: options.database, endpoint: options.endpoint, ...(dir !== undefined ? { dir } : {}) },
      logger,
    ),
    owned: true,
  };
}

/** The database of a reader (`query`, `history`): the adapter, and how to let go of it. */
export interface ReaderDb {
  readonly db: DbAdapter;
  /** The running hyperwatch whose hyperd serves this reader, if any. */
  readonly via?: Holder;
  /** Lets go of the database at once (so the holder's next checkpoint is not held up), then closes. */
  close(pool: DbPool | undefined): Promise<void>;
}

/** How a reader reads (see `readerDb`). */
export interface ReaderOptions {
  /** The process that counts as this one: its own holder entry is no reason to go elsewhere. */
  readonly ownPid?: number;
  /** Dates, times and timestamps as the text the server sends (see HyperAdapterOptions.datesAsText). */
  readonly datesAsText?: boolean;
}

/**
 * The adapter for a reader of a choice that `checkDbChoice` accepted. A `.hyper` file that a
 * running hyperwatch holds is locked by that process's hyperd, so a reader goes through it (it
 * publishes where it listens next to the file); otherwise it starts its own hyperd.
 */
export function readerDb(choice: DbChoice, reading: ReaderOptions = {}): ReaderDb {
  const ownPid = reading.ownPid ?? process.pid;
  const asText = reading.datesAsText === true ? { datesAsText: true } : {};
  if ((choice.adapter ?? 'hyper') !== 'hyper' || choice.endpoint !== undefined) {
    const db =
      choice.adapter === 'postgres'
        ? createPostgresAdapter({ ...(choice.url !== undefined ? { url: choice.url } : {}), ...asText })
        : createHyperAdapter({ database: choice.database, endpoint: choice.endpoint, ...asText });
    return { db, close: () => db.close() };
  }
  const database = resolve(choice.database ?? DEFAULT_DATABASE);
  const via = readHolder(database);
  if (!via || via.pid === ownPid) {
    const db = createHyperAdapter({ database, announce: false, ...asText });
    return { db, close: () => db.close() };
  }
  const db = createHyperAdapter({ database, endpoint: `${via.user}@${via.endpoint}`, ...asText });
  return {
    db,
    via,
    async close(pool) {
      // A session that still has the database attached defers the holder's checkpoint write.
      await pool?.query(`DETACH DATABASE ${quoteIdent(database)}`).catch(() => {});
      await db.close();
    },
  };
}
