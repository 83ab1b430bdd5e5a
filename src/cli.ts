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
import { DB_FLAGS, DB_HELP, dbFromFlags, parse, printRows, toJson, UsageError } from './cli-util.ts';
import { dropCommand, historyCommand, replayCommand } from './cli-producer.ts';
import { serveCommand, statusCommand } from './cli-serve.ts';
import { fsAdapterByName } from './compose.ts';
import { lineLogger } from './log.ts';
import { startProgress } from './progress.ts';
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
transaction, each with its own ledger row); removes both on success,
moves both to <dir>/failed/ with X.error on failure.

Options:
  --table <name>          target table, "name" or "schema.name" (created from the first file)
${DB_HELP}
  --max-concurrent <n>    parallel ingests (default 4, at most 32)
  --skip-duplicates       skip a file whose content (SHA-256) the table already received
  --lease <ms>            lease of this process when several watch one directory: another
                          takes its files over when it stops renewing it for this long (default 30000)
  --once                  process the ready files present, then exit (1 if any failed)
  --json                  print the summary as one JSON object on stdout
  --fs <node|parcel|deno|poll[:ms]>  filesystem event source (default: node on Linux,
                          deno on Deno, parcel elsewhere; poll for NFS/SMB, every 1000 ms)
  --log-format <text|json>  log lines on stderr (default text)
  --quiet                 log warnings and errors only
  -h, --help`,
  query: `Usage: hyperwatch query [options] [--json] "<sql>"

Runs one SQL statement against the database and prints the rows (--json: a JSON array).

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
  if (s.retries || s.recovered || s.orphans) lines.push(`  retries: ${s.retries}   recovered: ${s.recovered}   orphan sentinels: ${s.orphans}`);
  if (s.takenOver) lines.push(`  taken over from processes that died: ${s.takenOver}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} expects a whole number, got ${JSON.stringify(value)}`);
  return Number(value);
}

async function watchCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    table: { type: 'string' },
    ...DB_FLAGS,
    'max-concurrent': { type: 'string' },
    'skip-duplicates': { type: 'boolean' },
    lease: { type: 'string' },
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
  const leaseMs = positiveInt(values.lease, '--lease');
  let handle: WatcherHandle | undefined;
  // A live progress line for long files, on a terminal only; log lines clear it first.
  const progress = startProgress(process.stderr, () => handle?.activeFiles() ?? []);
  const logger = lineLogger(progress.wrap((line) => process.stderr.write(`${line}\n`)), {
    json: values['log-format'] === 'json',
    level: values.quiet ? 'warn' : 'info',
  });
  const db = dbFromFlags(values, logger);
  try {
    handle = await openWatcher(positionals[0]!, values.table, {
      db,
      maxConcurrent,
      logger,
      skipDuplicateContent: values['skip-duplicates'] === true,
      ...(leaseMs !== undefined ? { leaseMs } : {}),
      ...(fs ? { fs } : {}),
    });
    if (!values.once) {
      const running = handle;
      await new Promise<void>((resolve) => {
        void running.whenStopped().then(resolve);
        const stop = (signal: string) => {
          logger.info(`${signal}: stopping (in-flight files finish first)`);
          resolve();
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
      });
    }
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
  const db = dbFromFlags(values);
  try {
    const pool = await db.openPool({ maxConnections: 1 });
    printRows(await pool.query(positionals[0]!), values.json === true);
    return 0;
  } finally {
    await db.close();
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
    const usage = error instanceof UsageError || error instanceof WatchConfigError || code === 'DUPLICATE_WATCHER' || code === 'HYPERD_NOT_FOUND' || code === 'CONFIG_INVALID' || code === 'STAGING_OTHER_MOUNT' || code === 'HYPER_FILE_IN_USE';
    const message = `${(error as Error).message ?? String(error)}${error instanceof UsageError ? ' (see --help)' : ''}`;
    // With --log-format json, stderr carries JSON lines only: the final error too.
    if (jsonLogs(rest)) process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'error', message, ...(typeof code === 'string' ? { code } : {}) })}\n`);
    else process.stderr.write(`hyperwatch: ${message}\n`);
    return usage ? 2 : 1;
  }
}
