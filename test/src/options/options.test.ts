/**
 * The option table (src/options/table.ts) and what comes from it: the README's options table and
 * the serve config's JSON Schema are what it gives (run `npm run options` after changing it), every
 * setting's check refuses a bad value with a WatchConfigError naming the setting, flags and serve
 * settings read into the same WatchOptions. Pure logic: no database.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { optionDocuments } from '../../../scripts/options.ts';
import { openWatcher, WatchConfigError } from '../../../src/index.ts';
import { formatJson, readmeOptionsTable } from '../../../src/options/docs.ts';
import {
  DB_FLAG_ENTRIES,
  dbChoiceFromFlags,
  flagsHelp,
  WATCH_FLAG_ENTRIES,
  WATCH_FLAGS,
  watchOptionsFromFlags,
} from '../../../src/options/flags.ts';
import { checkOptions, resolveOptions } from '../../../src/options/resolve.ts';
import { plainText, SERVED, settingIssues, watchOptionsOf, watcherSchemaProperties } from '../../../src/options/serve.ts';
import { API_ONLY, OPTION_ENTRIES, OPTIONS } from '../../../src/options/table.ts';
import { loadSchema } from '../../../src/serve/config.ts';
import { ROOT } from '../../helpers/root.ts';

describe('the option table', () => {
  it('README.md and the JSON Schema are what the table gives (else: npm run options)', () => {
    for (const doc of optionDocuments(ROOT)) assert.equal(doc.now, doc.wanted, `${doc.path} is stale: run npm run options`);
  });

  it('the schema it writes compiles, and holds every served setting with its default, range and fix', () => {
    const schema = loadSchema();
    const ajv = new Ajv({ allErrors: true, strict: true });
    ajv.addKeyword('x-fix');
    ajv.compile(schema);
    const properties = (schema.definitions as { watcher: { properties: Record<string, Record<string, unknown>> } }).watcher.properties;
    assert.deepEqual(Object.keys(properties), ['dir', 'table', ...SERVED.map((e) => e.name)]);
    assert.deepEqual(properties.maxConcurrent, {
      ...watcherSchemaProperties().maxConcurrent,
      type: 'integer',
      minimum: 1,
      maximum: 32,
      default: 4,
    });
    assert.equal(properties.leaseMs!.minimum, 300);
    assert.equal(properties.csvDelimiter!['x-fix'], OPTIONS.csvDelimiter.serve.fix);
    assert.equal(plainText('see [Bad rows](#bad-rows) and [Formats](#formats)'), 'see Bad rows and Formats');
  });

  it('the settings no flag and no config file can give are the program objects, which the serve settings type leaves out', () => {
    assert.deepEqual([...API_ONLY].sort(), ['db', 'logger', 'plugins', 'registry', 'signal']);
    // Database settings that are not WatchOptions are checked with the adapter (checkDbChoice), not alone.
    const unchecked = OPTION_ENTRIES.filter((e) => !e.spec.check).map((e) => e.name);
    assert.deepEqual(
      unchecked.sort(),
      OPTION_ENTRIES.filter((e) => e.spec.api === false)
        .map((e) => e.name)
        .sort(),
    );
  });

  it('every check takes its default and refuses a value of the wrong kind, naming the setting', () => {
    for (const { name, spec } of OPTION_ENTRIES) {
      if (!spec.check) continue;
      if (spec.default !== undefined) assert.equal(spec.check(spec.default), undefined, `${name} refuses its own default`);
      const problem = spec.check(Symbol('wrong'));
      assert.ok(problem?.startsWith(name), `${name}: ${problem}`);
    }
  });

  it('a bad setting throws WatchConfigError naming it and what it takes (onBadRows threw a TypeError before)', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ onBadRows: 'sometimes' }, /^onBadRows must be 'fail' or 'skip', got sometimes$/],
      [{ onSuccess: 'move' }, /^onSuccess is "move"; use 'delete' or 'archive'$/],
      [{ schemaEvolution: 'add' }, /^schemaEvolution is "add"; use 'fail' or 'addColumns'$/],
      [{ maxConcurrent: '8' }, /^maxConcurrent must be a number of parallel ingests .*, got "8"$/],
      [{ createTable: 'no' }, /^createTable must be true or false, got "no"$/],
      [{ logger: console.log }, /^logger must be a logger \(an object with debug, info, warn and error methods\), got a function$/],
      [{ retryDelayMs: { initial: '1s' } }, /^retryDelayMs must be \{ initial\?, max\? \} in milliseconds/],
      [{ csvDelimiter: ';;' }, /^csvDelimiter must be one ASCII character/],
      [{ maxBadRows: -1 }, /^maxBadRows must be a count/],
    ];
    for (const [options, message] of cases) {
      assert.throws(
        () => checkOptions(options),
        (error: unknown) => error instanceof WatchConfigError && error.code === 'WATCH_CONFIG' && message.test(error.message),
        JSON.stringify(options),
      );
      // openWatcher refuses it before it looks at the directory or starts anything.
      await assert.rejects(
        openWatcher('/nonexistent-dir', 't', options),
        (error: unknown) => error instanceof WatchConfigError && message.test(error.message),
      );
    }
  });

  it('unset settings take the table’s defaults, and numbers outside their range the nearest end', () => {
    const resolved = resolveOptions({});
    assert.equal(resolved.rescanIntervalMs, OPTIONS.rescanIntervalMs.default);
    assert.equal(resolved.leaseMs, OPTIONS.leaseMs.default);
    assert.equal(resolved.maxDecompressedBytes, OPTIONS.maxDecompressedBytes.default);
    assert.equal(resolved.onSuccess, 'delete');
    assert.equal(resolved.compression, true);
    const clamped = resolveOptions({ rescanIntervalMs: 1, leaseMs: 5, maxConcurrent: 99, batchFiles: 2.7, orphanGraceMs: -3 });
    assert.deepEqual(
      [clamped.rescanIntervalMs, clamped.leaseMs, clamped.maxConcurrent, clamped.batchFiles, clamped.orphanGraceMs],
      [10, 300, 32, 2, 0],
    );
  });
});

describe('flags from the option table', () => {
  it('reads the flags into WatchOptions as the CLI always has', () => {
    const read = watchOptionsFromFlags({
      'max-concurrent': '8',
      'schema-evolution': 'add-columns',
      'source-column': ['file=_src'],
      'on-bad-rows': 'skip',
      'max-bad-rows': '0.5',
      'no-compression': true,
      'max-decompressed-bytes': '2M',
      'csv-delimiter': 'tab',
      lease: '5000',
      'skip-duplicates': true,
      'on-success': 'archive',
      'archive-by-date': true,
    });
    assert.ok('value' in read, JSON.stringify(read));
    assert.deepEqual(read.value, {
      maxConcurrent: 8,
      schemaEvolution: 'addColumns',
      sourceColumns: { file: '_src' },
      onBadRows: 'skip',
      maxBadRows: 0.5,
      compression: false,
      maxDecompressedBytes: 2 * 1024 ** 2,
      csvDelimiter: '\t',
      leaseMs: 5000,
      skipDuplicateContent: true,
      onSuccess: 'archive',
      archiveByDate: true,
    });
    assert.deepEqual(dbChoiceFromFlags({ adapter: 'postgres', url: 'postgres://h/d', 'release-idle-ms': '0' }), {
      value: { adapter: 'postgres', url: 'postgres://h/d', releaseIdleMs: 0 },
    });
  });

  it('names the flag and what it takes, and a flag that needs another', () => {
    const problems: [Record<string, string | boolean>, string][] = [
      [{ 'max-concurrent': 'x' }, '--max-concurrent expects a whole number, got "x"'],
      [{ 'on-bad-rows': 'maybe' }, '--on-bad-rows is fail or skip, got "maybe"'],
      [{ 'schema-evolution': 'add' }, '--schema-evolution is fail or add-columns, got "add"'],
      [{ 'max-bad-rows': '3' }, '--max-bad-rows needs --on-bad-rows skip'],
      [{ 'archive-dir': 'x', 'on-success': 'delete' }, '--archive-dir and --archive-by-date go with --on-success archive'],
      [{ fs: 'inotify' }, '--fs is node, parcel, deno (on Deno) or poll[:ms], got "inotify"'],
    ];
    for (const [values, problem] of problems) assert.deepEqual(watchOptionsFromFlags(values), { problem });
    assert.deepEqual(dbChoiceFromFlags({ 'release-idle-ms': 'soon' }), {
      problem: '--release-idle-ms expects a whole number of milliseconds (0: never let go), got "soon"',
    });
  });

  it('gives parseArgs and --help every flag of the table once', () => {
    const names = [...DB_FLAG_ENTRIES, ...WATCH_FLAG_ENTRIES].map((e) => e.flag.name);
    assert.equal(new Set(names).size, names.length);
    assert.deepEqual(
      Object.keys(WATCH_FLAGS),
      WATCH_FLAG_ENTRIES.map((e) => e.flag.name),
    );
    const help = flagsHelp(WATCH_FLAG_ENTRIES);
    for (const name of Object.keys(WATCH_FLAGS)) assert.match(help, new RegExp(`^  --${name}\\b`, 'm'));
    assert.match(help, /^ {2}--max-concurrent <n> {4}parallel ingests \(default 4, at most 32\)$/m);
    assert.ok(readmeOptionsTable().includes('| `leaseMs` | 30000 | `--lease` |'));
  });
});

describe('serve settings from the option table', () => {
  it('hands a served watcher the same WatchOptions, fs as an adapter', () => {
    const options = watchOptionsOf({ maxConcurrent: 2, fs: 'poll:500', onSuccess: 'archive', adapter: 'hyper', releaseIdleMs: 0 });
    assert.deepEqual(Object.keys(options).sort(), ['fs', 'maxConcurrent', 'onSuccess']);
    assert.equal(options.fs?.name, 'poll');
    assert.deepEqual(Object.keys(watchOptionsOf({ fs: 'deno' })), onDeno() ? ['fs'] : []);
  });

  it('reports a check’s problem at the setting’s path, without repeating its name', () => {
    assert.deepEqual(settingIssues({ encoding: 'klingon', maxBadRows: 2.5 }, 'watchers[0]'), [
      { path: 'watchers[0].maxBadRows', problem: 'above 1 must be a whole number of rows, got 2.5', fix: OPTIONS.maxBadRows.serve.fix },
      {
        path: 'watchers[0].encoding',
        problem: settingIssues({ encoding: 'klingon' }, '')[0]!.problem,
        fix: OPTIONS.encoding.serve.checkFix,
      },
    ]);
    assert.match(settingIssues({ encoding: 'klingon' }, '')[0]!.problem, /^"klingon" is not a known character set/);
  });
});

describe('formatJson', () => {
  it('round-trips, with small objects on one line and no line past 140 columns where a break helps', () => {
    const value = { a: 1, list: ['x', 'y'], nested: { deep: { b: 'c'.repeat(200) }, small: { n: 1 } } };
    const text = formatJson(value);
    assert.deepEqual(JSON.parse(text), value);
    assert.match(text, /"small": \{ "n": 1 \}/);
    assert.match(text, /"list": \["x", "y"\]/);
  });
});

function onDeno(): boolean {
  return 'Deno' in globalThis;
}
