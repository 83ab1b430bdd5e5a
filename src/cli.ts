/**
 * The `hyperwatch` command. Results go to stdout, logs to stderr. Exit codes: 0 success,
 * 1 files failed (`watch --once`) or a runtime error, 2 usage or configuration error.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { createHyperAdapter, DEFAULT_DATABASE } from '../adapters/db/hyper/index.ts';
import { openWatcher, WatchConfigError } from './api.ts';
import { fsAdapterByName } from './default-fs.ts';
import { lineLogger } from './log.ts';
import type { WatchSummary } from './watcher.ts';

class UsageError extends Error {}

const HELP = {
  main: `hyperwatch: append files dropped into a directory to a Tableau Hyper table, exactly once.

Usage:
  hyperwatch watch <dir> --table <name> [options]   watch a directory (see: hyperwatch watch --help)
  hyperwatch query [options] "<sql>"                run SQL and print the rows
  hyperwatch install-hyperd                         fetch the hyperd binary into the user cache
  hyperwatch --version

Producers: write X.csv (to a temp name, then rename), then create the empty file X.csv.ready.`,
  watch: `Usage: hyperwatch watch <dir> --table <name> [options]

Ingests every X whose sentinel X.ready exists exactly once (small files ready together share a
transaction, each with its own ledger row); removes both on success,
moves both to <dir>/failed/ with X.error on failure.

Options:
  --table <name>          target table, "name" or "schema.name" (created from the first file)
  --database <file>       .hyper file on the embedded hyperd (default ${DEFAULT_DATABASE})
  --endpoint <host:port>  use a running hyperd instead of the embedded one
  --max-concurrent <n>    parallel ingests (default 4, at most 32)
  --once                  process the ready files present, then exit (1 if any failed)
  --json                  print the summary as one JSON object on stdout
  --fs <node|parcel|deno|poll[:ms]>  filesystem event source (default: node on Linux,
                          deno on Deno, parcel elsewhere; poll for NFS/SMB, every 1000 ms)
  --log-format <text|json>  log lines on stderr (default text)
  --quiet                 log warnings and errors only
  -h, --help`,
  query: `Usage: hyperwatch query [--database <file>] [--endpoint <host:port>] [--json] "<sql>"

Runs one SQL statement against the database and prints the rows (--json: a JSON array).`,
} as const;

function parse<T extends ParseArgsConfig['options']>(args: string[], options: T) {
  try {
    return parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

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
    database: { type: 'string' },
    endpoint: { type: 'string' },
    'max-concurrent': { type: 'string' },
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
  const logger = lineLogger((line) => process.stderr.write(`${line}\n`), {
    json: values['log-format'] === 'json',
    level: values.quiet ? 'warn' : 'info',
  });
  const handle = await openWatcher(positionals[0]!, values.table, {
    database: values.database,
    endpoint: values.endpoint,
    maxConcurrent: positiveInt(values['max-concurrent'], '--max-concurrent'),
    logger,
    ...(fs ? { fs } : {}),
  });
  if (!values.once) {
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        logger.info(`${signal}: stopping (in-flight files finish first)`);
        resolve();
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    });
  }
  const summary = await handle.stop();
  printSummary(summary, values.json === true);
  return values.once && summary.stats.filesFailed > 0 ? 1 : 0;
}

function printRows(rows: readonly Record<string, unknown>[], json: boolean): void {
  if (json) {
    process.stdout.write(`${toJson(rows)}\n`);
    return;
  }
  if (rows.length === 0) {
    process.stdout.write('(0 rows)\n');
    return;
  }
  const columns = Object.keys(rows[0]!);
  const cell = (v: unknown) => (v === null || v === undefined ? '' : v instanceof Date ? v.toISOString() : typeof v === 'object' ? toJson(v) : String(v));
  const table = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...table.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((v, i) => v.padEnd(widths[i]!)).join(' | ').trimEnd();
  process.stdout.write(`${[line(columns), widths.map((w) => '-'.repeat(w)).join('-+-'), ...table.map(line)].join('\n')}\n(${rows.length} row${rows.length === 1 ? '' : 's'})\n`);
}

async function queryCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { database: { type: 'string' }, endpoint: { type: 'string' }, json: { type: 'boolean' } });
  if (values.help) {
    process.stdout.write(`${HELP.query}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('query expects one SQL statement (quote it)');
  const db = createHyperAdapter({ database: values.database, endpoint: values.endpoint });
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

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'watch':
        return await watchCommand(rest);
      case 'query':
        return await queryCommand(rest);
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
        throw new UsageError(`unknown command ${JSON.stringify(command)} (commands: watch, query, install-hyperd)`);
    }
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const usage = error instanceof UsageError || error instanceof WatchConfigError || code === 'DUPLICATE_WATCHER' || code === 'HYPERD_NOT_FOUND';
    process.stderr.write(`hyperwatch: ${(error as Error).message ?? String(error)}${error instanceof UsageError ? ' (see --help)' : ''}\n`);
    return usage ? 2 : 1;
  }
}
