/** The option table, after part two: which files of the watched directory are taken, and when. */
import { isBoolean, isNumber, isOneOf, oneOfFlag, shown, wholeNumberFlag } from '../checks.ts';
import type { FlagText, OptionTable } from '../spec.ts';
import { READY_WHEN } from '../watch-options.ts';

const WITH_STABLE = { flag: 'ready', value: 'stable', problem: '--stable-ms goes with --ready stable' } as const;
const WITH_MARKER = { flag: 'ready', value: 'marker', problem: '--marker goes with --ready marker' } as const;

/** The marker file's name by default: Spark, Hadoop and Hive write `_SUCCESS` last. */
export const DEFAULT_MARKER = '_SUCCESS';

/** A marker file's name: one name, no folder in it, not `.` or `..`. */
function isMarkerName(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' && !value.includes('/') && !value.includes('\\') && value !== '.' && value !== '..'
    ? undefined
    : `marker must be a file name such as '_SUCCESS' (no folder), got ${shown(value)}`;
}

/** A list of globs: each a non-empty string. */
function isGlobList(name: string): (value: unknown) => string | undefined {
  return (value) =>
    Array.isArray(value) && value.every((g) => typeof g === 'string' && g !== '')
      ? undefined
      : `${name} must be a list of globs such as ['*.csv'], got ${listShown(value)}`;
}

function listShown(value: unknown): string {
  return Array.isArray(value) ? `[${value.map(shown).join(', ')}]` : shown(value);
}

/** `--include '*.csv' --include '*.tsv'`: each text a glob. */
function globsFlag(flag: string): (text: FlagText) => { value: readonly string[] } | { problem: string } {
  return (text) => {
    const globs = typeof text === 'string' ? [text] : Array.isArray(text) ? text : [];
    return globs.length > 0 && globs.every((g) => g !== '')
      ? { value: globs }
      : { problem: `--${flag} expects a glob such as '*.csv', got ${JSON.stringify(text)}` };
  };
}

const GLOB_LIST_SCHEMA = { type: 'array', items: { type: 'string', minLength: 1 } } as const;

export const INTAKE_OPTIONS = {
  readyWhen: {
    to: 'watcher',
    doc:
      "when a data file is taken: `'sentinel'` once its `X.ready` is there; `'stable'` once its size and modification time have not " +
      'changed for `stableMs` and no process holds it open for writing (Linux), for producers that cannot write a sentinel ' +
      "(see [Producers that cannot write .ready](#producers-that-cannot-write-ready) for what `'stable'` cannot promise); " +
      "`'marker'`: a whole subfolder once it holds its `marker` file, all its data files in one transaction (see " +
      '[Folders with a completion marker](#folders-with-a-completion-marker))',
    default: 'sentinel',
    check: isOneOf('readyWhen', READY_WHEN),
    flag: {
      name: 'ready',
      type: 'string',
      value: '<sentinel|stable|marker>',
      help:
        'take a file once its X.ready is there (default), once it\nhas not changed for --stable-ms (no sentinel needed), or\n' +
        'a whole subfolder once it holds its --marker file',
      parse: oneOfFlag('ready', { sentinel: 'sentinel', stable: 'stable', marker: 'marker' } as const),
    },
    serve: { schema: { enum: [...READY_WHEN] }, fix: 'Use "sentinel", "stable" or "marker".' },
  },
  marker: {
    to: 'watcher',
    doc:
      "`readyWhen: 'marker'`: the file whose presence makes a subfolder of the watched directory one complete unit (Spark, Hadoop " +
      'and Hive write `_SUCCESS` last)',
    default: DEFAULT_MARKER,
    check: isMarkerName,
    flag: {
      name: 'marker',
      type: 'string',
      value: '<name>',
      requires: WITH_MARKER,
      help: 'with --ready marker: the file that completes a folder (default _SUCCESS)',
    },
    serve: { schema: { type: 'string', minLength: 1 }, fix: 'Give a file name, e.g. "_SUCCESS".' },
  },
  stableMs: {
    to: 'watcher',
    doc: "`readyWhen: 'stable'`: how long a file's size and modification time must stay the same before it is taken",
    default: 5000,
    check: isNumber('stableMs', 'a number of milliseconds'),
    flag: {
      name: 'stable-ms',
      type: 'string',
      value: '<ms>',
      requires: WITH_STABLE,
      help: 'with --ready stable: how long a file must stay unchanged (default 5000)',
      parse: wholeNumberFlag('stable-ms'),
    },
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number of milliseconds, at least 100, e.g. 5000.' },
    range: { min: 100 },
  },
  include: {
    to: 'watcher',
    doc:
      "globs over the path relative to the watched directory (`'*.csv'`): only matching files are taken, the others are left alone " +
      '(never claimed, failed or counted; `status` says how many); in sentinel mode the data file is matched, not its `.ready`',
    defaultText: 'every file',
    check: isGlobList('include'),
    flag: {
      name: 'include',
      type: 'string',
      multiple: true,
      value: '<glob>',
      help: "take only files matching it, repeatable, e.g. --include '*.csv'",
      parse: globsFlag('include'),
    },
    serve: { schema: GLOB_LIST_SCHEMA, fix: 'Give a list of globs, e.g. ["*.csv", "*.parquet"].' },
  },
  exclude: {
    to: 'watcher',
    doc: 'globs as for `include`: matching files are left alone, even when `include` matches them',
    defaultText: 'none',
    check: isGlobList('exclude'),
    flag: {
      name: 'exclude',
      type: 'string',
      multiple: true,
      value: '<glob>',
      help: "leave files matching it alone, repeatable, e.g. --exclude 'tmp_*'",
      parse: globsFlag('exclude'),
    },
    serve: { schema: GLOB_LIST_SCHEMA, fix: 'Give a list of globs, e.g. ["tmp_*"].' },
  },
  recursive: {
    to: 'watcher',
    doc:
      'take data files in subfolders too (`a/b/x.csv`, named by that relative path in the ledger, `failed/` and the archive), ' +
      'except `failed/`, the archive and dot-folders, never through symbolic links; see [Subfolders](#subfolders)',
    default: false,
    check: isBoolean('recursive'),
    flag: { name: 'recursive', type: 'boolean', help: 'take data files in subfolders too (named by their relative path)' },
    serve: { schema: { type: 'boolean' }, fix: 'Use true or false (no quotes).' },
  },
  partitionColumns: {
    to: 'watcher',
    doc:
      "with `recursive`: `key=value` folders on a file's path (`date=2026-12-01/region=eu/`) become columns on its rows, " +
      'typed DATE, BIGINT or TEXT, `__HIVE_DEFAULT_PARTITION__` NULL; see [Partition folders](#partition-folders)',
    default: false,
    check: isBoolean('partitionColumns'),
    flag: { name: 'partition-columns', type: 'boolean', help: 'with --recursive: key=value folders become columns' },
    serve: { schema: { type: 'boolean' }, fix: 'Use true or false (no quotes).' },
  },
} as const satisfies Partial<OptionTable>;
