/**
 * The option table, part one: which database a watcher writes to. `database` and `endpoint` are
 * WatchOptions too; the rest are CLI flags and serve keys only (the API takes an adapter as `db`).
 * All go to the composition root (compose.ts), which checks them together (`checkDbChoice`: a Hyper
 * setting on a PostgreSQL watcher, a missing URL) and builds the adapter.
 */
import { DEFAULT_DATABASE, DEFAULT_RELEASE_IDLE_MS, parseDatabaseVersion } from '../../../adapters/db/hyper/index.ts';
import { hasMethods, isText } from '../checks.ts';
import type { FlagText, OptionTable } from '../spec.ts';

export const DATABASE_OPTIONS = {
  adapter: {
    to: 'database',
    api: false,
    doc: 'the database: `hyper` (the embedded Tableau Hyper, or a running `hyperd`) or `postgres`; see [Adapters](#adapters)',
    default: 'hyper',
    flag: { name: 'adapter', type: 'string', value: '<hyper|postgres>', help: 'the database (default hyper)', everyDbCommand: true },
    serve: { schema: { enum: ['hyper', 'postgres'] }, fix: 'Use "hyper" or "postgres".' },
  },
  database: {
    to: 'database',
    doc: 'the `.hyper` file on the embedded `hyperd` (created when missing)',
    default: DEFAULT_DATABASE,
    defaultText: '`./hyperwatch.hyper`',
    check: isText('database', 'the path of a .hyper file'),
    flag: {
      name: 'database',
      type: 'string',
      value: '<file>',
      help: 'hyper: the .hyper file on the embedded hyperd (default ./hyperwatch.hyper)',
      everyDbCommand: true,
    },
    serve: { schema: { type: 'string', minLength: 1 }, fix: 'Give a path such as "./events.hyper".' },
  },
  endpoint: {
    to: 'database',
    doc:
      '`host:port` or `user@host:port` of a running `hyperd` to use instead of the embedded one (password: ' +
      '`HYPERWATCH_ENDPOINT_PASSWORD`; see [Adapters](#adapters))',
    check: isText('endpoint', 'host:port or user@host:port'),
    flag: {
      name: 'endpoint',
      type: 'string',
      value: '<[user@]host:port>',
      help: 'hyper: use a running hyperd instead of the embedded one\n(password, if it asks for one: HYPERWATCH_ENDPOINT_PASSWORD)',
      everyDbCommand: true,
    },
    serve: {
      schema: { type: 'string', pattern: '^[^:\\s]+:\\d+$' },
      fix: 'Write host:port or user@host:port, e.g. "127.0.0.1:7483"; the password goes in HYPERWATCH_ENDPOINT_PASSWORD.',
    },
  },
  endpointReadsFiles: {
    to: 'database',
    api: false,
    doc:
      'with `endpoint`: whether that `hyperd` reads the claimed files itself at their paths (`auto`: probed at start with a file in ' +
      'the staging folder; `no`: files are streamed to it)',
    default: 'auto',
    flag: {
      name: 'endpoint-reads-files',
      type: 'string',
      value: '<auto|yes|no>',
      help: 'with --endpoint: whether that hyperd reads the\nclaimed files itself (default auto: probed at start; else streamed)',
      everyDbCommand: true,
    },
    serve: { schema: { enum: ['auto', 'yes', 'no'] }, fix: 'Use "auto", "yes" or "no".' },
  },
  url: {
    to: 'database',
    api: false,
    doc: "with `adapter` `postgres`: the server's connection URL",
    defaultText: '`DATABASE_URL`',
    flag: {
      name: 'url',
      type: 'string',
      value: '<postgres://...>',
      help: 'postgres: the server (default: the DATABASE_URL environment variable)',
      everyDbCommand: true,
    },
    serve: {
      schema: { type: 'string', pattern: '^postgres(ql)?://' },
      fix: 'Write a URL such as "postgres://user:password@host:5432/db", or leave it out and set DATABASE_URL.',
    },
  },
  releaseIdleMs: {
    to: 'database',
    api: false,
    doc:
      'Hyper: idle this long (ms) after a checkpoint, the watcher lets go of the `.hyper` file so other programs can open it; 0 keeps ' +
      'it (see [Reading while a watcher runs](#reading-while-a-watcher-runs))',
    default: DEFAULT_RELEASE_IDLE_MS,
    flag: {
      name: 'release-idle-ms',
      type: 'string',
      value: '<ms>',
      help: 'hyper: idle this long after a checkpoint, let go of the .hyper file so\nother programs can open it (default 2000; 0: keep it)',
      parse: (text: FlagText) =>
        typeof text === 'string' && /^\d+$/.test(text)
          ? { value: Number(text) }
          : { problem: `--release-idle-ms expects a whole number of milliseconds (0: never let go), got ${JSON.stringify(text)}` },
    },
    serve: { schema: { type: 'integer' }, fix: 'Use a whole number of milliseconds, e.g. 2000, or 0 to keep the file.' },
    range: { min: 0 },
  },
  databaseVersion: {
    to: 'database',
    api: false,
    doc:
      'Hyper: the file format version of a new `.hyper` file (an existing one keeps its own). It decides which Tableau releases open the ' +
      'file: 0 every release; 1 Desktop/Server 2019.2.10, 2019.3.6, 2019.4.5, 2020.1.1 and later; 2 2020.4.15, 2021.1.12, 2021.2.9, ' +
      '2021.3.8, 2021.4.4, 2022.1.2 and later; 3 (38-digit numerics) Desktop 2022.4.1 / Server 2023.1 and later; 4 (32-bit ' +
      'floats) 2024.3 and later',
    default: 2,
    flag: {
      name: 'database-version',
      type: 'string',
      value: '<0|1|2|3|4>',
      help: 'hyper: the file format version of a new .hyper file\n(default 2; which Tableau releases open which: README, Options)',
      parse: (text: FlagText) => {
        const version = typeof text === 'string' ? parseDatabaseVersion(text) : undefined;
        return version !== undefined
          ? { value: version }
          : {
              problem:
                `--database-version is 0, 1, 2, 3 or 4, got ${JSON.stringify(text)} (0 opens in every Tableau release, ` +
                '2 in 2020.4.15 / 2022.1.2 and later, 3 adds 38-digit numerics, 4 adds 32-bit floats)',
            };
      },
    },
    serve: { schema: { enum: [0, 1, 2, 3, 4] }, fix: 'Use 0, 1, 2, 3 or 4, e.g. 2 (opens in Tableau 2020.4.15 / 2022.1.2 and later).' },
  },
  db: {
    to: 'database',
    doc:
      'a DB adapter instance (`createHyperAdapter()`, `createPostgresAdapter()` or your own); overrides `database` and `endpoint`; you ' +
      'close it',
    check: hasMethods('db', 'a DB adapter', ['openPool', 'sqlType']),
  },
} as const satisfies Partial<OptionTable>;
