/**
 * The option table: every setting a watcher takes, once, with its default, its check, its CLI flag,
 * its serve config key and its one-line doc. The API's checks and defaults (resolve.ts), the flags
 * of `hyperwatch watch` (flags.ts), serve configs (serve.ts), the JSON Schema and the README's
 * options table (docs.ts, written by `npm run options`) all come from it.
 *
 * Adding a setting: its field in `WatchOptions` (watch-options.ts; `DatabaseSettings` for one the
 * database adapter reads), its entry in the part of table/ it belongs to, `npm run options`, and
 * the code that uses it (for the watcher: a field of `ResolvedOptions`).
 */
import type { OptionSpec, OptionTable, SettingName } from './spec.ts';
import { DATABASE_OPTIONS } from './table/database.ts';
import { INTAKE_OPTIONS } from './table/intake.ts';
import { RUNNING_OPTIONS } from './table/running.ts';
import { SETTLE_OPTIONS } from './table/settle.ts';
import { TABLE_OPTIONS } from './table/tables.ts';
import { CSV_DIALECT_OPTIONS } from './table/csv-dialect.ts';
import { TEXT_OPTIONS } from './table/text.ts';

/** In the order the README, the schema and `--help` list them. */
export const OPTIONS = {
  ...DATABASE_OPTIONS,
  ...RUNNING_OPTIONS,
  ...INTAKE_OPTIONS,
  ...TABLE_OPTIONS,
  ...TEXT_OPTIONS,
  ...CSV_DIALECT_OPTIONS,
  ...SETTLE_OPTIONS,
} as const satisfies OptionTable;

export interface OptionEntry {
  readonly name: SettingName;
  readonly spec: OptionSpec<unknown>;
}

/** The table as a list, in its order. */
export const OPTION_ENTRIES: readonly OptionEntry[] = Object.entries(OPTIONS).map(([name, spec]) => ({
  name: name as SettingName,
  spec: spec as OptionSpec<unknown>,
}));

/** Settings of the API alone: program objects, which neither a flag nor a config file can give. */
export const API_ONLY = OPTION_ENTRIES.filter((e) => !e.spec.serve && !e.spec.flag).map((e) => e.name);
