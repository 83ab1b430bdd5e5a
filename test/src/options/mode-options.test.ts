/**
 * The load modes' settings as users give them: `--mode`, `--key`, `--duplicate-keys`, `--order`
 * on the command line (a bad one is a usage error, exit 2), the API (WatchConfigError), serve
 * configs (an issue at the field); and `order: 'name'` taking names off the inbox by name.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openWatcher, WatchConfigError } from '../../../src/api.ts';
import { parseKey } from '../../../src/options/load-modes.ts';
import { watchOptionsFromFlags } from '../../../src/options/flags.ts';
import { resolveOptions } from '../../../src/options/resolve.ts';
import { ConfigError, validateConfig } from '../../../src/serve/config.ts';
import { emptyStats } from '../../../src/observe/stats.ts';
import { Inbox } from '../../../src/watcher/inbox.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { cli } from '../../helpers/proc.ts';

describe('load mode settings', () => {
  it('reads the flags, and refuses --key without a keyed mode and a keyed mode without --key', () => {
    assert.deepEqual(watchOptionsFromFlags({ mode: 'upsert', key: 'region, day', 'duplicate-keys': 'fail', order: 'name' }), {
      value: { mode: 'upsert', key: ['region', 'day'], duplicateKeys: 'fail', order: 'name' },
    });
    assert.deepEqual(watchOptionsFromFlags({ mode: 'merge' }), {
      problem: '--mode is append, replace, upsert or replace-keys, got "merge"',
    });
    assert.deepEqual(watchOptionsFromFlags({ key: 'id' }), { problem: '--key needs --mode upsert or --mode replace-keys' });
    assert.deepEqual(watchOptionsFromFlags({ mode: 'replace', key: 'id' }), {
      problem: '--key needs --mode upsert or --mode replace-keys',
    });
    assert.deepEqual(watchOptionsFromFlags({ mode: 'replace-keys' }), { problem: '--mode replace-keys needs --key (e.g. --key id)' });
    assert.deepEqual(watchOptionsFromFlags({ mode: 'upsert', key: 'a,,b' }), {
      problem: '--key has an empty column name; use e.g. "id" or "region,day"',
    });
    assert.deepEqual(watchOptionsFromFlags({ order: 'size' }), { problem: '--order is arrival or name, got "size"' });
    assert.deepEqual(parseKey(['id', 'ID']), { problem: 'key names column "ID" twice' });
  });

  it('the API: a bad combination throws WatchConfigError; other modes go one transaction at a time, order name one file at a time', () => {
    assert.throws(
      () => resolveOptions({ key: 'id' }),
      (e: unknown) => e instanceof WatchConfigError && /key is set but mode is 'append'/.test(e.message),
    );
    assert.throws(
      () => resolveOptions({ mode: 'upsert' }),
      (e: unknown) => e instanceof WatchConfigError && /mode 'upsert' needs key/.test(e.message),
    );
    assert.throws(() => resolveOptions({ mode: 'upsert', key: [] }), WatchConfigError);
    assert.throws(() => resolveOptions({ duplicateKeys: 'first' as never }), /duplicateKeys is "first"; use 'last' or 'fail'/);
    const upsert = resolveOptions({ mode: 'upsert', key: 'id', maxConcurrent: 8, batchFiles: 50 });
    assert.deepEqual([upsert.mode, upsert.key, upsert.duplicateKeys, upsert.order], ['upsert', ['id'], 'last', 'arrival']);
    // One transaction at a time; a group keeps its files' order (on PostgreSQL: see batchLimit).
    assert.deepEqual([upsert.maxConcurrent, upsert.batchFiles], [1, 50]);
    const byName = resolveOptions({ order: 'name', maxConcurrent: 8 });
    assert.deepEqual([byName.mode, byName.maxConcurrent, byName.batchFiles], ['append', 1, 1]);
    const plain = resolveOptions({ maxConcurrent: 8, batchFiles: 50 });
    assert.deepEqual([plain.mode, plain.maxConcurrent, plain.batchFiles], ['append', 8, 50]);
  });

  it('openWatcher refuses a keyed mode without a key before touching anything', async (t) => {
    const dir = await tempDir();
    t.after(() => removeDir(dir));
    await assert.rejects(openWatcher(dir, 't', { mode: 'replace-keys' }), WatchConfigError);
  });

  it('serve configs: the issue is at the field, with the fix', async (t) => {
    const root = await tempDir();
    t.after(() => removeDir(root));
    await mkdir(join(root, 'w'));
    const problems = async (watcher: Record<string, unknown>) => {
      try {
        await validateConfig({ watchers: [{ dir: 'w', table: 't', ...watcher }] }, 'c.json', { baseDir: root, env: {} });
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.issues.map((i) => `${i.path}: ${i.problem} (${i.fix})`).join('; ');
      }
      return '';
    };
    assert.equal(await problems({ mode: 'upsert', key: ['region', 'day'], duplicateKeys: 'fail', order: 'name' }), '');
    assert.match(
      await problems({ key: 'id' }),
      /^watchers\[0\]\.key: key is set but mode is 'append', which uses no key \(Set mode to 'upsert'/,
    );
    assert.match(await problems({ mode: 'upsert' }), /^watchers\[0\]\.mode: mode 'upsert' needs key.*\(Give key, e\.g\. key: "id"/);
    assert.match(await problems({ mode: 'merge' }), /^watchers\[0\]\.mode/);
    assert.match(await problems({ mode: 'upsert', key: '' }), /^watchers\[0\]\.key/);
  });

  for (const [label, args, message] of [
    ['--key without a keyed mode', ['--key', 'id'], /--key needs --mode upsert or --mode replace-keys/],
    ['--mode upsert without --key', ['--mode', 'upsert'], /--mode upsert needs --key/],
    ['an unknown --mode', ['--mode', 'merge'], /--mode is append, replace, upsert or replace-keys, got "merge"/],
  ] as const) {
    it(`watch exits 2 with a one-line error for ${label}`, async () => {
      const run = await cli(['watch', '.', '--table', 't', ...args]).done;
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
    });
  }

  it("order 'name': the inbox hands out the name that sorts first, whatever came first", () => {
    const inbox = new Inbox(100, emptyStats(1), () => {}, true);
    for (const name of ['c.csv.ready', 'a.csv.ready', 'b.csv.ready']) inbox.enqueue(name);
    assert.deepEqual([inbox.dequeue(1), inbox.dequeue(1), inbox.dequeue(1)], [['a.csv.ready'], ['b.csv.ready'], ['c.csv.ready']]);
    const arrival = new Inbox(100, emptyStats(1), () => {}, false);
    for (const name of ['c.csv.ready', 'a.csv.ready']) arrival.enqueue(name);
    assert.deepEqual(arrival.dequeue(2), ['c.csv.ready', 'a.csv.ready']);
  });
});
