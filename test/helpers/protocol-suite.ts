/**
 * The sentinel protocol end to end, for any database: one set of cases that watcher.test.ts runs
 * on an embedded hyperd and postgres.test.ts on a PostgreSQL server, so that both adapters are
 * held to the same behaviour. What only one database does (Hyper's checkpoints, PostgreSQL's
 * `\.` end marker, restarts, ...) stays in that database's test file.
 */
import assert from 'node:assert/strict';
import { readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { it } from 'node:test';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { ResultAsync } from 'neverthrow';
import { csvIngester } from '../../plugins/csv/index.ts';
import { openWatcher, startWatching, stopWatching } from '../../src/api.ts';
import { DEFAULT_MAX_CONCURRENT, MAX_CONCURRENT_LIMIT } from '../../src/constants.ts';
import { fromDbError } from '../../src/errors.ts';
import { clampMaxConcurrent } from '../../src/options.ts';
import { POISON_FILE_ATTEMPTS } from '../../src/watcher/retry.ts';
import { defineIngester } from '../../src/plugins.ts';
import { archiveCases } from './archive-suite.ts';
import { textFileCases } from './text-files-suite.ts';
import { compressionCases } from './compression-suite.ts';
import { csv, drop, failedEntries, leftovers, stagedEntries, waitFor } from './drop.ts';
import { columnsOf, count, sqlTypes } from './env.ts';
import { evolutionCases } from './evolution-suite.ts';
import { groupLogger, type WatchBench } from './watch-bench.ts';

export interface ProtocolExpectations {
  /** What the adapter's `describe()` must say (a stop summary reports it); read once the suite runs. */
  readonly description: () => string;
  /**
   * The database's commits are durable when they return (PostgreSQL): a file's staged copy goes
   * at once and no checkpoint is taken. Otherwise (Hyper) a checkpoint makes the commits durable
   * before the staged copies go. Stated by the test file, not read from the adapter, so that a
   * wrong capability fails here.
   */
  readonly durableCommit: boolean;
  /**
   * The report's message for `5,not-a-number` in a BIGINT column `amount` (line 3, column 2):
   * the file, line and column are the watcher's, the wording between them the database's.
   */
  readonly badNumberMessage: RegExp;
  /**
   * The database fills a column with a DEFAULT that a load leaves out (PostgreSQL). hyperd's COPY
   * does not: an omitted nullable column is NULL, and a NOT NULL one must be in the file.
   */
  readonly fillsDefaults: boolean;
  /**
   * Writes a Parquet file of columns `id` BIGINT and `name` TEXT (ids 11 to 14, names `pq-<id>`)
   * to `path` and returns its bytes, where the database can write one (Hyper's COPY ... TO);
   * PostgreSQL writes no Parquet, and its own test file covers Parquet.
   */
  readonly mixedParquet?: (path: string) => Promise<Uint8Array>;
}

/** Registers the protocol's cases in the enclosing `describe`, on the bench's database. */
export function protocolCases(t: WatchBench, expect: ProtocolExpectations): void {
  evolutionCases(t);
  it('ingests one file found by the initial sweep, records it in the ledger, then removes both files', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'a.csv', csv('id,name,score', [[1, 'ann', 1.5], [2, 'bob', 2.5], [3, 'cy', 3]]));
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesIngested, 1);
    assert.equal(stats.rowsIngested, 3);
    assert.equal(await count(t.pool, table), 3);
    const rows = await t.pool.query<{ id: string; name: string; score: number }>(`SELECT * FROM ${table} ORDER BY id`);
    assert.deepEqual(rows.map((r) => [String(r.id), r.name, r.score]), [['1', 'ann', 1.5], ['2', 'bob', 2.5], ['3', 'cy', 3]]);
    assert.deepEqual(await sqlTypes(t.pool, table), ['bigint', 'text', 'double precision']);
    assert.deepEqual(await leftovers(dir), []);
    const ledger = await t.pool.query<{ file_name: string; row_count: string }>(`SELECT file_name, row_count FROM hyperwatch_ingest_log WHERE target_table = '${table}'`);
    assert.deepEqual(ledger.map((r) => [r.file_name, Number(r.row_count)]), [['a.csv', 3]]);
    // Durable commits: the staged copy goes at commit, without a checkpoint.
    if (expect.durableCommit) assert.deepEqual(await stagedEntries(dir), []);
    const summary = await stopWatching(dir, { registry: t.registry });
    assert.equal(summary.database, expect.description());
    if (expect.durableCommit) assert.equal(summary.stats.checkpoints, 0);
    else assert.ok(summary.stats.checkpoints >= 1, 'commits made durable before the staged copy went');
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('ingests a file dropped while watching', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, opts);
    await drop(dir, 'live.csv', csv('k,v', [[1, 10], [2, 20]]));
    await waitFor(() => handle.stats.filesIngested === 1, 'live.csv to be ingested');
    assert.deepEqual(await leftovers(dir), []);
    assert.equal(await count(t.pool, table), 2);
    const summary = await stopWatching(dir, { registry: t.registry });
    assert.equal(summary.stats.filesIngested, 1);
    assert.equal(summary.stats.rowsIngested, 2);
  });

  it('ingests 200 files dropped at once, each once, never more than maxConcurrent at a time', async () => {
    const { dir, table, opts } = await t.inbox();
    let active = 0;
    let peak = 0;
    // Wraps the real CSV ingester to observe how many appends run at once.
    const counting = defineIngester({
      name: 'csv-counting',
      extensions: ['.csv'],
      append(conn, file, target, ctx) {
        active++;
        peak = Math.max(peak, active);
        return ResultAsync.fromSafePromise(
          (async () => {
            try {
              return await csvIngester.append(conn, file, target, ctx);
            } finally {
              active--;
            }
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
    await waitFor(() => handle.stats.filesIngested === 200, '200 files', 60000);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    console.log(`# ${t.db.name}: 200 files ingested in ${seconds.toFixed(2)} s (${(200 / seconds).toFixed(0)} files/s), peak concurrency ${peak}`);
    assert.equal(await count(t.pool, table), 400);
    const [distinct] = await t.pool.query<{ ids: string; batches: string }>(`SELECT COUNT(DISTINCT id) AS ids, COUNT(DISTINCT batch) AS batches FROM ${table}`);
    assert.equal(Number(distinct!.ids), 400);
    assert.equal(Number(distinct!.batches), 200);
    const [ledger] = await t.pool.query<{ n: string; claims: string }>(`SELECT COUNT(*) AS n, COUNT(DISTINCT claim_id) AS claims FROM hyperwatch_ingest_log WHERE target_table = '${table}'`);
    assert.deepEqual([Number(ledger!.n), Number(ledger!.claims)], [200, 200]);
    assert.ok(peak <= 3, `peak concurrent appends ${peak} > 3`);
    assert.ok(sampledPeak <= 3, `stats.inFlight reached ${sampledPeak}`);
    assert.ok(peak >= 2, 'files should have run in parallel');
    assert.equal(handle.stats.filesFailed, 0);
    assert.deepEqual(await leftovers(dir), []);
    await handle.stop();
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('moves a malformed CSV to failed/ with a .error naming code, line and column, while the good ones land', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'good1.csv', csv('id,amount', [[1, 10], [2, 20]]));
    await drop(dir, 'good2.csv', csv('id,amount', [[3, 30]]));
    const handle = await openWatcher(dir, table, opts);
    await drop(dir, 'bad.csv', 'id,amount\n4,40\n5,not-a-number\n');
    await drop(dir, 'good3.csv', csv('id,amount', [[6, 60]]));
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 4, 'all files settled');
    assert.equal(handle.stats.filesIngested, 3);
    assert.deepEqual(await leftovers(dir), []);
    assert.equal(await count(t.pool, table), 4);
    assert.equal(await count(t.pool, table, 'id IN (4, 5)'), 0, 'nothing of the bad file');
    assert.deepEqual(await failedEntries(dir), ['bad.csv', 'bad.csv.error', 'bad.csv.ready']);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'bad.csv.error'), 'utf8'));
    assert.equal(report.file, 'bad.csv');
    assert.equal(report.kind, 'data');
    assert.equal(report.code, 'DB_22P02');
    assert.equal(report.sqlState, '22P02');
    assert.equal(report.line, 3);
    assert.equal(report.column, 2);
    assert.match(report.message, expect.badNumberMessage);
    assert.match(report.hint, /replay/);
    assert.ok(!Number.isNaN(Date.parse(report.time)));
    assert.equal(await readFile(join(dir, 'failed', 'bad.csv'), 'utf8'), 'id,amount\n4,40\n5,not-a-number\n');
    const summary = await stopWatching(dir, { registry: t.registry });
    assert.equal(summary.stats.filesFailed, 1);
    assert.equal(summary.stats.lastError?.file, 'bad.csv');
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('fails an empty file with EMPTY_FILE and keeps going', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'empty.csv', '');
    await drop(dir, 'ok.csv', csv('id', [[1]]));
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 1);
    assert.equal(stats.filesIngested, 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'empty.csv.error'), 'utf8'));
    assert.equal(report.code, 'EMPTY_FILE');
    assert.equal(report.kind, 'data');
    assert.equal(await count(t.pool, table), 1);
    await stopWatching(dir, { registry: t.registry });
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('reports a .ready whose data file never appears, after the grace period', async () => {
    const { dir, table, opts } = await t.inbox();
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
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, orphanGraceMs: 10000 });
    await writeFile(join(dir, 'late.csv.ready'), '');
    await new Promise((r) => setTimeout(r, 100));
    await writeFile(join(dir, '.late.tmp'), csv('id', [[7]]));
    await rename(join(dir, '.late.tmp'), join(dir, 'late.csv'));
    await waitFor(() => handle.stats.filesIngested === 1, 'late file');
    assert.equal(await count(t.pool, table), 1);
    assert.equal(handle.stats.orphans, 0);
    await handle.stop();
  });

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
    assert.deepEqual(ids.map((r) => Number(r.id)), [1, 2]);
    await stopWatching(dir, { registry: t.registry });
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('matches columns by name, not position, and names an unknown column', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, '1.csv', csv('id,city,amount', [[1, 'oslo', 10]]));
    const handle = await openWatcher(dir, table, opts);
    await drop(dir, '2.csv', csv('amount,id,city', [[20, 2, 'rome']]));
    await drop(dir, '3.csv', csv('id,town,amount', [[3, 'kyiv', 30]]));
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 3, 'files settled');
    const rows = await t.pool.query<{ id: string; city: string; amount: string }>(`SELECT id, city, amount FROM ${table} ORDER BY id`);
    assert.deepEqual(rows.map((r) => [Number(r.id), r.city, Number(r.amount)]), [[1, 'oslo', 10], [2, 'rome', 20]]);
    const report = JSON.parse(await readFile(join(dir, 'failed', '3.csv.error'), 'utf8'));
    assert.equal(report.code, 'UNKNOWN_COLUMN');
    assert.equal(report.column, 'town');
    assert.match(report.message, /"town"/);
    await stopWatching(dir, { registry: t.registry });
  });

  it('infers BIGINT (a later 3e9 fits) and waits for data before creating a table from a header-only file', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'a-header-only.csv', 'id,n,when\n');
    await drop(dir, 'b.csv', csv('id,n,when', [[1, 5, '2024-01-02'], [2, 6, '2024-01-03']]));
    await drop(dir, 'c.csv', csv('id,n,when', [[3, 3000000000, '2024-01-04']]));
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 0);
    assert.equal(stats.filesIngested, 3);
    assert.deepEqual(await columnsOf(t.pool, table), ['id bigint', 'n bigint', 'when date']);
    assert.equal(await count(t.pool, table, 'n = 3000000000'), 1);
    await stopWatching(dir, { registry: t.registry });
  });

  it('widens an inferred column when a value past the sample does not fit, instead of failing the file', async () => {
    const { dir, table, opts } = await t.inbox();
    const rows: (string | number)[][] = Array.from({ length: 5000 }, (_, i) => [i, i * 10]);
    rows.push([5000, 'n/a']);
    await drop(dir, 'wide.csv', csv('id,v', rows));
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 0, JSON.stringify(stats.lastError));
    assert.equal(await count(t.pool, table), 5001);
    assert.deepEqual(await sqlTypes(t.pool, table), ['bigint', 'text']);
    await stopWatching(dir, { registry: t.registry });
  });

  it('sends a symlinked data file to failed/ with a security error, never reading its target', async () => {
    const { dir, table, opts } = await t.inbox();
    const secret = `${dir}-secret.csv`;
    await writeFile(secret, csv('id', [[666]]));
    await symlink(secret, join(dir, 'evil.csv'));
    await writeFile(join(dir, 'evil.csv.ready'), '');
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'evil.csv.error'), 'utf8'));
    assert.equal(report.kind, 'security');
    assert.match(report.message, /symbolic link/);
    assert.equal((await t.pool.query(`SELECT 1 FROM pg_catalog.pg_class WHERE relname = '${table}'`)).length, 0);
    await stopWatching(dir, { registry: t.registry });
  });

  it('never overwrites an earlier failure of the same name', async () => {
    const { dir, table, opts } = await t.inbox();
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
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'notes.xyz', 'hello');
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'notes.xyz.error'), 'utf8'));
    assert.equal(report.code, 'UNKNOWN_EXTENSION');
    assert.match(report.message, /\.csv/);
    await stopWatching(dir, { registry: t.registry });
  });

  it('ignores dot-files and *.tmp files, and data files without a sentinel', async () => {
    const { dir, table, opts } = await t.inbox();
    await writeFile(join(dir, '.hidden.csv'), 'id\n1\n');
    await writeFile(join(dir, '.hidden.csv.ready'), '');
    await writeFile(join(dir, 'part.csv.tmp'), 'id\n1\n');
    await writeFile(join(dir, 'pending.csv'), 'id\n1\n');
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesIngested + stats.filesFailed, 0);
    assert.deepEqual(await leftovers(dir), ['.hidden.csv', '.hidden.csv.ready', 'part.csv.tmp', 'pending.csv']);
    await stopWatching(dir, { registry: t.registry });
  });

  it('recovers files an earlier run left claimed: ingests uncommitted ones, only cleans up committed ones', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'first.csv', csv('id', [[1]]));
    const first = await openWatcher(dir, table, opts);
    await first.stop();
    const staging = join(dir, '.hyperwatch', 'staging');
    // A claim whose commit reached the ledger (crash between commit and clean-up) ...
    const [committed] = await t.pool.query<{ claim_id: string }>(`SELECT claim_id FROM hyperwatch_ingest_log WHERE target_table = '${table}'`);
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
    assert.equal(await count(t.pool, table), 4, 'first.csv not twice; second.csv and third.csv once');
    await again.stop();
    assert.deepEqual(await stagedEntries(dir), []);
    assert.deepEqual(await leftovers(dir), []);
    const ledger = await t.pool.query<{ claim_id: string }>(`SELECT claim_id FROM hyperwatch_ingest_log WHERE target_table = '${table}' ORDER BY claim_id`);
    assert.ok(ledger.some((r) => r.claim_id === '0zzzzzzzz-00000000000000aa'));
    assert.equal(ledger.length, 3);
  });

  it('sends a poison file (every attempt closes its connection while the database answers) to failed/ after 3 attempts; the others land', async () => {
    const { dir, table, opts } = await t.inbox();
    let poisonAttempts = 0;
    const poisonous = defineIngester({
      name: 'csv-poisonous',
      extensions: ['.csv'],
      append(conn, file, target, ctx) {
        if (!file.name.startsWith('poison')) return csvIngester.append(conn, file, target, ctx);
        poisonAttempts++;
        // A NUL inside a query's text is a protocol error: the server drops the connection.
        return ResultAsync.fromPromise(conn.query('SELECT 1\u0000'), (error) => fromDbError(error, file.name)).map(() => ({ rows: 0 }));
      },
    });
    // The table exists: the initial sweep takes the four files as one group, and the group is split.
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT)`);
    for (const [i, name] of ['a.csv', 'poison.csv', 'b.csv', 'c.csv'].entries()) await drop(dir, name, csv('id', [[i]]));
    const handle = await openWatcher(dir, table, { ...opts, plugins: [poisonous], retryDelayMs: { initial: 20, max: 100 } });
    await waitFor(() => handle.stats.filesFailed === 1 && handle.stats.filesIngested === 3, 'three files in, the poison file failed');
    assert.equal(await count(t.pool, table), 3);
    assert.ok(poisonAttempts >= POISON_FILE_ATTEMPTS, `${poisonAttempts} attempts`);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'poison.csv.error'), 'utf8'));
    assert.equal(report.code, 'POISON_FILE');
    assert.equal(report.kind, 'data');
    assert.equal(report.file, 'poison.csv');
    assert.match(report.message, new RegExp(`${POISON_FILE_ATTEMPTS} attempts .*connection closing`));
    assert.match(report.hint, /replay/);
    assert.deepEqual(await failedEntries(dir), ['poison.csv', 'poison.csv.error', 'poison.csv.ready']);
    // Nothing is stuck: the next file lands.
    await drop(dir, 'd.csv', csv('id', [[9]]));
    await waitFor(() => handle.stats.filesIngested === 4, 'd.csv');
    await handle.stop();
    assert.deepEqual(await leftovers(dir), []);
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('routes every format by extension into one table; bad files of each format fail alone', async () => {
    const { dir, table, opts } = await t.inbox();
    const arrow = tableToIPC(tableFromArrays({ id: BigInt64Array.from([5n, 6n]), name: ['ar-5', 'ar-6'] }), 'file');
    await drop(dir, 'a.csv', csv('id,name', [[0, 'csv-0']]));
    await drop(dir, 'b.jsonl', '{"id":1,"name":"jl-1"}\n{"name":"jl-2","id":2}\n');
    await drop(dir, 'c.json', '[{"id":3,"name":"js-3"},{"id":4,"name":"js-4"}]');
    await drop(dir, 'd.ARROW', arrow);
    await drop(dir, 'e.ipc', tableToIPC(tableFromArrays({ id: BigInt64Array.from([7n]), name: ['st-7'] }), 'stream'));
    // A Parquet file with the same columns, where the database can write one (ids 11 to 14).
    const parquet = await expect.mixedParquet?.(`${dir}-mixed.parquet`);
    if (parquet) await drop(dir, 'f.parquet', parquet);
    await drop(dir, 'bad-empty.parquet', '');
    await drop(dir, 'bad-truncated.arrow', arrow.subarray(0, Math.floor(arrow.length / 2)));
    await drop(dir, 'bad-cut.arrow', arrow.subarray(0, 100));
    await drop(dir, 'bad-syntax.jsonl', '{"id":10,"name":"ok"}\n{"id":11,"name":}\n');
    await drop(dir, 'bad-object.json', '{"id":12,"name":"alone"}');
    const stats = await startWatching(dir, table, { ...opts, maxConcurrent: 2 });
    assert.equal(stats.filesIngested, parquet ? 6 : 5, JSON.stringify(stats.lastError));
    assert.equal(stats.filesFailed, 5);
    const rows = await t.pool.query<{ id: string; name: string }>(`SELECT id, name FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => `${r.id}:${r.name}`),
      ['0:csv-0', '1:jl-1', '2:jl-2', '3:js-3', '4:js-4', '5:ar-5', '6:ar-6', '7:st-7', ...(parquet ? ['11:pq-11', '12:pq-12', '13:pq-13', '14:pq-14'] : [])],
    );
    const failed = await failedEntries(dir);
    assert.deepEqual(
      failed.filter((f) => f.endsWith('.error')),
      ['bad-cut.arrow.error', 'bad-empty.parquet.error', 'bad-object.json.error', 'bad-syntax.jsonl.error', 'bad-truncated.arrow.error'],
    );
    const syntax = JSON.parse(await readFile(join(dir, 'failed', 'bad-syntax.jsonl.error'), 'utf8'));
    assert.equal(syntax.line, 2);
    assert.equal(JSON.parse(await readFile(join(dir, 'failed', 'bad-empty.parquet.error'), 'utf8')).code, 'EMPTY_FILE');
    await stopWatching(dir, { registry: t.registry });
  });

  it('groups small files (PostgreSQL: one COPY FROM STDIN): bad ones among 120 fail alone, each good one lands once with its row count', async () => {
    const { dir, table, opts } = await t.inbox();
    const logger = groupLogger();
    const content = (i: number) => {
      const rows = Array.from({ length: 1 + (i % 5) }, (_, r) => `${i * 10 + r},"f${i}\nline ${r}"`);
      // Every shape the concatenated stream must keep apart: CRLF, no final line break, header only.
      if (i % 10 === 3) return `id,label\r\n${rows.join('\r\n')}\r\n`;
      if (i % 10 === 4) return `id,label\n${rows.join('\n')}`;
      return `id,label\n${rows.join('\n')}\n`;
    };
    await drop(dir, 'g000.csv', content(0));
    const bad = new Map([
      [41, 'id,label\n410,ok\nfour-eleven,bad\n'],
      [77, 'id,label\n770,"never closed\n'],
      [78, 'id,nope\n780,x\n'],
    ]);
    const names = Array.from({ length: 120 }, (_, k) => `g${String(k + 1).padStart(3, '0')}.csv`);
    // All there before the watcher starts, so that they are ready together whatever the timing
    // (dropped while watching, each PostgreSQL commit is quick enough to take them one by one):
    // the first file creates the table, the initial sweep takes the others in groups.
    await Promise.all(names.map((name, k) => drop(dir, name, bad.get(k + 1) ?? (k + 1 === 50 ? 'id,label\n' : content(k + 1)))));
    const handle = await openWatcher(dir, table, { ...opts, logger, maxConcurrent: 2 });
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 121, 'all files settled', 60000);
    assert.ok(Math.max(...logger.groups) > 1, 'files were committed in groups');
    assert.deepEqual(
      (await failedEntries(dir)).filter((f) => f.endsWith('.error')),
      ['g041.csv.error', 'g077.csv.error', 'g078.csv.error'],
    );
    const report = JSON.parse(await readFile(join(dir, 'failed', 'g041.csv.error'), 'utf8'));
    assert.equal(report.code, 'DB_22P02');
    assert.equal(report.line, 3);
    assert.equal(JSON.parse(await readFile(join(dir, 'failed', 'g078.csv.error'), 'utf8')).code, 'UNKNOWN_COLUMN');
    const good = Array.from({ length: 121 }, (_, i) => i).filter((i) => !bad.has(i));
    const rowsOf = (i: number) => (i === 50 ? 0 : 1 + (i % 5));
    const expected = good.reduce((sum, i) => sum + rowsOf(i), 0);
    assert.equal(await count(t.pool, table), expected);
    const [distinct] = await t.pool.query<{ n: string }>(`SELECT COUNT(DISTINCT id) AS n FROM ${table}`);
    assert.equal(Number(distinct!.n), expected);
    assert.equal(await count(t.pool, table, `label = 'f13' || chr(10) || 'line 3'`), 1, 'a quoted line break survives');
    const ledger = await t.pool.query<{ file_name: string; row_count: string }>(`SELECT file_name, row_count FROM hyperwatch_ingest_log WHERE target_table = $1`, [table]);
    assert.equal(ledger.length, good.length, 'one ledger row per good file');
    const byName = new Map(ledger.map((r) => [r.file_name, Number(r.row_count)]));
    for (const i of good) assert.equal(byName.get(`g${String(i).padStart(3, '0')}.csv`), rowsOf(i), `ledger row count of file ${i}`);
    await handle.stop();
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('onBadRows skip: a bad file among small ones ready together keeps its good rows, its bad ones set aside', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, onBadRows: 'skip' });
    await drop(dir, 'first.csv', csv('id,amount', [[0, 0]]));
    await waitFor(() => handle.stats.filesIngested === 1, 'first.csv creates the table');
    await Promise.all(Array.from({ length: 10 }, (_, i) => drop(dir, `s${i}.csv`, i === 4 ? 'id,amount\n41,1\n42,lots\n43\n44,4\n' : csv('id,amount', [[i * 10 + 1, i]]))));
    await waitFor(() => handle.stats.filesIngested === 11, '10 more files');
    await handle.stop();
    assert.equal(handle.stats.filesFailed, 0);
    assert.equal(handle.stats.rowsRejected, 2);
    assert.equal(await count(t.pool, table), 1 + 9 + 2);
    assert.deepEqual(await failedEntries(dir), ['s4.csv.rejected.csv']);
    assert.equal(
      await readFile(join(dir, 'failed', 's4.csv.rejected.csv'), 'utf8'),
      'line,reason,record\n3,"column ""amount"": ""lots"" is not a bigint","42,lots"\n4,1 field(s) where the header has 2,43\n',
    );
    const [ledger] = await t.pool.query<{ row_count: string; rows_rejected: string }>(`SELECT row_count, rows_rejected FROM hyperwatch_ingest_log WHERE target_table = $1 AND file_name = 's4.csv'`, [table]);
    assert.deepEqual([Number(ledger!.row_count), Number(ledger!.rows_rejected)], [2, 2]);
    const others = await t.pool.query<{ rows_rejected: string | null }>(`SELECT rows_rejected FROM hyperwatch_ingest_log WHERE target_table = $1 AND file_name <> 's4.csv'`, [table]);
    assert.deepEqual(new Set(others.map((r) => r.rows_rejected === null ? null : Number(r.rows_rejected))), new Set([0]), 'files of a group: 0 rejected, not unknown');
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('rejects a missing directory and an invalid table name with clear errors', async () => {
    const { dir, opts } = await t.inbox();
    await assert.rejects(startWatching(join(dir, 'nope'), 't', opts), /does not exist/);
    await assert.rejects(startWatching(dir, 'bad\u0000name', opts), /invalid table name/);
    assert.equal(t.registry.get(dir), undefined);
  });

  archiveCases(t);
  textFileCases(t, expect.fillsDefaults);
  compressionCases(t);
}
