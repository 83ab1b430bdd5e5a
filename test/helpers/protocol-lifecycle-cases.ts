/**
 * The sentinel protocol, a watcher's life (run by protocol-suite.ts on every database): one
 * watcher per directory, maxConcurrent clamped, stopped and started again, files an earlier run
 * left claimed recovered, a missing directory or an invalid table name refused.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { it } from 'node:test';
import { openWatcher, startWatching, stopWatching } from '../../src/api.ts';
import { DEFAULT_MAX_CONCURRENT, MAX_CONCURRENT_LIMIT } from '../../src/constants.ts';
import { clampMaxConcurrent } from '../../src/options.ts';
import { csv, drop, leftovers, stagedEntries } from './drop.ts';
import { count } from './env.ts';
import type { WatchBench } from './watch-bench.ts';

export function lifecycleCases(t: WatchBench): void {
  it('refuses a second watcher on the same directory, also through a symlink or a .. path', async () => {
    const { dir, table, opts } = await t.inbox();
    const registry = t.registry;
    await startWatching(dir, table, opts);
    await assert.rejects(startWatching(dir, table, opts), /already being watched/);
    const link = `${dir}-link`;
    await symlink(dir, link);
    await assert.rejects(startWatching(link, table, opts), /already being watched/);
    await assert.rejects(startWatching(link, 'other', opts), { name: 'DuplicateWatcherError' });
    await assert.rejects(startWatching(join(dir, '..', basename(dir)), table, opts), /already being watched/);
    assert.equal(registry.list().filter((w) => w.dir === registry.get(w.dir)?.dir).length, registry.size);
    assert.equal(registry.list().filter((w) => w.dir === dir).length, 1);
    await stopWatching(link, { registry });
    assert.equal(registry.get(dir), undefined);
  });

  it('clamps maxConcurrent: 0 or missing means the default, large values the limit', async () => {
    assert.equal(clampMaxConcurrent(undefined), DEFAULT_MAX_CONCURRENT);
    assert.equal(clampMaxConcurrent(0), DEFAULT_MAX_CONCURRENT);
    assert.equal(clampMaxConcurrent(1000), MAX_CONCURRENT_LIMIT);
    assert.equal(clampMaxConcurrent(-3), 1);
    assert.equal(clampMaxConcurrent(7), 7);
    const { dir, table, opts } = await t.inbox();
    const stats = await startWatching(dir, table, { ...opts, maxConcurrent: 1000 });
    assert.equal(stats.maxConcurrent, MAX_CONCURRENT_LIMIT);
    await stopWatching(dir, { registry: t.registry });
  });

  it('stops, then starts again on the same directory and picks up files dropped in between', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'one.csv', csv('id', [[1]]));
    await startWatching(dir, table, opts);
    const first = await stopWatching(dir, { registry: t.registry });
    assert.equal(first.stats.filesIngested, 1);
    assert.ok(first.stoppedAt);
    await drop(dir, 'two.csv', csv('id', [[2]]));
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await leftovers(dir), ['two.csv', 'two.csv.ready'], 'nothing ingests while stopped');
    const again = await startWatching(dir, table, opts);
    assert.equal(again.filesIngested, 1);
    assert.equal(await count(t.pool, table), 2);
    const ids = await t.pool.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`);
    assert.deepEqual(
      ids.map((r) => Number(r.id)),
      [1, 2],
    );
    await stopWatching(dir, { registry: t.registry });
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('recovers files an earlier run left claimed: ingests uncommitted ones, only cleans up committed ones', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'first.csv', csv('id', [[1]]));
    const first = await openWatcher(dir, table, opts);
    await first.stop();
    const staging = join(dir, '.hyperwatch', 'staging');
    // A claim whose commit reached the ledger (crash between commit and clean-up) ...
    const [committed] = await t.pool.query<{ claim_id: string }>(
      `SELECT claim_id FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}'`,
    );
    await writeFile(join(staging, `${committed!.claim_id}~first.csv`), csv('id', [[1]]));
    await writeFile(join(staging, `${committed!.claim_id}~first.csv.ready`), '');
    // ... one that never committed (crash mid-ingest) ...
    await writeFile(join(staging, '0zzzzzzzz-00000000000000aa~second.csv'), csv('id', [[2], [3]]));
    await writeFile(join(staging, '0zzzzzzzz-00000000000000aa~second.csv.ready'), '');
    // ... and a claim interrupted after taking the sentinel, before the data file.
    await writeFile(join(staging, '0zzzzzzzz-00000000000000bb~third.csv.ready'), '');
    await writeFile(join(dir, 'third.csv'), csv('id', [[4]]));
    // ... and the folder of a process that died in a transaction whose ledger rows it had written
    // for the server to read (no lease row left: it is taken over at once).
    const dead = join(staging, 'otherhost-999999-0badf00d');
    await mkdir(dead);
    await writeFile(join(dead, '0zzzzzzzz-00000000000000cc~fourth.csv'), csv('id', [[5]]));
    await writeFile(join(dead, '0zzzzzzzz-00000000000000cc~fourth.csv.ready'), '');
    await writeFile(join(dead, '.ledger-0zzzzzzzz-00000000000000cc-1.csv'), '"0zzzzzzzz-00000000000000cc","fourth.csv"\n');
    const again = await openWatcher(dir, table, opts);
    assert.equal(again.stats.recovered, 3);
    assert.equal(again.stats.filesIngested, 3, 'second.csv and fourth.csv recovered, third.csv swept');
    assert.equal(await count(t.pool, table), 5, 'first.csv not twice; second.csv, third.csv and fourth.csv once');
    await again.stop();
    assert.deepEqual(await stagedEntries(dir), [], "the dead process's leftover ledger file went with its folder");
    assert.deepEqual(await readdir(staging), [], 'no folder left');
    assert.deepEqual(await leftovers(dir), []);
    const ledger = await t.pool.query<{ claim_id: string }>(
      `SELECT claim_id FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}' ORDER BY claim_id`,
    );
    assert.ok(ledger.some((r) => r.claim_id === '0zzzzzzzz-00000000000000aa'));
    assert.equal(ledger.length, 4);
  });

  it('rejects a missing directory and an invalid table name with clear errors', async () => {
    const { dir, opts } = await t.inbox();
    await assert.rejects(startWatching(join(dir, 'nope'), 't', opts), /does not exist/);
    await assert.rejects(startWatching(dir, 'bad\u0000name', opts), /invalid table name/);
    assert.equal(t.registry.get(dir), undefined);
  });
}
