/**
 * `onSuccess: 'archive'` end to end, for any database (run by protocol-suite.ts, so on hyperd and
 * PostgreSQL, and under Deno and Bun): where archived files go, that their names never collide,
 * that an archived file is never ingested again, and that recovery finishes an archive a crash
 * interrupted.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openWatcher, startWatching, stopWatching } from '../../src/api.ts';
import { csv, drop, leftovers, stagedEntries, waitFor } from './drop.ts';
import { count } from './env.ts';
import type { WatchBench } from './watch-bench.ts';

export function archiveCases(t: WatchBench): void {
  it('onSuccess archive: moves the file and its sentinel to <dir>/archive once durable; a second file of the same name gets \
its claim id; archived files are never ingested again', async () => {
    const { dir, table, opts } = await t.inbox();
    const archived = { ...opts, onSuccess: 'archive' as const };
    await drop(
      dir,
      'orders.csv',
      csv('id,name', [
        [1, 'a'],
        [2, 'b'],
      ]),
    );
    const handle = await openWatcher(dir, table, archived);
    assert.equal(handle.stats.filesIngested, 1);
    await drop(dir, 'orders.csv', csv('id,name', [[3, 'c']]));
    await waitFor(() => handle.stats.filesIngested === 2, 'the second orders.csv');
    await stopWatching(dir, { registry: t.registry });
    assert.deepEqual(await stagedEntries(dir), [], 'nothing left in staging');
    assert.deepEqual(await leftovers(dir), ['archive']);
    const names = (await readdir(join(dir, 'archive'))).sort();
    assert.equal(names.length, 4, names.join(', '));
    assert.ok(names.includes('orders.csv') && names.includes('orders.csv.ready'), names.join(', '));
    const second = names.find((n) => /^orders\.[0-9a-z]{9}-[0-9a-f]{16}\.csv$/.test(n));
    assert.ok(second, `the second file carries its claim id: ${names.join(', ')}`);
    assert.ok(names.includes(`${second}.ready`));
    // Each archived file is the file as dropped: the first and the second, unchanged.
    assert.equal(
      await readFile(join(dir, 'archive', 'orders.csv'), 'utf8'),
      csv('id,name', [
        [1, 'a'],
        [2, 'b'],
      ]),
    );
    assert.equal(await readFile(join(dir, 'archive', second), 'utf8'), csv('id,name', [[3, 'c']]));
    const ledger = await t.pool.query<{ claim_id: string }>(
      `SELECT claim_id FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}'`,
    );
    assert.ok(
      ledger.some((r) => second.includes(r.claim_id)),
      'the claim id in the name is the ledger row of that file',
    );
    // A restart does not see the archive (inside the inbox) as files to ingest.
    const again = await startWatching(dir, table, archived);
    assert.equal(again.filesIngested, 0);
    await stopWatching(dir, { registry: t.registry });
    assert.equal(await count(t.pool, table), 3);
  });

  it('onSuccess archive: archiveDir elsewhere, with a subfolder per day (UTC)', async () => {
    const { dir, table, opts } = await t.inbox();
    const elsewhere = join(dir, '..', `${table}-archive`);
    await drop(dir, 'day.jsonl', '{"id":1}\n{"id":2}\n');
    const before = new Date().toISOString().slice(0, 10);
    const stats = await startWatching(dir, table, { ...opts, onSuccess: 'archive', archiveDir: elsewhere, archiveByDate: true });
    const after = new Date().toISOString().slice(0, 10);
    await stopWatching(dir, { registry: t.registry });
    assert.equal(stats.filesIngested, 1);
    assert.deepEqual(await leftovers(dir), []);
    const days = await readdir(elsewhere);
    assert.equal(days.length, 1);
    assert.ok(days[0] === before || days[0] === after, days[0]);
    assert.deepEqual((await readdir(join(elsewhere, days[0]!))).sort(), ['day.jsonl', 'day.jsonl.ready']);
  });

  it('onSuccess archive: a claim committed before a crash is archived (not ingested again) by the next start', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'first.csv', csv('id', [[1]]));
    await (await openWatcher(dir, table, opts)).stop();
    const [committed] = await t.pool.query<{ claim_id: string }>(
      `SELECT claim_id FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}'`,
    );
    // What a crash between the commit and the move leaves in staging.
    const staging = join(dir, '.hyperwatch', 'staging');
    await writeFile(join(staging, `${committed!.claim_id}~first.csv`), csv('id', [[1]]));
    await writeFile(join(staging, `${committed!.claim_id}~first.csv.ready`), '');
    const again = await openWatcher(dir, table, { ...opts, onSuccess: 'archive' });
    assert.equal(again.stats.recovered, 1);
    assert.equal(again.stats.filesIngested, 0);
    await again.stop();
    assert.equal(await count(t.pool, table), 1, 'not ingested twice');
    assert.deepEqual(await stagedEntries(dir), []);
    assert.deepEqual((await readdir(join(dir, 'archive'))).sort(), ['first.csv', 'first.csv.ready']);
  });

  it('onSuccess archive: refuses the watched directory itself as the archive', async () => {
    const { dir, table, opts } = await t.inbox();
    await mkdir(dir, { recursive: true });
    await assert.rejects(
      openWatcher(dir, table, { ...opts, onSuccess: 'archive', archiveDir: '.' }),
      /archiveDir "\." is the watched directory itself/,
    );
    await assert.rejects(
      openWatcher(dir, table, { ...opts, onSuccess: 'move' as 'archive' }),
      /onSuccess is "move"; use 'delete' or 'archive'/,
    );
  });
}
