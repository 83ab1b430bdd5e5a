/** The sentinel protocol end to end, on a real embedded hyperd. */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { ResultAsync } from 'neverthrow';
import { csvIngester } from '../plugins/csv/index.ts';
import { openWatcher, startWatching, stopWatching } from '../src/api.ts';
import { DEFAULT_MAX_CONCURRENT, MAX_CONCURRENT_LIMIT } from '../src/constants.ts';
import { clampMaxConcurrent, type WatchOptions } from '../src/options.ts';
import { defineIngester } from '../src/plugins.ts';
import { WatcherRegistry } from '../src/registry.ts';
import { csv, drop, failedEntries, leftovers, waitFor } from './helpers/drop.ts';
import { count, hyperFixture, type HyperFixture, tempDir } from './helpers/env.ts';

describe('watcher on a real hyperd', () => {
  let fx: HyperFixture;
  let registry: WatcherRegistry;
  let n = 0;
  /** A fresh inbox and table name per test; the shared hyperd and database keep the suite fast. */
  async function inbox(): Promise<{ dir: string; table: string; opts: WatchOptions }> {
    const dir = join(fx.root, `inbox-${++n}`);
    await mkdir(dir);
    return { dir, table: `t${n}`, opts: { db: fx.db, registry, rescanIntervalMs: 200 } };
  }

  before(async () => {
    fx = await hyperFixture();
    registry = new WatcherRegistry();
  });
  after(async () => {
    await registry.stopAll();
    await fx.close();
  });

  it('ingests one file found by the initial sweep, then removes both files', async () => {
    const { dir, table, opts } = await inbox();
    await drop(dir, 'a.csv', csv('id,name,score', [[1, 'ann', 1.5], [2, 'bob', 2.5], [3, 'cy', 3]]));
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesIngested, 1);
    assert.equal(stats.rowsIngested, 3);
    assert.equal(await count(fx.pool, table), 3);
    const rows = await fx.pool.query<{ id: string; name: string; score: number }>(`SELECT * FROM ${table} ORDER BY id`);
    assert.deepEqual(rows.map((r) => [String(r.id), r.name, r.score]), [['1', 'ann', 1.5], ['2', 'bob', 2.5], ['3', 'cy', 3]]);
    assert.deepEqual(await leftovers(dir), []);
    const ledger = await fx.pool.query<{ file_name: string; row_count: string }>(`SELECT file_name, row_count FROM hyperwatch_ingest_log WHERE target_table = '${table}'`);
    assert.deepEqual(ledger.map((r) => [r.file_name, Number(r.row_count)]), [['a.csv', 3]]);
    const summary = await stopWatching(dir, { registry });
    assert.ok(summary.stats.checkpoints >= 1, 'commits made durable before the staged copy went');
    assert.deepEqual(await readdir(join(dir, '.hyperwatch', 'staging')), []);
  });

  it('ingests a file dropped while watching', async () => {
    const { dir, table, opts } = await inbox();
    const handle = await openWatcher(dir, table, opts);
    await drop(dir, 'live.csv', csv('k,v', [[1, 10], [2, 20]]));
    await waitFor(() => handle.stats.filesIngested === 1, 'live.csv to be ingested');
    assert.deepEqual(await leftovers(dir), []);
    assert.equal(await count(fx.pool, table), 2);
    const summary = await stopWatching(dir, { registry });
    assert.equal(summary.stats.filesIngested, 1);
    assert.equal(summary.stats.rowsIngested, 2);
  });

  it('ingests 200 files dropped at once, each once, never more than maxConcurrent at a time', async () => {
    const { dir, table, opts } = await inbox();
    let active = 0;
    let peak = 0;
    // Wraps the real CSV ingester to observe how many appends run at once.
    const counting = defineIngester({
      name: 'csv-counting',
      extensions: ['.csv'],
      append(conn, file, t, ctx) {
        active++;
        peak = Math.max(peak, active);
        return ResultAsync.fromSafePromise(
          (async () => {
            const result = await csvIngester.append(conn, file, t, ctx);
            active--;
            return result;
          })(),
        ).andThen((r) => r);
      },
    });
    const handle = await openWatcher(dir, table, { ...opts, maxConcurrent: 3, plugins: [counting] });
    let sampledPeak = 0;
    const sampler = setInterval(() => {
      sampledPeak = Math.max(sampledPeak, handle.stats.inFlight);
    }, 1);
    const started = performance.now();
    await Promise.all(Array.from({ length: 200 }, (_, i) => drop(dir, `f${String(i).padStart(3, '0')}.csv`, csv('id,batch', [[i * 2, i], [i * 2 + 1, i]]))));
    await waitFor(async () => handle.stats.filesIngested === 200, '200 files', 60000);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    console.log(`# 200 files ingested in ${seconds.toFixed(2)} s (${(200 / seconds).toFixed(0)} files/s), peak concurrency ${peak}`);
    assert.equal(await count(fx.pool, table), 400);
    const distinct = await fx.pool.query<{ n: string }>(`SELECT COUNT(DISTINCT id) AS n FROM ${table}`);
    assert.equal(Number(distinct[0]!.n), 400);
    assert.ok(peak <= 3, `peak concurrent appends ${peak} > 3`);
    assert.ok(sampledPeak <= 3, `stats.inFlight reached ${sampledPeak}`);
    assert.ok(peak >= 2, 'files should have run in parallel');
    assert.deepEqual(await leftovers(dir), []);
    await handle.stop();
  });

  it('moves a malformed CSV to failed/ with a useful .error while the good ones land', async () => {
    const { dir, table, opts } = await inbox();
    await drop(dir, 'good1.csv', csv('id,amount', [[1, 10], [2, 20]]));
    await drop(dir, 'good2.csv', csv('id,amount', [[3, 30]]));
    const handle = await openWatcher(dir, table, opts);
    await drop(dir, 'bad.csv', 'id,amount\n4,40\n5,not-a-number\n');
    await drop(dir, 'good3.csv', csv('id,amount', [[6, 60]]));
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 4, 'all files settled');
    assert.deepEqual(await leftovers(dir), []);
    assert.equal(await count(fx.pool, table), 4);
    assert.equal(await count(fx.pool, table, 'id IN (4, 5)'), 0);
    assert.deepEqual(await failedEntries(dir), ['bad.csv', 'bad.csv.error', 'bad.csv.ready']);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'bad.csv.error'), 'utf8'));
    assert.equal(report.file, 'bad.csv');
    assert.equal(report.kind, 'data');
    assert.equal(report.code, 'DB_22P02');
    assert.equal(report.line, 3);
    assert.equal(report.column, 2);
    assert.match(report.message, /^bad.csv: invalid input syntax .*\(line 3, column 2 "amount"\)$/);
    assert.match(report.hint, /replay/);
    assert.ok(!Number.isNaN(Date.parse(report.time)));
    assert.equal(await readFile(join(dir, 'failed', 'bad.csv'), 'utf8'), 'id,amount\n4,40\n5,not-a-number\n');
    const summary = await stopWatching(dir, { registry });
    assert.equal(summary.stats.filesFailed, 1);
    assert.equal(summary.stats.lastError?.file, 'bad.csv');
  });

  it('fails an empty file with EMPTY_FILE and keeps going', async () => {
    const { dir, table, opts } = await inbox();
    await drop(dir, 'empty.csv', '');
    await drop(dir, 'ok.csv', csv('id', [[1]]));
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 1);
    assert.equal(stats.filesIngested, 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'empty.csv.error'), 'utf8'));
    assert.equal(report.code, 'EMPTY_FILE');
    assert.equal(await count(fx.pool, table), 1);
    await stopWatching(dir, { registry });
  });

  it('reports a .ready whose data file never appears, after the grace period', async () => {
    const { dir, table, opts } = await inbox();
    await writeFile(join(dir, 'ghost.csv.ready'), '');
    const handle = await openWatcher(dir, table, { ...opts, orphanGraceMs: 300 });
    assert.equal(handle.stats.filesFailed, 0, 'not reported before the grace period');
    await waitFor(() => handle.stats.orphans === 1, 'orphan report');
    assert.deepEqual(await failedEntries(dir), ['ghost.csv.error', 'ghost.csv.ready']);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'ghost.csv.error'), 'utf8'));
    assert.equal(report.code, 'ORPHAN_READY');
    assert.deepEqual(await leftovers(dir), []);
    await handle.stop();
  });

  it('ingests a data file that arrives after its sentinel, within the grace period', async () => {
    const { dir, table, opts } = await inbox();
    const handle = await openWatcher(dir, table, { ...opts, orphanGraceMs: 10000 });
    await writeFile(join(dir, 'late.csv.ready'), '');
    await new Promise((r) => setTimeout(r, 100));
    await writeFile(join(dir, '.late.tmp'), csv('id', [[7]]));
    const { rename } = await import('node:fs/promises');
    await rename(join(dir, '.late.tmp'), join(dir, 'late.csv'));
    await waitFor(() => handle.stats.filesIngested === 1, 'late file');
    assert.equal(await count(fx.pool, table), 1);
    assert.equal(handle.stats.orphans, 0);
    await handle.stop();
  });

  it('refuses a second watcher on the same directory, also through a symlink or a .. path', async () => {
    const { dir, table, opts } = await inbox();
    await startWatching(dir, table, opts);
    await assert.rejects(startWatching(dir, table, opts), /already being watched/);
    const link = join(fx.root, `link-${n}`);
    await symlink(dir, link);
    await assert.rejects(startWatching(link, table, opts), /already being watched/);
    await assert.rejects(startWatching(join(dir, '..', `inbox-${n}`), table, opts), /already being watched/);
    assert.equal(registry.list().filter((w) => w.dir === registry.get(w.dir)?.dir).length, registry.size);
    await stopWatching(link, { registry });
    assert.equal(registry.get(dir), undefined);
  });

  it('clamps maxConcurrent: 0 or missing means the default, large values the limit', async () => {
    assert.equal(clampMaxConcurrent(undefined), DEFAULT_MAX_CONCURRENT);
    assert.equal(clampMaxConcurrent(0), DEFAULT_MAX_CONCURRENT);
    assert.equal(clampMaxConcurrent(1000), MAX_CONCURRENT_LIMIT);
    assert.equal(clampMaxConcurrent(-3), 1);
    assert.equal(clampMaxConcurrent(7), 7);
    const { dir, table, opts } = await inbox();
    const stats = await startWatching(dir, table, { ...opts, maxConcurrent: 1000 });
    assert.equal(stats.maxConcurrent, MAX_CONCURRENT_LIMIT);
    await stopWatching(dir, { registry });
  });

  it('stops, then starts again on the same directory and picks up files dropped in between', async () => {
    const { dir, table, opts } = await inbox();
    await drop(dir, 'one.csv', csv('id', [[1]]));
    await startWatching(dir, table, opts);
    const first = await stopWatching(dir, { registry });
    assert.equal(first.stats.filesIngested, 1);
    assert.ok(first.stoppedAt);
    await drop(dir, 'two.csv', csv('id', [[2]]));
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(await leftovers(dir), ['two.csv', 'two.csv.ready'], 'nothing ingests while stopped');
    const again = await startWatching(dir, table, opts);
    assert.equal(again.filesIngested, 1);
    assert.equal(await count(fx.pool, table), 2);
    await stopWatching(dir, { registry });
  });

  it('matches columns by name, not position, and names an unknown column', async () => {
    const { dir, table, opts } = await inbox();
    await drop(dir, '1.csv', csv('id,city,amount', [[1, 'oslo', 10]]));
    const handle = await openWatcher(dir, table, opts);
    await drop(dir, '2.csv', csv('amount,id,city', [[20, 2, 'rome']]));
    await drop(dir, '3.csv', csv('id,town,amount', [[3, 'kyiv', 30]]));
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 3, 'files settled');
    const rows = await fx.pool.query<{ id: string; city: string; amount: string }>(`SELECT id, city, amount FROM ${table} ORDER BY id`);
    assert.deepEqual(rows.map((r) => [Number(r.id), r.city, Number(r.amount)]), [[1, 'oslo', 10], [2, 'rome', 20]]);
    const report = JSON.parse(await readFile(join(dir, 'failed', '3.csv.error'), 'utf8'));
    assert.equal(report.code, 'UNKNOWN_COLUMN');
    assert.equal(report.column, 'town');
    assert.match(report.message, /"town"/);
    await stopWatching(dir, { registry });
  });

  it('infers BIGINT (a later 3e9 fits) and waits for data before creating a table from a header-only file', async () => {
    const { dir, table, opts } = await inbox();
    await drop(dir, 'a-header-only.csv', 'id,n,when\n');
    await drop(dir, 'b.csv', csv('id,n,when', [[1, 5, '2024-01-02'], [2, 6, '2024-01-03']]));
    await drop(dir, 'c.csv', csv('id,n,when', [[3, 3000000000, '2024-01-04']]));
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 0);
    assert.equal(stats.filesIngested, 3);
    const cols = await fx.pool.transaction((c) => c.describeTable({ name: table }));
    assert.deepEqual(cols?.map((c) => [c.name, c.sqlType]), [['id', 'bigint'], ['n', 'bigint'], ['when', 'date']]);
    assert.equal(await count(fx.pool, table, 'n = 3000000000'), 1);
    await stopWatching(dir, { registry });
  });

  it('widens an inferred column when a value past the sample does not fit, instead of failing the file', async () => {
    const { dir, table, opts } = await inbox();
    const rows: (string | number)[][] = Array.from({ length: 5000 }, (_, i) => [i, i * 10]);
    rows.push([5000, 'n/a']);
    await drop(dir, 'wide.csv', csv('id,v', rows));
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 0, JSON.stringify(stats.lastError));
    assert.equal(await count(fx.pool, table), 5001);
    const cols = await fx.pool.transaction((c) => c.describeTable({ name: table }));
    assert.deepEqual(cols?.map((c) => c.sqlType), ['bigint', 'text']);
    await stopWatching(dir, { registry });
  });

  it('sends a symlinked data file to failed/ with a security error, never reading its target', async () => {
    const { dir, table, opts } = await inbox();
    const secret = join(fx.root, `secret-${n}.csv`);
    await writeFile(secret, csv('id', [[666]]));
    await symlink(secret, join(dir, 'evil.csv'));
    await writeFile(join(dir, 'evil.csv.ready'), '');
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'evil.csv.error'), 'utf8'));
    assert.equal(report.kind, 'security');
    assert.match(report.message, /symbolic link/);
    assert.equal((await fx.pool.query(`SELECT 1 FROM pg_catalog.pg_class WHERE relname = '${table}'`)).length, 0);
    await stopWatching(dir, { registry });
  });

  it('never overwrites an earlier failure of the same name', async () => {
    const { dir, table, opts } = await inbox();
    await drop(dir, 'x.csv', 'id\nnot-a-number-1\n');
    const handle = await openWatcher(dir, table, { ...opts, createTable: false });
    await drop(dir, 'x.csv', 'id\nsecond\n');
    await waitFor(() => handle.stats.filesFailed === 2, 'two failures');
    const names = await failedEntries(dir);
    assert.equal(names.filter((f) => f.endsWith('.csv')).length, 2, names.join(' '));
    assert.equal(names.filter((f) => f.endsWith('.csv.error')).length, 2, names.join(' '));
    const contents = await Promise.all(names.filter((f) => f.endsWith('.csv')).map((f) => readFile(join(dir, 'failed', f), 'utf8')));
    assert.deepEqual(contents.sort(), ['id\nnot-a-number-1\n', 'id\nsecond\n']);
    await handle.stop();
  });

  it('sends an unknown extension to failed/ with the list of known ones', async () => {
    const { dir, table, opts } = await inbox();
    await drop(dir, 'notes.xyz', 'hello');
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'notes.xyz.error'), 'utf8'));
    assert.equal(report.code, 'UNKNOWN_EXTENSION');
    assert.match(report.message, /\.csv/);
    await stopWatching(dir, { registry });
  });

  it('ignores dot-files and *.tmp files, and data files without a sentinel', async () => {
    const { dir, table, opts } = await inbox();
    await writeFile(join(dir, '.hidden.csv'), 'id\n1\n');
    await writeFile(join(dir, '.hidden.csv.ready'), '');
    await writeFile(join(dir, 'part.csv.tmp'), 'id\n1\n');
    await writeFile(join(dir, 'pending.csv'), 'id\n1\n');
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesIngested + stats.filesFailed, 0);
    assert.deepEqual(await leftovers(dir), ['.hidden.csv', '.hidden.csv.ready', 'part.csv.tmp', 'pending.csv']);
    await stopWatching(dir, { registry });
  });

  it('recovers files an earlier run left claimed: ingests uncommitted ones, only cleans up committed ones', async () => {
    const { dir, table, opts } = await inbox();
    await drop(dir, 'first.csv', csv('id', [[1]]));
    const first = await openWatcher(dir, table, opts);
    await first.stop();
    const staging = join(dir, '.hyperwatch', 'staging');
    // A claim whose commit reached the ledger (crash between commit and clean-up) ...
    const [committed] = await fx.pool.query<{ claim_id: string }>(`SELECT claim_id FROM hyperwatch_ingest_log WHERE target_table = '${table}'`);
    await writeFile(join(staging, `${committed!.claim_id}~first.csv`), csv('id', [[1]]));
    await writeFile(join(staging, `${committed!.claim_id}~first.csv.ready`), '');
    // ... one that never committed (crash mid-ingest) ...
    await writeFile(join(staging, '0zzzzzzzz-00000000000000aa~second.csv'), csv('id', [[2], [3]]));
    await writeFile(join(staging, '0zzzzzzzz-00000000000000aa~second.csv.ready'), '');
    // ... and a claim interrupted after taking the sentinel, before the data file.
    await writeFile(join(staging, '0zzzzzzzz-00000000000000bb~third.csv.ready'), '');
    await writeFile(join(dir, 'third.csv'), csv('id', [[4]]));
    const again = await openWatcher(dir, table, opts);
    assert.equal(again.stats.recovered, 2);
    assert.equal(again.stats.filesIngested, 2, 'second.csv recovered, third.csv swept');
    assert.equal(await count(fx.pool, table), 4, 'first.csv not twice; second.csv and third.csv once');
    await again.stop();
    assert.deepEqual(await readdir(staging), []);
    assert.deepEqual(await leftovers(dir), []);
    const ledger = await fx.pool.query<{ claim_id: string }>(`SELECT claim_id FROM hyperwatch_ingest_log WHERE target_table = '${table}' ORDER BY claim_id`);
    assert.ok(ledger.some((r) => r.claim_id === '0zzzzzzzz-00000000000000aa'));
    assert.equal(ledger.length, 3);
  });

  it('routes every format by extension into one table; bad files of each format fail alone', async () => {
    const { dir, table, opts } = await inbox();
    const parquetPath = join(fx.root, `mixed-${n}.parquet`);
    await fx.pool.query(`COPY (SELECT CAST(g AS BIGINT) AS id, 'pq-' || g AS name FROM generate_series(1, 4) g) TO '${parquetPath}' WITH (FORMAT parquet)`);
    const parquet = await readFile(parquetPath);
    const arrow = tableToIPC(tableFromArrays({ id: BigInt64Array.from([5n, 6n]), name: ['ar-5', 'ar-6'] }), 'file');
    await drop(dir, 'a.csv', csv('id,name', [[0, 'csv-0']]));
    await drop(dir, 'b.parquet', parquet);
    await drop(dir, 'c.ARROW', arrow);
    await drop(dir, 'd.jsonl', '{"id":7,"name":"js-7"}\n{"name":"js-8","id":8}\n');
    await drop(dir, 'e.json', '[{"id":9,"name":"js-9"}]');
    await drop(dir, 'bad-empty.parquet', '');
    await drop(dir, 'bad-truncated.arrow', arrow.subarray(0, Math.floor(arrow.length / 2)));
    await drop(dir, 'bad-syntax.jsonl', '{"id":10,"name":"ok"}\n{"id":11,"name":}\n');
    await drop(dir, 'bad-object.json', '{"id":12,"name":"alone"}');
    const stats = await startWatching(dir, table, { ...opts, maxConcurrent: 2 });
    assert.equal(stats.filesIngested, 5, JSON.stringify(stats.lastError));
    assert.equal(stats.filesFailed, 4);
    const rows = await fx.pool.query<{ id: string; name: string }>(`SELECT id, name FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => `${r.id}:${r.name}`),
      ['0:csv-0', '1:pq-1', '2:pq-2', '3:pq-3', '4:pq-4', '5:ar-5', '6:ar-6', '7:js-7', '8:js-8', '9:js-9'],
    );
    const failed = await failedEntries(dir);
    assert.deepEqual(failed.filter((f) => f.endsWith('.error')), ['bad-empty.parquet.error', 'bad-object.json.error', 'bad-syntax.jsonl.error', 'bad-truncated.arrow.error']);
    const syntax = JSON.parse(await readFile(join(dir, 'failed', 'bad-syntax.jsonl.error'), 'utf8'));
    assert.equal(syntax.line, 2);
    assert.equal(JSON.parse(await readFile(join(dir, 'failed', 'bad-empty.parquet.error'), 'utf8')).code, 'EMPTY_FILE');
    await stopWatching(dir, { registry });
  });

  it('rejects a missing directory and an invalid table name with clear errors', async () => {
    const dir = await tempDir();
    await assert.rejects(startWatching(join(dir, 'nope'), 't', { db: fx.db, registry }), /does not exist/);
    await assert.rejects(startWatching(dir, 'bad name;', { db: fx.db, registry }), /invalid table name/);
    assert.equal(registry.get(dir), undefined);
  });
});
