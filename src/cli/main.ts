/**
 * The `hyperwatch` command. Results go to stdout, logs to stderr. Exit codes: 0 success,
 * 1 files failed (`watch --once`) or a runtime error, 2 usage or configuration error.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { openWatcher, WatchConfigError } from '../api.ts';
import { DB_FLAGS, DB_HELP, dbFromFlags, parse, printRows, readerDbFromFlags, stopOnSignals, toJson, UsageError } from './util.ts';
import { dropCommand, historyCommand, replayCommand } from './producer.ts';
import { checkCommand } from './check.ts';
import { exportCommand } from './export.ts';
import { installHyperdCommand } from './install-hyperd.ts';
import { serveCommand, statusCommand } from './serve.ts';
import { isLogLevel, lineLogger } from '../log.ts';
import { sizeFlag } from '../options/checks.ts';
import { flagsHelp, WATCH_FLAG_ENTRIES, WATCH_FLAGS, watchOptionsFromFlags } from '../options/flags.ts';
import { startProgress } from '../observe/progress.ts';
import type { DbPool } from '../types.ts';
import type { WatcherHandle, WatchSummary } from '../watcher/handle.ts';

const HELP = {
  main: `hyperwatch: append files dropped into a directory to a Tableau Hyper (or PostgreSQL) table, exactly once.

Usage:
  hyperwatch watch <dir> --table <name> [options]   watch a directory (see: hyperwatch watch --help)
  hyperwatch serve --config <file.json>             several watchers and an HTTP API in one process
  hyperwatch status [--url http://127.0.0.1:7878]   the watchers of a running serve
  hyperwatch check <file> [--table <name>] [options]  what a file would do, without dropping it
  hyperwatch query [options] "<sql>"                run SQL and print the rows
  hyperwatch history [--since 2h] [--table <name>]  what was ingested when (the ledger)
  hyperwatch export --table <name> --to <file>      one table, alone, in a file Tableau opens
  hyperwatch drop <file> <dir>                      drop a file into a watched directory, safely
  hyperwatch replay <dir>/failed/<file>             send a fixed failed file back in
  hyperwatch install-hyperd [--platform <p>]        fetch hyperd, checked, into the user cache
  hyperwatch --version

Producers: write X.csv (to a temp name, then rename), then create the empty file X.csv.ready.`,
  watch: `Usage: hyperwatch watch <dir> --table <name> [options]

Ingests every X whose sentinel X.ready exists (with --ready stable: once X stopped changing)
exactly once (small files ready together share a transaction, each with its own ledger row); removes both on success (or archives them),
moves both to <dir>/failed/ with X.error on failure. X.csv.gz, X.jsonl.zst and the like
(gzip, zstd) are decompressed as they stream.

Options:
  --table <name>          target table, "name" or "schema.name" (created from the first file),
                          as written: --table "Order Items"; a dotted part in quotes: '"Q1.2024"'
${DB_HELP}
${flagsHelp(WATCH_FLAG_ENTRIES)}
  --once                  process the ready files present, then exit (1 if any failed);
                          with --ready stable, once the files present stopped changing
  --json                  print the summary as one JSON object on stdout
  --log-format <text|json>  log lines on stderr (default text)
  --quiet                 log warnings and errors only
  --log-level <debug|info|warn|error>  the least severe lines logged (default info; debug says why
                          a file waits, a takeover is not made yet, a checkpoint ran late)
  -h, --help`,
  query: `Usage: hyperwatch query [options] [--json] "<sql>"

Runs one SQL statement against the database and prints the rows (--json: a JSON array).
On Hyper, a .hyper file that a running hyperwatch holds is read through that process's hyperd.
Dates and times print as the database writes them, the same strings in --json: DATE 2018-01-28,
TIME 10:15:00, TIMESTAMP 2018-01-28 10:15:00.5 (no zone), TIMESTAMPTZ 2018-01-28 10:15:00+00.

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
    `${summary.directory} → ${summary.table} ` +
      `(${summary.database}${summary.databaseVersion !== undefined ? `, database version ${summary.databaseVersion}` : ''})`,
    `  files ingested: ${s.filesIngested}   rows: ${s.rowsIngested}   bytes: ${s.bytesIngested}`,
    `  files failed:   ${s.filesFailed}${s.lastError ? `   last error: ${s.lastError.message}` : ''}`,
  ];
  if (s.rowsRejected) lines.push(`  rows rejected:  ${s.rowsRejected} (set aside in failed/*.rejected.*)`);
  if (s.retries || s.recovered || s.orphans)
    lines.push(`  retries: ${s.retries}   recovered: ${s.recovered}   orphan sentinels: ${s.orphans}`);
  if (s.takenOver) lines.push(`  taken over from processes that died: ${s.takenOver}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** `4G`, `512M`, `1048576` → bytes (K, M, G, T: powers of 1024); a usage error naming `flag` otherwise. */
export function byteCount(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const result = sizeFlag(flag.replace(/^--/, ''))(value);
  if ('problem' in result) throw new UsageError(result.problem);
  return result.value;
}

/**
 * `--once --ready stable`: no file is ready when the start-up sweep ends, so the run waits until
 * the files it found stopped changing and landed (or failed). One that never stops keeps it
 * waiting, and the log says so, as when watching.
 */
async function settled(handle: WatcherHandle): Promise<void> {
  const { stats } = handle;
  while (!handle.stopping && (stats.settling > 0 || stats.queued > 0 || stats.inFlight > 0)) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    await handle.whenIdle();
  }
}

async function watchCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    table: { type: 'string' },
    ...DB_FLAGS,
    ...WATCH_FLAGS,
    once: { type: 'boolean' },
    json: { type: 'boolean' },
    'log-format': { type: 'string' },
    quiet: { type: 'boolean' },
    'log-level': { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(`${HELP.watch}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('watch expects exactly one directory');
  if (!values.table) throw new UsageError('watch needs --table <name>');
  if (values['log-format'] && !['text', 'json'].includes(values['log-format'])) throw new UsageError('--log-format is text or json');
  const level = values['log-level'] ?? (values.quiet ? 'warn' : 'info');
  if (!isLogLevel(level)) throw new UsageError(`--log-level is debug, info, warn or error, not ${JSON.stringify(level)}`);
  if (values.quiet && values['log-level'] !== undefined) throw new UsageError('--quiet and --log-level: give one of them');
  const options = watchOptionsFromFlags(values);
  if ('problem' in options) throw new UsageError(options.problem);
  let handle: WatcherHandle | undefined;
  // A live progress line for long files, on a terminal only; log lines clear it first.
  const progress = startProgress(process.stderr, () => handle?.activeFiles() ?? []);
  const logger = lineLogger(
    progress.wrap((line) => process.stderr.write(`${line}\n`)),
    {
      json: values['log-format'] === 'json',
      level,
    },
  );
  const db = dbFromFlags(values, logger, positionals[0]);
  // From the start: a signal during a long recovery or initial sweep stops it cleanly too.
  const stopSignal = stopOnSignals(logger);
  try {
    handle = await openWatcher(positionals[0]!, values.table, {
      signal: stopSignal,
      db,
      ...options.value,
      logger,
    });
    // Runs until a signal stops it (or it stops itself, taken over by another process).
    if (!values.once) await handle.whenStopped();
    else if (options.value.readyWhen === 'stable') await settled(handle);
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
  // Dates as the database has them: 2018-01-28, not the instant 2018-01-28T00:00:00.000Z.
  const reader = readerDbFromFlags(values, { datesAsText: true });
  let pool: DbPool | undefined;
  try {
    pool = await reader.db.openPool({ maxConnections: 1 });
    printRows(await pool.query(positionals[0]!), values.json === true);
    return 0;
  } finally {
    await reader.close(pool);
  }
}

function version(): string {
  for (const up of ['../..', '../../..']) {
    try {
      return (JSON.parse(readFileSync(join(dirname(fileURLToPath(import.meta.url)), up, 'package.json'), 'utf8')) as { version: string })
        .version;
    } catch {
      // try the next candidate: src/cli/ when run from source, dist/src/cli/ when built
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
      case 'check':
        return await checkCommand(rest);
      case 'query':
        return await queryCommand(rest);
      case 'serve':
        return await serveCommand(rest);
      case 'status':
        return await statusCommand(rest);
      case 'history':
        return await historyCommand(rest);
      case 'export':
        return await exportCommand(rest);
      case 'drop':
        return await dropCommand(rest);
      case 'replay':
        return await replayCommand(rest);
      case 'install-hyperd':
        return await installHyperdCommand(rest);
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
        throw new UsageError(
          `unknown command ${JSON.stringify(command)} (commands: watch, check, serve, status, query, history, export, drop, ` +
            `replay, install-hyperd)`,
        );
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const usage =
      error instanceof UsageError ||
      error instanceof WatchConfigError ||
      code === 'DUPLICATE_WATCHER' ||
      code === 'HYPERD_NOT_FOUND' ||
      code === 'CONFIG_INVALID' ||
      code === 'STAGING_OTHER_MOUNT' ||
      code === 'DATABASE_HELD' ||
      code === 'EXPORT_REFUSED';
    const message = `${(error as Error).message ?? String(error)}${error instanceof UsageError ? ' (see --help)' : ''}`;
    // With --log-format json, stderr carries JSON lines only: the final error too.
    if (jsonLogs(rest))
      process.stderr.write(
        `${JSON.stringify({ time: new Date().toISOString(), level: 'error', message, ...(typeof code === 'string' ? { code } : {}) })}\n`,
      );
    else process.stderr.write(`hyperwatch: ${message}\n`);
    return usage ? 2 : 1;
  }
}
