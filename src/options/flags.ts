/**
 * The flags of `hyperwatch watch` (and the database flags of `query` and `history`), from the
 * option table: their parseArgs configuration, their `--help` lines, and their text read into
 * settings. A problem is a message naming the flag; the CLI makes it a usage error (exit 2).
 */
import type { DbChoice } from '../compose.ts';
import { modeKeyProblem } from './load-modes.ts';
import type { FlagResult, FlagSpec, FlagText } from './spec.ts';
import { OPTION_ENTRIES, type OptionEntry } from './table.ts';
import { csvTogetherProblem } from './table/csv-dialect.ts';
import type { WatchOptions } from './watch-options.ts';

type FlagEntry = OptionEntry & { readonly flag: FlagSpec<unknown> };
type ParseArgsOption = { readonly type: 'string' | 'boolean'; readonly multiple?: boolean };
export type FlagValues = Readonly<Record<string, FlagText | undefined>>;

const FLAGGED: readonly FlagEntry[] = OPTION_ENTRIES.flatMap((e) => (e.spec.flag ? [{ ...e, flag: e.spec.flag }] : []));

function configOf(entries: readonly FlagEntry[]): Record<string, ParseArgsOption> {
  return Object.fromEntries(entries.map(({ flag }) => [flag.name, { type: flag.type, ...(flag.multiple ? { multiple: true } : {}) }]));
}

/** The database flags every command that opens the database takes (`--adapter`, `--url`, ...). */
export const DB_FLAG_ENTRIES = FLAGGED.filter((e) => e.spec.to === 'database' && e.flag.everyDbCommand);
/** The rest of `hyperwatch watch`'s settings flags, in the table's order. */
export const WATCH_FLAG_ENTRIES = FLAGGED.filter((e) => !DB_FLAG_ENTRIES.includes(e));

export const DB_FLAGS: Readonly<Record<string, ParseArgsOption>> = configOf(DB_FLAG_ENTRIES);
export const WATCH_FLAGS: Readonly<Record<string, ParseArgsOption>> = configOf(WATCH_FLAG_ENTRIES);

const HELP_COLUMN = 26;

/** One flag's `--help` lines: `  --name <value>` and its text from column 26, as the other lines of the help. */
export function helpLine(usage: string, help: string): string {
  const head = `  ${usage}`;
  const first = head.length <= HELP_COLUMN - 2 ? head.padEnd(HELP_COLUMN) : `${head}  `;
  return first + help.split('\n').join(`\n${' '.repeat(HELP_COLUMN)}`);
}

export function flagsHelp(entries: readonly FlagEntry[]): string {
  return entries.map(({ flag }) => helpLine(`--${flag.name}${flag.value ? ` ${flag.value}` : ''}`, flag.help)).join('\n');
}

function read(entries: readonly FlagEntry[], values: FlagValues): FlagResult<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const { name, flag } of entries) {
    const text = values[flag.name];
    if (text === undefined) continue;
    if (flag.requires && values[flag.requires.flag] !== flag.requires.value) return { problem: flag.requires.problem };
    const result = flag.parse ? flag.parse(text) : { value: text };
    if ('problem' in result) return result;
    out[name] = result.value;
  }
  return { value: out };
}

/** The watcher's settings that `hyperwatch watch`'s flags give (those for the database: `dbChoiceFromFlags`). */
export function watchOptionsFromFlags(values: FlagValues): FlagResult<WatchOptions> {
  const result = read(
    WATCH_FLAG_ENTRIES.filter((e) => e.spec.to === 'watcher'),
    values,
  );
  if ('problem' in result) return result;
  // Flags that are good alone but not together (--decimal-separator , with the default delimiter).
  const together = csvTogetherProblem(result.value);
  const flag = together && FLAGGED.find((e) => e.name === together.option)?.flag.name;
  if (together && flag) return { problem: `--${flag} ${together.problem.replace('(header is not false)', '(give --no-header too)')}` };
  const options = result.value as WatchOptions;
  const combined = modeKeyProblem(options.mode, options.key);
  if (combined)
    return {
      problem:
        combined.field === 'key'
          ? '--key needs --mode upsert or --mode replace-keys'
          : `--mode ${options.mode} needs --key (e.g. --key id)`,
    };
  return { value: options };
}

/** The database settings the flags give (`--adapter`, `--database`, `--release-idle-ms`, ...), unchecked. */
export function dbChoiceFromFlags(values: FlagValues): FlagResult<DbChoice> {
  const result = read(
    FLAGGED.filter((e) => e.spec.to === 'database'),
    values,
  );
  return 'problem' in result ? result : { value: result.value as DbChoice };
}
