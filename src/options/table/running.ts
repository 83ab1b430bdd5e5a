/**
 * The option table, part two: what the watcher runs with (program objects the API alone takes),
 * how much at once, and its timings.
 */
import { fsAdapterByName } from '../../compose.ts';
import { DEFAULT_BATCH_FILES, DEFAULT_LEASE_MS, DEFAULT_MAX_CONCURRENT, MAX_CONCURRENT_LIMIT } from '../../constants.ts';
import { hasMethods, isNumber, ledgerRetentionProblem, shown, wholeNumberFlag } from '../checks.ts';
import type { FlagText, OptionTable } from '../spec.ts';
import type { FsAdapter } from '../../types.ts';

/** The first and the largest delay between retries of a transient failure. */
export const DEFAULT_RETRY_DELAY_MS = { initial: 100, max: 10000 } as const;

const ms = (name: string) => isNumber(name, 'a number of milliseconds');

export const RUNNING_OPTIONS = {
  registry: {
    to: 'watcher',
    doc: 'where the watcher is registered',
    defaultText: '`defaultRegistry`',
    check: hasMethods('registry', 'a WatcherRegistry', ['reserve', 'settle', 'remove', 'get']),
  },
  fs: {
    to: 'watcher',
    doc:
      'the filesystem event source: `nodeFsAdapter()`, `parcelFsAdapter()`, `denoFsAdapter()` or `pollFsAdapter({ intervalMs })`; in a ' +
      'serve config and as `--fs` its name: `node`, `parcel`, `deno`, `poll` or `poll:<ms>`',
    defaultText: 'per runtime',
    check: hasMethods('fs', 'a filesystem adapter', ['subscribe']),
    flag: {
      name: 'fs',
      type: 'string',
      value: '<node|parcel|deno|poll[:ms]>',
      help: 'filesystem event source (default: node on Linux,\ndeno on Deno, parcel elsewhere; poll for NFS/SMB, every 1000 ms)',
      parse: (text: FlagText) => {
        const fs = typeof text === 'string' ? fsAdapterByName(text) : undefined;
        return fs ? { value: fs } : { problem: `--fs is node, parcel, deno (on Deno) or poll[:ms], got ${JSON.stringify(text)}` };
      },
    },
    serve: {
      schema: { type: 'string', pattern: '^(node|parcel|deno|poll(:[1-9][0-9]*)?)$' },
      fix: 'Use "node", "parcel", "deno", "poll" or "poll:2000".',
      read: (name: string): FsAdapter | undefined => fsAdapterByName(name),
    },
  },
  plugins: {
    to: 'watcher',
    doc: 'extra ingesters; they replace built-ins for the extensions they list',
    check: (value: unknown) => (Array.isArray(value) ? undefined : `plugins must be a list of ingester plugins, got ${shown(value)}`),
  },
  logger: {
    to: 'watcher',
    doc: '`{ debug, info, warn, error }(message, fields)`; `lineLogger(write, { json })` makes one',
    defaultText: 'silent',
    check: hasMethods('logger', 'a logger', ['debug', 'info', 'warn', 'error']),
  },
  signal: {
    to: 'watcher',
    doc:
      'an `AbortSignal`: aborting it stops the watcher as `stop()` does, also while `openWatcher` is still starting (a long recovery ' +
      'or initial sweep: it then resolves with the handle, stopping)',
    check: hasMethods('signal', 'an AbortSignal', ['addEventListener', 'removeEventListener']),
  },
  maxConcurrent: {
    to: 'watcher',
    doc:
      'transactions (a file, or a group of small files) in parallel, each on its own pooled connection; ' +
      `0 means the default, more than ${MAX_CONCURRENT_LIMIT} is clamped to ${MAX_CONCURRENT_LIMIT}`,
    default: DEFAULT_MAX_CONCURRENT,
    check: isNumber(
      'maxConcurrent',
      `a number of parallel ingests (0: the default, ${DEFAULT_MAX_CONCURRENT}; at most ${MAX_CONCURRENT_LIMIT})`,
    ),
    flag: {
      name: 'max-concurrent',
      type: 'string',
      value: '<n>',
      help: 'parallel ingests (default 4, at most 32)',
      parse: wholeNumberFlag('max-concurrent'),
    },
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number from 1 to 32, e.g. 4.' },
    range: { min: 1, max: MAX_CONCURRENT_LIMIT },
  },
  batchFiles: {
    to: 'watcher',
    doc:
      'most files committed together in one transaction when several small files (up to 1 MiB each) are ready at once; 1 commits every ' +
      'file alone. A lone file never waits for company. Claimed files are held open until they settle, at most 512 across all tasks ' +
      '(so with `maxConcurrent` 32, groups of 16)',
    default: DEFAULT_BATCH_FILES,
    check: isNumber('batchFiles', 'a number of files (1: every file alone)'),
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number, at least 1, e.g. 100.' },
    range: { min: 1 },
  },
  queueLimit: {
    to: 'watcher',
    doc: 'ready files held in memory; beyond it the next rescan finds the rest',
    default: 10000,
    check: isNumber('queueLimit', 'a number of files'),
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number, at least 1, e.g. 10000.' },
    range: { min: 1 },
  },
  rescanIntervalMs: {
    to: 'watcher',
    doc: 'full directory rescan, to catch anything events missed',
    default: 5000,
    check: ms('rescanIntervalMs'),
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number of milliseconds, at least 10, e.g. 5000.' },
    range: { min: 10 },
  },
  orphanGraceMs: {
    to: 'watcher',
    doc: 'a `.ready` whose data file is still missing after this is reported (`ORPHAN_READY`)',
    default: 30000,
    check: ms('orphanGraceMs'),
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number of milliseconds, e.g. 30000.' },
    range: { min: 0 },
  },
  stopTimeoutMs: {
    to: 'watcher',
    doc: 'how long `stop` waits for in-flight files before rolling them back',
    default: 30000,
    check: ms('stopTimeoutMs'),
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number of milliseconds, e.g. 30000.' },
    range: { min: 0 },
  },
  retryDelayMs: {
    to: 'watcher',
    doc: 'backoff for transient database errors (retried until stop): the first and the largest delay',
    defaultText: '`{ initial: 100, max: 10000 }`',
    check: (value: unknown) => {
      const delays = value as { initial?: unknown; max?: unknown } | null;
      const ok =
        typeof delays === 'object' &&
        delays !== null &&
        [delays.initial, delays.max].every((d) => d === undefined || (typeof d === 'number' && !Number.isNaN(d)));
      return ok ? undefined : `retryDelayMs must be { initial?, max? } in milliseconds, got ${shown(value)}`;
    },
    serve: {
      schema: {
        type: 'object',
        additionalProperties: false,
        properties: {
          initial: {
            type: 'integer',
            minimum: 1,
            default: DEFAULT_RETRY_DELAY_MS.initial,
            'x-fix': 'Use a whole number of milliseconds, e.g. 100.',
          },
          max: {
            type: 'integer',
            minimum: 1,
            default: DEFAULT_RETRY_DELAY_MS.max,
            'x-fix': 'Use a whole number of milliseconds, e.g. 10000.',
          },
        },
      },
      fix: 'Write {"initial": 100, "max": 10000}.',
    },
  },
  checkpointDelayMs: {
    to: 'watcher',
    doc:
      'on Hyper, committed files wait in staging for a durability checkpoint: it runs at the first moment no file is in flight once ' +
      'this long has passed since the first commit (at the latest twice this long), or after `checkpointEvery` files',
    default: 1000,
    check: ms('checkpointDelayMs'),
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number of milliseconds, e.g. 1000.' },
    range: { min: 0 },
  },
  checkpointEvery: {
    to: 'watcher',
    doc: 'on Hyper, a checkpoint after this many committed files at the latest (see `checkpointDelayMs`)',
    default: 1000,
    check: isNumber('checkpointEvery', 'a number of files'),
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number, at least 1, e.g. 1000.' },
    range: { min: 1 },
  },
  leaseMs: {
    to: 'watcher',
    doc:
      'several processes on one directory: each renews a lease in the database every third of this; one that stops renewing for this ' +
      'long is taken over (see [Running several processes](#running-several-processes))',
    default: DEFAULT_LEASE_MS,
    check: ms('leaseMs'),
    flag: {
      name: 'lease',
      type: 'string',
      value: '<ms>',
      help:
        'lease of this process when several watch one directory: another\ntakes its files over when it stops renewing it for this long ' +
        '(default 30000)',
      parse: wholeNumberFlag('lease'),
    },
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number of milliseconds, at least 300, e.g. 30000.' },
    range: { min: 300 },
  },
  ledgerRetention: {
    to: 'watcher',
    doc:
      'ledger rows of this directory older than this (`90d`, `12h`, `30m`; s, m, h, d, w, combined as `1d12h`) are removed at start ' +
      'and once a day, never one a staged claim or a takeover still needs; a row removed is also a checksum `skipDuplicateContent` no ' +
      'longer finds',
    defaultText: 'kept for ever',
    check: (value: unknown) => {
      const problem = ledgerRetentionProblem(value);
      return problem ? `ledgerRetention ${problem}` : undefined;
    },
    flag: {
      name: 'ledger-retention',
      type: 'string',
      value: '<duration>',
      help: 'remove ledger rows of this directory older than this, at\nstart and once a day, e.g. 90d, 12h, 30m (default: keep them)',
      parse: (text: FlagText) => {
        const problem = ledgerRetentionProblem(text);
        return problem ? { problem: `--ledger-retention ${problem}` } : { value: text as string };
      },
    },
    serve: { schema: { type: 'string' }, fix: 'Give a duration, e.g. "90d", "12h" or "30m"; leave it out to keep the ledger whole.' },
  },
} as const satisfies Partial<OptionTable>;
