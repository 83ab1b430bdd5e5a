/**
 * Exactly once across crashes with `onBadRows: 'skip'`: the watcher's process is killed at random
 * moments while producers drop files, a third of them with a bad row. At the end every good row is
 * in the table once, and every bad row is in exactly one rejected-rows file in failed/, once:
 * none for a transaction that did not commit, none twice.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Papa from 'papaparse';
import { createHyperAdapter } from '../../../adapters/db/hyper/index.ts';
import { openWatcher } from '../../../src/api.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import { openWhenUnlocked } from '../../helpers/child.ts';
import { killWhileProducing } from '../../helpers/kill-loop.ts';
import { csv, drop, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { useHyperFixture } from '../../helpers/env.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('crash safety with bad rows skipped', () => {
  const fx = useHyperFixture();

  it('SIGKILL at random moments while 600 files arrive, 200 with a bad row: good rows once, each bad row set aside once', async () => {
    const dir = join(fx.root, 'kill-bad-rows');
    await mkdir(dir);
    const database = join(fx.root, 'kill-bad-rows.hyper');
    const setup = createHyperAdapter({ database });
    const setupPool = await setup.openPool({ maxConnections: 1 });
    await setupPool.query('CREATE TABLE events (id BIGINT, batch BIGINT)');
    await setupPool.close();
    await setup.close();

    const files = 600;
    const perFile = 3;
    const bad = new Set<string>();
    const kills = await killWhileProducing({
      dir,
      table: 'events',
      database,
      options: { onBadRows: 'skip' },
      files,
      dropFile: async (f) => {
        const rows: (string | number)[][] = Array.from({ length: perFile }, (_, r) => [f * perFile + r, f]);
        if (f % 3 === 0) {
          rows.splice(1, 0, [`bad-${f}`, f]);
          bad.add(`bad-${f},${f}`);
        }
        await drop(dir, `batch-${String(f).padStart(4, '0')}.csv`, csv('id,batch', rows));
      },
      pauseEvery: 25,
      pauseMs: 5,
      minKills: 10,
      seed: 7,
      left: () => leftovers(dir),
    });

    const failed = (await readdir(join(dir, 'failed'))).sort();
    assert.ok(
      failed.every((name) => /^batch-\d{4}\.csv\.rejected\.csv$/.test(name)),
      `only rejected-rows files, one name per file: ${failed.filter((n) => !/^batch-\d{4}\.csv\.rejected\.csv$/.test(n)).join(', ')}`,
    );
    const setAside: string[] = [];
    for (const name of failed) {
      const rows = Papa.parse<Record<string, string>>(await readFile(join(dir, 'failed', name), 'utf8'), {
        header: true,
        skipEmptyLines: true,
      }).data;
      for (const row of rows) {
        assert.equal(row.line, '3', `${name}: the bad row is on line 3`);
        setAside.push(row.record!);
      }
    }
    assert.equal(setAside.length, bad.size, 'each bad row set aside once');
    assert.deepEqual(new Set(setAside), bad);

    const check = createHyperAdapter({ database });
    const pool = await openWhenUnlocked(check);
    try {
      const [stats] = await pool.query<{ n: string; d: string }>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
      console.log(`# ${kills} kills; rows ${stats!.n}; rejected rows set aside ${setAside.length}`);
      assert.equal(Number(stats!.d), files * perFile, 'every good id present');
      assert.equal(Number(stats!.n), files * perFile, 'no id twice');
      const [ledger] = await pool.query<{ n: string; rejected: string }>(
        'SELECT COUNT(*) AS n, SUM(rows_rejected) AS rejected FROM hyperwatch_internal.ingest_log',
      );
      assert.equal(Number(ledger!.n), files);
      assert.equal(Number(ledger!.rejected), bad.size);
    } finally {
      await pool.close();
      await check.close();
    }
  });

  it('hyperd killed mid-stream, commits lost before their checkpoint: each bad row set aside once, from the commit that \
counted', async () => {
    const dir = join(fx.root, 'hyperd-kill-bad-rows');
    await mkdir(dir);
    const db = createHyperAdapter({ database: join(fx.root, 'hyperd-kill-bad-rows.hyper') });
    const setupPool = await db.openPool({ maxConnections: 1 });
    await setupPool.query('CREATE TABLE events (id BIGINT)');
    await setupPool.close();
    const registry = new WatcherRegistry();
    const handle = await openWatcher(dir, 'events', { db, registry, onBadRows: 'skip', retryDelayMs: { initial: 20, max: 500 } });
    const files = 200;
    const producer = (async () => {
      for (let f = 0; f < files; f++) {
        await drop(dir, `f${f}.csv`, f % 2 === 0 ? `id\n${f}\nbad-${f}\n` : csv('id', [[f]]));
        await sleep(10);
      }
    })();
    for (let k = 0; k < 3; k++) {
      await waitFor(() => handle.stats.filesIngested >= (k + 1) * 30, 'progress before the kill', 60000);
      const pid = db.hyperdPid;
      assert.ok(pid);
      process.kill(pid, 'SIGKILL');
      await waitFor(() => db.hyperdPid !== undefined && db.hyperdPid !== pid, 'hyperd restarted', 30000);
    }
    await producer;
    await waitFor(() => handle.stats.filesIngested === files, `all ${files} files`, 120000);
    await handle.stop();
    const again = await openWatcher(dir, 'events', { db, registry, onBadRows: 'skip' });
    await again.stop();
    assert.deepEqual(await stagedEntries(dir), []);
    const failed = (await readdir(join(dir, 'failed'))).sort();
    assert.equal(failed.length, files / 2, `one rejected-rows file per file with a bad row: ${failed.join(', ')}`);
    for (const name of failed) {
      const f = Number(/^f(\d+)\.csv\.rejected\.csv$/.exec(name)?.[1]);
      assert.equal(
        await readFile(join(dir, 'failed', name), 'utf8'),
        `line,reason,record\n3,"column ""id"": ""bad-${f}"" is not a bigint",bad-${f}\n`,
      );
    }
    const pool = await db.openPool({ maxConnections: 1 });
    try {
      const [row] = await pool.query<{ n: string; d: string }>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
      assert.equal(Number(row!.n), files);
      assert.equal(Number(row!.d), files);
      const [ledger] = await pool.query<{ rejected: string }>('SELECT SUM(rows_rejected) AS rejected FROM hyperwatch_internal.ingest_log');
      assert.equal(Number(ledger!.rejected), files / 2);
    } finally {
      await pool.close();
      await db.close();
    }
  });
});
