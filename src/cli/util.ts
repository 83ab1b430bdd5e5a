/** Pieces every `hyperwatch` command shares: argument parsing, usage errors, printing rows. */
import process from 'node:process';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { type DatabaseVersion, parseDatabaseVersion } from '../../adapters/db/hyper/index.ts';
import { checkDbChoice, createDbAdapter, flagName, readerDb, type ReaderDb, type ReaderOptions } from '../compose.ts';
import { sizeFlag } from '../options/checks.ts';
import { DB_FLAG_ENTRIES, dbChoiceFromFlags, type FlagValues, flagsHelp } from '../options/flags.ts';
import type { DbAdapter, Logger } from '../types.ts';

/** A mistake on the command line: exit code 2, and a pointer to --help. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;
const HELP_FLAG = { help: { type: 'boolean', short: 'h' } } as const;
type Parsed<T extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: T & typeof HELP_FLAG; allowPositionals: true; strict: true }>
>;

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
  const cell = (v: unknown) =>
    v === null || v === undefined ? '' : v instanceof Date ? v.toISOString() : typeof v === 'object' ? toJson(v) : String(v);
  const table = rows.map((r) => columns.map((c) => cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...table.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((v, i) => v.padEnd(widths[i]!))
      .join(' | ')
      .trimEnd();
  const body = [line(columns), widths.map((w) => '-'.repeat(w)).join('-+-'), ...table.map(line)].join('\n');
  process.stdout.write(`${body}\n(${rows.length} row${rows.length === 1 ? '' : 's'})\n`);
}

/** The database options every command that opens one takes, from the option table. */
export { DB_FLAGS } from '../options/flags.ts';

export const DB_HELP: string = flagsHelp(DB_FLAG_ENTRIES);

/** The adapter the database flags name; a wrong mixture is a usage error naming the flag. */
export function dbFromFlags(values: FlagValues, logger?: Logger, dir?: string): DbAdapter {
  const read = dbChoiceFromFlags(values);
  if ('problem' in read) throw new UsageError(read.problem);
  const choice = { ...read.value, ...(dir !== undefined ? { dir } : {}) };
  const problems = checkDbChoice(choice, process.env, true);
  if (problems.length > 0) throw new UsageError(problems.map((p) => `${flagName(p.field)} ${p.problem}. ${p.fix}`).join(' '));
  return createDbAdapter(choice, logger);
}

export const DATABASE_VERSION_HELP = `  --database-version <0|1|2|3|4>  hyper: the file format version of a new .hyper file
                          (default 2; which Tableau releases open which: README, Database versions)`;

/** `--database-version`: one of 0–4, else a usage error (exit 2). */
export function databaseVersionFlag(value: string | undefined): DatabaseVersion | undefined {
  if (value === undefined) return undefined;
  const version = parseDatabaseVersion(value);
  if (version === undefined)
    throw new UsageError(
      `--database-version is 0, 1, 2, 3 or 4, got ${JSON.stringify(value)} (0 opens in every Tableau release, 2 in ` +
        `2020.4.15 / 2022.1.2 and later, 3 adds 38-digit numerics, 4 adds 32-bit floats)`,
    );
  return version;
}

/** The database of `query` and `history` from their flags (see `readerDb`), or a usage error. */
export function readerDbFromFlags(values: FlagValues, reading: ReaderOptions = {}): ReaderDb {
  const text = (flag: string) => (typeof values[flag] === 'string' ? (values[flag] as string) : undefined);
  // A reader has no claimed files for an endpoint to read: --endpoint-reads-files does not concern it.
  const choice = { adapter: text('adapter'), url: text('url'), database: text('database'), endpoint: text('endpoint') };
  const problems = checkDbChoice(choice, process.env, true);
  if (problems.length > 0) throw new UsageError(problems.map((p) => `--${p.field} ${p.problem}. ${p.fix}`).join(' '));
  return readerDb(choice, reading);
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

/** `4G`, `512M`, `1048576` → bytes (K, M, G, T: powers of 1024); a usage error naming `flag` otherwise. */
export function byteCount(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const result = sizeFlag(flag.replace(/^--/, ''))(value);
  if ('problem' in result) throw new UsageError(result.problem);
  return result.value;
}
