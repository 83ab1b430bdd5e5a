/** Pieces every `hyperwatch` command shares: argument parsing, usage errors, printing rows. */
import process from 'node:process';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { checkDbChoice, createDbAdapter, flagName, readerDb, type ReaderDb } from './compose.ts';
import type { DbAdapter, Logger } from './types.ts';

/** A mistake on the command line: exit code 2, and a pointer to --help. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;
const HELP_FLAG = { help: { type: 'boolean', short: 'h' } } as const;
type Parsed<T extends Options> = ReturnType<typeof parseArgs<{ args: string[]; options: T & typeof HELP_FLAG; allowPositionals: true; strict: true }>>;

/** node:util parseArgs with -h/--help added; its errors become usage errors. */
export function parse<T extends Options>(args: string[], options: T): Parsed<T> {
  try {
    return parseArgs({ args, options: { ...options, ...HELP_FLAG }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

export function printRows(rows: readonly Record<string, unknown>[], json: boolean): void {
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

/** The database options every command that opens one takes. */
export const DB_FLAGS = {
  adapter: { type: 'string' },
  url: { type: 'string' },
  database: { type: 'string' },
  endpoint: { type: 'string' },
  'endpoint-reads-files': { type: 'string' },
} as const;

export const DB_HELP = `  --adapter <hyper|postgres>  the database (default hyper)
  --database <file>       hyper: the .hyper file on the embedded hyperd (default ./hyperwatch.hyper)
  --endpoint <[user@]host:port>  hyper: use a running hyperd instead of the embedded one
                          (password, if it asks for one: HYPERWATCH_ENDPOINT_PASSWORD)
  --endpoint-reads-files <auto|yes|no>  with --endpoint: whether that hyperd reads the
                          claimed files itself (default auto: probed at start; else streamed)
  --url <postgres://...>  postgres: the server (default: the DATABASE_URL environment variable)`;

/** The adapter the database flags name; a wrong mixture is a usage error naming the flag. */
export function dbFromFlags(values: { adapter?: string; url?: string; database?: string; endpoint?: string; 'endpoint-reads-files'?: string; 'release-idle-ms'?: string }, logger?: Logger, dir?: string): DbAdapter {
  const reads = values['endpoint-reads-files'];
  const idle = values['release-idle-ms'];
  if (idle !== undefined && !/^\d+$/.test(idle)) throw new UsageError(`--release-idle-ms expects a whole number of milliseconds (0: never let go), got ${JSON.stringify(idle)}`);
  const choice = {
    adapter: values.adapter,
    url: values.url,
    database: values.database,
    endpoint: values.endpoint,
    ...(reads !== undefined ? { endpointReadsFiles: reads } : {}),
    ...(idle !== undefined ? { releaseIdleMs: Number(idle) } : {}),
    ...(dir !== undefined ? { dir } : {}),
  };
  const problems = checkDbChoice(choice, process.env, true);
  if (problems.length > 0) throw new UsageError(problems.map((p) => `${flagName(p.field)} ${p.problem}. ${p.fix}`).join(' '));
  return createDbAdapter(choice, logger);
}

/** The database of `query` and `history` from their flags (see `readerDb`), or a usage error. */
export function readerDbFromFlags(values: { adapter?: string; url?: string; database?: string; endpoint?: string }): ReaderDb {
  const choice = { adapter: values.adapter, url: values.url, database: values.database, endpoint: values.endpoint };
  const problems = checkDbChoice(choice, process.env, true);
  if (problems.length > 0) throw new UsageError(problems.map((p) => `--${p.field} ${p.problem}. ${p.fix}`).join(' '));
  return readerDb(choice);
}

/**
 * SIGINT/SIGTERM stop the watchers (in-flight files finish, the rest stay claimed for the next
 * start): the returned signal is aborted at the first one. A second one ends the process at
 * once, as an impatient Ctrl-C expects; nothing is lost by that either (claimed files are
 * finished by the next start, or by another process after the lease).
 */
export function stopOnSignals(logger: Logger): AbortSignal {
  const controller = new AbortController();
  const on = (signal: 'SIGINT' | 'SIGTERM') => {
    if (controller.signal.aborted) {
      logger.warn(`${signal} again: exiting now; files left claimed are finished by the next start`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    logger.info(`${signal}: stopping (in-flight files finish first; ${signal} again exits at once)`);
    controller.abort(signal);
  };
  process.on('SIGINT', () => on('SIGINT'));
  process.on('SIGTERM', () => on('SIGTERM'));
  return controller.signal;
}
