/**
 * Producers that cannot write `.ready` (run by test/src/watcher/ready-when.test.ts on hyperd and on PostgreSQL):
 * `readyWhen: 'stable'` takes a file once it stops changing, and not while a process holds it
 * open for writing; `include` / `exclude` leave the other files alone.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { appendFile, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { csvIngester } from '../../plugins/csv/index.ts';
import { openWatcher } from '../../src/api.ts';
import { defineIngester } from '../../src/plugins.ts';
import type { FsAdapter, Logger } from '../../src/types.ts';
import { csv, drop, leftovers, waitFor } from './drop.ts';
import { count } from './env.ts';
import type { WatchBench } from './watch-bench.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A logger that keeps what it is told at info and warn. */
function keptLog(): Logger & { readonly lines: { message: string; fields: Record<string, unknown> }[] } {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const keep = (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields: fields ?? {} });
  return { lines, debug() {}, info: keep, warn: keep, error: keep };
}

export function readyWhenCases(t: WatchBench): void {
  it('stable: a file appended to every 200 ms for 3 s lands once, whole, after it stops', async () => {
    const { dir, table, opts } = await t.inbox();
    const log = keptLog();
    const stableMs = 1000;
    const handle = await openWatcher(dir, table, { ...opts, readyWhen: 'stable', stableMs, logger: log });
    const path = join(dir, 'growing.csv');
    await writeFile(path, 'id,part\n');
    let id = 0;
    const started = Date.now();
    let lastWrite = started;
    while (Date.now() - started < 3000) {
      const rows = Array.from({ length: 50 }, () => `${id++},${Math.floor(id / 50)}\n`).join('');
      await appendFile(path, rows);
      lastWrite = Date.now();
      await sleep(200);
      // Never taken while it grows.
      assert.equal(handle.stats.filesIngested, 0, `taken at ${Date.now() - started} ms, while still growing`);
      assert.equal(handle.stats.filesFailed, 0);
    }
    assert.ok(handle.stats.settling >= 1, 'status counts it as settling while it grows');
    await waitFor(() => handle.stats.filesIngested === 1, 'the file to land', 15000);
    const latency = Date.now() - lastWrite;
    await handle.whenIdle();
    assert.equal(await count(t.pool, table), id, 'every row, once');
    assert.equal(await count(t.pool, table, 'id >= 0'), id);
    const distinct = await t.pool.query<{ n: string }>(`SELECT COUNT(DISTINCT id) AS n FROM ${table}`);
    assert.equal(Number(distinct[0]!.n), id);
    assert.equal(handle.stats.filesFailed, 0);
    // stableMs after the last write, plus at most one rescan interval (200 ms here) and a margin for a busy machine.
    assert.ok(latency >= stableMs, `taken ${latency} ms after the last write, before stableMs ${stableMs}`);
    assert.ok(latency <= stableMs + 200 + 1500, `taken ${latency} ms after the last write`);
    process.stdout.write(`# stable mode: landed ${latency} ms after the last write (stableMs ${stableMs}, rescan 200 ms)\n`);
    await handle.stop();
    assert.deepEqual(await leftovers(dir), []);
  });

  it('stable: without any filesystem event, rescans alone see a file grow, and take it stableMs to one rescan after it stops', async () => {
    const { dir, table, opts } = await t.inbox();
    const quiet: FsAdapter = { name: 'none', mayLoseEvents: true, subscribe: async () => ({ close: async () => {} }) };
    const stableMs = 800;
    const rescanIntervalMs = 500;
    const handle = await openWatcher(dir, table, { ...opts, fs: quiet, rescanIntervalMs, readyWhen: 'stable', stableMs });
    const latencies: number[] = [];
    for (let round = 0; round < 3; round++) {
      const path = join(dir, `r${round}.csv`);
      await writeFile(path, 'id\n');
      // Growing for longer than stableMs, with pauses shorter than one rescan interval.
      for (let i = 0; i < 6; i++) {
        await sleep(300);
        await appendFile(path, `${round * 10 + i}\n`);
        assert.equal(handle.stats.filesIngested, round, 'taken while still growing');
      }
      const lastWrite = Date.now();
      await waitFor(() => handle.stats.filesIngested === round + 1, `r${round}.csv to land`, 10000);
      latencies.push(Date.now() - lastWrite);
      // Desynchronise the next file from the rescan timer.
      await sleep(137 * (round + 1));
    }
    for (const latency of latencies) {
      assert.ok(latency >= stableMs, `taken ${latency} ms after its last write, before stableMs`);
      // Plus the claim and the commit themselves, on a machine that may be busy.
      assert.ok(latency <= stableMs + rescanIntervalMs + 700, `taken ${latency} ms after its last write`);
    }
    process.stdout.write(
      `# stable mode without events: landed ${latencies.join(', ')} ms after the last write ` +
        `(stableMs ${stableMs}, rescan ${rescanIntervalMs} ms)\n`,
    );
    assert.equal(await count(t.pool, table), 18);
    await handle.stop();
  });

  it('stable: a file that never stops growing is never taken, and stats and the log say how long it waits', async () => {
    const { dir, table, opts } = await t.inbox();
    const log = keptLog();
    const handle = await openWatcher(dir, table, { ...opts, readyWhen: 'stable', stableMs: 300, logger: log });
    const path = join(dir, 'endless.csv');
    await writeFile(path, 'id\n');
    for (let i = 0; i < 25; i++) {
      await appendFile(path, `${i}\n`);
      await sleep(100);
    }
    assert.equal(handle.stats.filesIngested + handle.stats.filesFailed, 0);
    assert.equal(handle.stats.settling, 1);
    assert.ok(handle.stats.settlingLongestSeconds >= 1.5, `waiting ${handle.stats.settlingLongestSeconds} s`);
    const waiting = log.lines.filter((l) => l.message.startsWith('waiting for a file to stop changing'));
    assert.ok(waiting.length >= 1, 'logged as waiting');
    assert.equal(waiting[0]!.fields.file, 'endless.csv');
    assert.equal(typeof waiting[0]!.fields.waitingSeconds, 'number');
    await handle.stop();
    assert.deepEqual(await leftovers(dir), ['endless.csv'], 'left where it was');
  });

  it('stable: a file held open for writing is not taken while held, and lands once it is closed', async () => {
    const { dir, table, opts } = await t.inbox();
    const path = join(dir, 'held.csv');
    await writeFile(path, csv('id', [[1], [2], [3]]));
    // Another process opens it for appending and writes nothing more: size and time stay the same.
    const holder = spawn('bash', ['-c', `exec 3>>"$1"; echo open; sleep 30`, 'holder', path], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    const handle = await openWatcher(dir, table, { ...opts, readyWhen: 'stable', stableMs: 200 });
    try {
      await sleep(1500);
      assert.equal(handle.stats.filesIngested, 0, 'taken while another process held it open for writing');
      assert.equal(handle.stats.settling, 1);
      assert.deepEqual(await leftovers(dir), ['held.csv']);
    } finally {
      holder.kill();
    }
    await waitFor(() => handle.stats.filesIngested === 1, 'the file to land once closed', 10000);
    assert.equal(await count(t.pool, table), 3);
    await handle.stop();
  });

  it('stable: a file written to after it was found stable (a writer /proc cannot see) fails as CHANGED_AFTER_READY', async () => {
    const { dir, table, opts } = await t.inbox();
    // Writes to the claimed file while it is being read, as a producer on another machine (NFS) could.
    const meddling = defineIngester({
      name: 'csv-meddling',
      extensions: ['.csv'],
      append(conn, file, target, ctx) {
        if (file.name === 'late.csv') appendFileSync(file.stagedPath, '99\n');
        return csvIngester.append(conn, file, target, ctx);
      },
    });
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT)`);
    const handle = await openWatcher(dir, table, { ...opts, readyWhen: 'stable', stableMs: 200, plugins: [meddling] });
    await writeFile(join(dir, 'late.csv'), csv('id', [[1], [2]]));
    await writeFile(join(dir, 'fine.csv'), csv('id', [[3]]));
    await waitFor(() => handle.stats.filesFailed === 1 && handle.stats.filesIngested === 1, 'one failed, one landed');
    await handle.stop();
    assert.equal(await count(t.pool, table), 1);
    assert.equal(await count(t.pool, table, 'id = 3'), 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'late.csv.error'), 'utf8'));
    assert.equal(report.code, 'CHANGED_AFTER_READY');
    assert.equal(report.file, 'late.csv');
    assert.match(report.message, /^late\.csv changed after it had stayed the same for 200 ms \(size changed from \d+ to \d+ bytes\)/);
    assert.match(report.hint, /stableMs/);
    assert.deepEqual(await readdir(join(dir, 'failed')), ['late.csv', 'late.csv.error']);
  });

  it('stable: dot-files, *.tmp, *.part and the like are never taken; a file renamed from one is', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, readyWhen: 'stable', stableMs: 200 });
    const names = ['.hidden.csv', 'upload.csv.tmp', 'upload.csv.part', 'report.csv.crdownload', '~$book.csv', 'edit.csv~'];
    for (const name of names) await writeFile(join(dir, name), csv('id', [[1]]));
    await sleep(1200);
    assert.equal(handle.stats.filesIngested + handle.stats.filesFailed, 0);
    const { rename } = await import('node:fs/promises');
    await rename(join(dir, 'upload.csv.part'), join(dir, 'upload.csv'));
    await waitFor(() => handle.stats.filesIngested === 1, 'the renamed file to land');
    await handle.stop();
    assert.deepEqual(await leftovers(dir), names.filter((n) => n !== 'upload.csv.part').sort());
  });

  it('stable: a file found at start-up lands after stableMs, a .ready written all the same goes with it', async () => {
    const { dir, table, opts } = await t.inbox();
    await writeFile(join(dir, 'early.csv'), csv('id', [[1], [2]]));
    await drop(dir, 'both.csv', csv('id', [[3]]));
    const started = Date.now();
    const handle = await openWatcher(dir, table, { ...opts, readyWhen: 'stable', stableMs: 500 });
    await waitFor(() => handle.stats.filesIngested === 2, 'both files to land');
    assert.ok(Date.now() - started >= 450, 'not before stableMs');
    await handle.stop();
    assert.equal(await count(t.pool, table), 3);
    assert.deepEqual(await leftovers(dir), []);
  });

  it('include/exclude (sentinel mode): the other files are left alone, not claimed, failed or counted', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, include: ['*.csv'], exclude: ['tmp_*'] });
    await drop(dir, 'a.csv', csv('id', [[1]]));
    await drop(dir, 'tmp_b.csv', csv('id', [[2]]));
    await drop(dir, 'c.json', '[{"id":3}]');
    await waitFor(() => handle.stats.filesIngested === 1, 'a.csv to land');
    await handle.rescan();
    await handle.whenIdle();
    await sleep(300);
    assert.equal(handle.stats.filesIngested, 1);
    assert.equal(handle.stats.filesFailed, 0);
    assert.equal(handle.stats.orphans, 0);
    assert.equal(handle.stats.ignored, 2);
    await handle.stop();
    assert.equal(await count(t.pool, table), 1);
    assert.deepEqual(await leftovers(dir), ['c.json', 'c.json.ready', 'tmp_b.csv', 'tmp_b.csv.ready']);
  });

  it('include/exclude (stable mode): only matching files are watched and taken', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, {
      ...opts,
      readyWhen: 'stable',
      stableMs: 200,
      include: ['*.csv', '*.tsv'],
      exclude: ['tmp_*'],
    });
    await writeFile(join(dir, 'a.csv'), csv('id', [[1]]));
    await writeFile(join(dir, 'b.tsv'), 'id\n2\n');
    await writeFile(join(dir, 'tmp_c.csv'), csv('id', [[3]]));
    await writeFile(join(dir, 'notes.txt'), 'not data\n');
    await waitFor(() => handle.stats.filesIngested === 2, 'a.csv and b.tsv to land');
    await sleep(500);
    await handle.rescan();
    assert.equal(handle.stats.filesIngested, 2);
    assert.equal(handle.stats.filesFailed, 0);
    assert.equal(handle.stats.settling, 0);
    assert.equal(handle.stats.ignored, 2);
    await handle.stop();
    assert.equal(await count(t.pool, table), 2);
    assert.deepEqual(await leftovers(dir), ['notes.txt', 'tmp_c.csv']);
    assert.deepEqual(await readdir(join(dir, 'failed')), []);
  });
}
