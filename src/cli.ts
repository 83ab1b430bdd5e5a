/**
 * The `hyperwatch` command. Results go to stdout, logs to stderr. Exit codes: 0 success,
 * 1 files failed (`watch --once`) or a runtime error, 2 usage or configuration error.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { openWatcher, WatchConfigError } from './api.ts';
import { ON_BAD_ROWS, type OnBadRows, parseMaxBadRows } from './bad-rows.ts';
import { DB_FLAGS, DB_HELP, dbFromFlags, parse, printRows, readerDbFromFlags, stopOnSignals, toJson, UsageError } from './cli-util.ts';
import { dropCommand, historyCommand, replayCommand } from './cli-producer.ts';
import { serveCommand, statusCommand } from './cli-serve.ts';
import { csvDelimiterProblem, encodingProblem, fsAdapterByName } from './compose.ts';
import { lineLogger } from './log.ts';
import { parseSourceColumns } from './source-columns.ts';
import { startProgress } from './progress.ts';
import type { DbPool } from './types.ts';
import type { WatcherHandle, WatchSummary } from './watcher/handle.ts';

const HELP = {
  main: `hyperwatch: append files dropped into a directory to a Tableau Hyper (or PostgreSQL) table, exactly once.

Usage:
  hyperwatch watch <dir> --table <name> [options]   watch a directory (see: hyperwatch watch --help)
  hyperwatch serve --config <file.json>             several watchers and an HTTP API in one process
  hyperwatch status [--url http://127.0.0.1:7878]   the watchers of a running serve
  hyperwatch query [options] "<sql>"                run SQL and print the rows
  hyperwatch history [--since 2h] [--table <name>]  what was ingested when (the ledger)
  hyperwatch drop <file> <dir>                      drop a file into a watched directory, safely
  hyperwatch replay <dir>/failed/<file>             send a fixed failed file back in
  hyperwatch install-hyperd                         fetch the hyperd binary into the user cache
  hyperwatch --version

Producers: write X.csv (to a temp name, then rename), then create the empty file X.csv.ready.`,
  watch: `Usage: hyperwatch watch <dir> --table <name> [options]

Ingests every X whose sentinel X.ready exists exactly once (small files ready together share a
transaction, each with its own ledger row); removes both on success (or archives them),
moves both to <dir>/failed/ with X.error on failure. X.csv.gz, X.jsonl.zst and the like
(gzip, zstd) are decompressed as they stream.

Options:
  --table <name>          target table, "name" or "schema.name" (created from the first file),
                          as written: --table "Order Items"; a dotted part in quotes: '"Q1.2024"'
${DB_HELP}
  --max-concurrent <n>    parallel ingests (default 4, at most 32)
  --skip-duplicates       skip a file whose content (SHA-256) the table already received
  --schema-evolution <fail|add-columns>  a file with columns the table lacks: fail it
                          (default), or add them (nullable) before loading it
  --source-column <key>=<column>  fill <column> on every row, repeatable; keys: file (the
                          file's name), claim (its claim id), committed (its transaction's
                          time), e.g. --source-column file=_source_file
  --on-bad-rows <fail|skip>  skip: leave out CSV / JSON-lines rows that do not parse or do
                          not convert to their column, set aside in failed/X.rejected.csv
                          (.jsonl for JSON) with line and reason; default fail (the file fails)
  --max-bad-rows <n|fraction>  with skip: a file with more bad rows than n (100), or than
                          this fraction of its rows (0.01), fails whole; default no limit
  --on-success <delete|archive>  after the commit is durable: remove the file and its
                          sentinel (default), or move both to the archive folder
  --archive-dir <folder>  where archive moves them (default <dir>/archive; relative to <dir>)
  --archive-by-date       archive into one subfolder per day (UTC), e.g. archive/2026-12-01/
  --no-compression        treat .gz/.zst files as unknown extensions instead of decompressing
  --max-decompressed-bytes <n>  a compressed file inflating past this fails (default 4G;
                          suffixes K, M, G, T: powers of 1024)
  --csv-delimiter <char>  the field delimiter of .csv files, e.g. ';' (spreadsheets' exports
                          where the decimal separator is a comma), '|' or tab (default ','; .tsv
                          files are always tab-separated)
  --encoding <charset>    the character set of CSV, TSV and JSON files, e.g. windows-1252 (what
                          spreadsheets save as "CSV" in much of Europe and the Americas),
                          shift_jis, utf-16le; decoded as they stream (default utf-8)
  --lease <ms>            lease of this process when several watch one directory: another
                          takes its files over when it stops renewing it for this long (default 30000)
  --release-idle-ms <ms>  hyper: idle this long after a checkpoint, let go of the .hyper file so
                          other programs can open it (default 2000; 0: keep it)
  --once                  process the ready files present, then exit (1 if any failed)
  --json                  print the summary as one JSON object on stdout
  --fs <node|parcel|deno|poll[:ms]>  filesystem event source (default: node on Linux,
                          deno on Deno, parcel elsewhere; poll for NFS/SMB, every 1000 ms)
  --log-format <text|json>  log lines on stderr (default text)
  --quiet                 log warnings and errors only
  -h, --help`,
  query: `Usage: hyperwatch query [options] [--json] "<sql>"

Runs one SQL statement against the database and prints the rows (--json: a JSON array).
On Hyper, a .hyper file that a running hyperwatch holds is read through that process's hyperd.

Options:
${DB_HELP}`,
} as const;

function printSummary(summary: WatchSummary, json: boolean): void {
  if (json) {
    process.stdout.write(`${toJson(summary)}\n`);
    return;
  }
  const s = summary.stats;
  const lines = [
    `${summary.directory} → ${summary.table} (${summary.database})`,
    `  files ingested: ${s.filesIngested}   rows: ${s.rowsIngested}   bytes: ${s.bytesIngested}`,
    `  files failed:   ${s.filesFailed}${s.lastError ? `   last error: ${s.lastError.message}` : ''}`,
  ];
  if (s.rowsRejected) lines.push(`  rows rejected:  ${s.rowsRejected} (set aside in failed/*.rejected.*)`);
  if (s.retries || s.recovered || s.orphans) lines.push(`  retries: ${s.retries}   recovered: ${s.recovered}   orphan sentinels: ${s.orphans}`);
  if (s.takenOver) lines.push(`  taken over from processes that died: ${s.takenOver}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} expects a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** `--on-bad-rows` and `--max-bad-rows` as options, or a usage error naming the flag. */
/** `--csv-delimiter`: one character; `tab` (or `\t` as typed) for a tab. */
function csvDelimiterFlag(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const delimiter = value === 'tab' || value === '\\t' ? '\t' : value;
  const problem = csvDelimiterProblem(delimiter);
  if (problem) throw new UsageError(`--csv-delimiter ${problem} (for a tab: --csv-delimiter tab)`);
  return delimiter;
}

function badRowFlags(onBadRows: string | undefined, maxBadRows: string | undefined): { onBadRows?: OnBadRows; maxBadRows?: number } {
  if (onBadRows !== undefined && !(ON_BAD_ROWS as readonly string[]).includes(onBadRows)) throw new UsageError(`--on-bad-rows is fail or skip, got ${JSON.stringify(onBadRows)}`);
  if (maxBadRows === undefined) return onBadRows === undefined ? {} : { onBadRows: onBadRows as OnBadRows };
  if (onBadRows !== 'skip') throw new UsageError('--max-bad-rows needs --on-bad-rows skip');
  const parsed = parseMaxBadRows(maxBadRows);
  if ('error' in parsed) throw new UsageError(`--max-bad-rows: ${parsed.error}`);
  return { onBadRows: 'skip', maxBadRows: Number(maxBadRows) };
}

/** `4G`, `512M`, `1048576` → bytes (K, M, G, T: powers of 1024). */
export function byteCount(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d+)([KMGT]?)i?B?$/i.exec(value.trim());
  if (!m || Number(m[1]) === 0) throw new UsageError(`${flag} expects a size such as 4G, 512M or 1048576, got ${JSON.stringify(value)}`);
  return Number(m[1]) * 1024 ** ' KMGT'.indexOf((m[2] || ' ').toUpperCase());
}

async function watchCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    table: { type: 'string' },
    ...DB_FLAGS,
    'max-concurrent': { type: 'string' },
    'skip-duplicates': { type: 'boolean' },
    'schema-evolution': { type: 'string' },
    'source-column': { type: 'string', multiple: true },
    'on-bad-rows': { type: 'string' },
    'max-bad-rows': { type: 'string' },
    'on-success': { type: 'string' },
    'archive-dir': { type: 'string' },
    'archive-by-date': { type: 'boolean' },
    'no-compression': { type: 'boolean' },
    'max-decompressed-bytes': { type: 'string' },
    'csv-delimiter': { type: 'string' },
    encoding: { type: 'string' },
    lease: { type: 'string' },
    'release-idle-ms': { type: 'string' },
    once: { type: 'boolean' },
    json: { type: 'boolean' },
    fs: { type: 'string' },
    'log-format': { type: 'string' },
    quiet: { type: 'boolean' },
  });
  if (values.help) {
    process.stdout.write(`${HELP.watch}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('watch expects exactly one directory');
  if (!values.table) throw new UsageError('watch needs --table <name>');
  if (values['log-format'] && !['text', 'json'].includes(values['log-format'])) throw new UsageError('--log-format is text or json');
  const fs = values.fs === undefined ? undefined : fsAdapterByName(values.fs);
  if (values.fs !== undefined && !fs) throw new UsageError(`--fs is node, parcel, deno (on Deno) or poll[:ms], got ${JSON.stringify(values.fs)}`);
  const maxConcurrent = positiveInt(values['max-concurrent'], '--max-concurrent');
  const evolution = values['schema-evolution'];
  if (evolution !== undefined && evolution !== 'fail' && evolution !== 'add-columns') throw new UsageError(`--schema-evolution is fail or add-columns, got ${JSON.stringify(evolution)}`);
  const sourceColumns = parseSourceColumns(values['source-column'] ?? []);
  if (sourceColumns.isErr()) throw new UsageError(`--source-column: ${sourceColumns.error}`);
  const badRows = badRowFlags(values['on-bad-rows'], values['max-bad-rows']);
  const onSuccess = values['on-success'];
  if (onSuccess !== undefined && onSuccess !== 'delete' && onSuccess !== 'archive') throw new UsageError(`--on-success is delete or archive, got ${JSON.stringify(onSuccess)}`);
  if ((values['archive-dir'] !== undefined || values['archive-by-date']) && onSuccess !== 'archive') throw new UsageError('--archive-dir and --archive-by-date go with --on-success archive');
  const maxDecompressedBytes = byteCount(values['max-decompressed-bytes'], '--max-decompressed-bytes');
  const leaseMs = positiveInt(values.lease, '--lease');
  const csvDelimiter = csvDelimiterFlag(values['csv-delimiter']);
  const encoding = values.encoding;
  const charsetProblem = encoding === undefined ? undefined : encodingProblem(encoding);
  if (charsetProblem) throw new UsageError(`--encoding: ${charsetProblem}`);
  let handle: WatcherHandle | undefined;
  // A live progress line for long files, on a terminal only; log lines clear it first.
  const progress = startProgress(process.stderr, () => handle?.activeFiles() ?? []);
  const logger = lineLogger(progress.wrap((line) => process.stderr.write(`${line}\n`)), {
    json: values['log-format'] === 'json',
    level: values.quiet ? 'warn' : 'info',
  });
  const db = dbFromFlags(values, logger, positionals[0]);
  // From the start: a signal during a long recovery or initial sweep stops it cleanly too.
  const stopSignal = stopOnSignals(logger);
  try {
    handle = await openWatcher(positionals[0]!, values.table, {
      signal: stopSignal,
      db,
      maxConcurrent,
      logger,
      skipDuplicateContent: values['skip-duplicates'] === true,
      ...(evolution === 'add-columns' ? { schemaEvolution: 'addColumns' as const } : {}),
      sourceColumns: sourceColumns.value,
      ...badRows,
      ...(onSuccess ? { onSuccess, archiveDir: values['archive-dir'], archiveByDate: values['archive-by-date'] === true } : {}),
      compression: values['no-compression'] !== true,
      ...(maxDecompressedBytes ? { maxDecompressedBytes } : {}),
      ...(leaseMs !== undefined ? { leaseMs } : {}),
      ...(csvDelimiter !== undefined ? { csvDelimiter } : {}),
      ...(encoding !== undefined ? { encoding } : {}),
      ...(fs ? { fs } : {}),
    });
    // Runs until a signal stops it (or it stops itself, taken over by another process).
    if (!values.once) await handle.whenStopped();
    const summary = await handle.stop();
    progress.stop();
    printSummary(summary, values.json === true);
    if (handle.fenced) return 1;
    return values.once && summary.stats.filesFailed > 0 ? 1 : 0;
  } finally {
    progress.stop();
    await db.close();
  }
}

async function queryCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { ...DB_FLAGS, json: { type: 'boolean' } });
  if (values.help) {
    process.stdout.write(`${HELP.query}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('query expects one SQL statement (quote it)');
  const reader = readerDbFromFlags(values);
  let pool: DbPool | undefined;
  try {
    pool = await reader.db.openPool({ maxConnections: 1 });
    printRows(await pool.query(positionals[0]!), values.json === true);
    return 0;
  } finally {
    await reader.close(pool);
  }
}

function installHyperd(): number {
  const script = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'install-hyperd.mjs');
  const local = join(dirname(fileURLToPath(import.meta.url)), '..', 'scripts', 'install-hyperd.mjs');
  const path = [script, local].find((p) => {
    try {
      readFileSync(p);
      return true;
    } catch {
      return false;
    }
  });
  if (!path) throw new Error('install-hyperd.mjs not found next to the package');
  return spawnSync(process.execPath, [path, '--strict'], { stdio: 'inherit' }).status ?? 1;
}

function version(): string {
  for (const up of ['..', '../..']) {
    try {
      return (JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), up, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      // try the next candidate: src/ when run from source, dist/src/ when built
    }
  }
  return 'unknown';
}

function jsonLogs(args: readonly string[]): boolean {
  const i = args.indexOf('--log-format');
  return args.includes('--log-format=json') || (i >= 0 && args[i + 1] === 'json');
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'watch':
        return await watchCommand(rest);
      case 'query':
        return await queryCommand(rest);
      case 'serve':
        return await serveCommand(rest);
      case 'status':
        return await statusCommand(rest);
      case 'history':
        return await historyCommand(rest);
      case 'drop':
        return await dropCommand(rest);
      case 'replay':
        return await replayCommand(rest);
      case 'install-hyperd':
        return installHyperd();
      case '--version':
      case '-v':
        process.stdout.write(`${version()}\n`);
        return 0;
      case undefined:
      case '--help':
      case '-h':
      case 'help':
        process.stdout.write(`${HELP.main}\n`);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)} (commands: watch, serve, status, query, history, drop, replay, install-hyperd)`);
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const usage = error instanceof UsageError || error instanceof WatchConfigError || code === 'DUPLICATE_WATCHER' || code === 'HYPERD_NOT_FOUND' || code === 'CONFIG_INVALID' || code === 'STAGING_OTHER_MOUNT' || code === 'DATABASE_HELD';
    const message = `${(error as Error).message ?? String(error)}${error instanceof UsageError ? ' (see --help)' : ''}`;
    // With --log-format json, stderr carries JSON lines only: the final error too.
    if (jsonLogs(rest)) process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', message, ...(typeof code === 'string' ? { code } : {}) })}\n`);
    else process.stderr.write(`hyperwatch: ${message}\n`);
    return usage ? 2 : 1;
  }
}
