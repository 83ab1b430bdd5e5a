/**
 * The shape of one entry of the option table (table.ts): everything the API, the CLI, serve
 * configs, the JSON Schema and the README need to know about one setting.
 */
import type { DatabaseSettings, Settings, WatchOptions } from './watch-options.ts';

/** A fragment of JSON Schema (draft-07), as written into schema/hyperwatch.config.schema.json. */
export type JsonSchema = { readonly [key: string]: unknown };

/** A flag's text as node:util's parseArgs hands it over. */
export type FlagText = string | boolean | readonly string[];

/** A value read from a flag, or a problem that names the flag and what it takes. */
export type FlagResult<T> = { readonly value: T } | { readonly problem: string };

export interface FlagSpec<T> {
  /** The flag without its dashes: `max-concurrent`. */
  readonly name: string;
  /** A boolean flag takes no value; `multiple`: repeatable (`--source-column a=b --source-column c=d`). */
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  /** As `hyperwatch watch --help` shows the flag's value: `<n>`, `<fail|skip>`. */
  readonly value?: string;
  /** The help text; its lines broken by hand (`\n`) to fit 100 columns, indented by the help printer. */
  readonly help: string;
  /** The flag's text → the setting's value. Absent: the text is the value. */
  readonly parse?: (text: FlagText) => FlagResult<T>;
  /** A flag that means nothing without another one's value: refused, with `problem`, when that is missing. */
  readonly requires?: { readonly flag: string; readonly value: string; readonly problem: string };
  /** Database settings: the flag of every command that opens the database (query, history), not only of watch. */
  readonly everyDbCommand?: boolean;
}

export interface ServeSpec<T> {
  /** The value's JSON Schema, without `default`, `description` and `x-fix` (added from the entry). */
  readonly schema: JsonSchema;
  /** What to do about a bad value: the schema's `x-fix`, and the fix of a problem `check` finds. */
  readonly fix: string;
  /** The fix of a problem `check` finds, where it is not `fix`. */
  readonly checkFix?: string;
  /** The config's value → the setting's (`fs`: a name → an adapter). Absent: the same value. */
  readonly read?: (value: never) => T | undefined;
}

export interface OptionSpec<T> {
  /**
   * One line on what the setting does: the README's options table and, with links reduced to their
   * text, the schema's `description`.
   */
  readonly doc: string;
  /** The value an unset setting takes, where it is one JSON value: the schema's `default`. */
  readonly default?: T extends string | number | boolean ? T : never;
  /** The default as the README writes it, where `default` does not say it (`per runtime`, `4 GiB`). */
  readonly defaultText?: string;
  /**
   * What is wrong with a value given, as a message that begins with the setting's name and names
   * what it takes; undefined when it is good. The API throws it as a WatchConfigError; serve
   * configs report it at the setting's path, without the name. Database settings without one are
   * checked together by `checkDbChoice` (compose.ts), which knows the adapter.
   */
  readonly check?: (value: unknown) => string | undefined;
  /**
   * Numbers: the range a serve config must keep to (the schema's `minimum` and `maximum`); the API
   * takes a value outside it as the nearest end (resolve.ts).
   */
  readonly range?: { readonly min: number; readonly max?: number };
  /** `hyperwatch watch --<name>`; absent: no flag. */
  readonly flag?: FlagSpec<T>;
  /** The key (the setting's own name) in a serve config's watcher; absent: API only. */
  readonly serve?: ServeSpec<T>;
  /**
   * Where the setting goes: to the watcher (WatchOptions), or to the database adapter the
   * composition root builds (compose.ts: `createDbAdapter`), as `database` and `endpoint` do.
   */
  readonly to: 'watcher' | 'database';
  /** `false`: not a `WatchOptions` field, a CLI flag and serve key only (`DatabaseSettings`). */
  readonly api?: false;
}

/**
 * One entry per setting, no more, no fewer: the compiler holds the table to `WatchOptions` and
 * `DatabaseSettings`, the latter marked `api: false` (not WatchOptions: a flag and a serve key only).
 */
export type OptionTable = { readonly [K in keyof WatchOptions]-?: OptionSpec<NonNullable<WatchOptions[K]>> & { readonly api?: never } } & {
  readonly [K in keyof DatabaseSettings]-?: OptionSpec<NonNullable<DatabaseSettings[K]>> & { readonly api: false };
};

export type SettingName = keyof Settings;
