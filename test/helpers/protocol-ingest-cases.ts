/**
 * The sentinel protocol, files that land (run by protocol-suite.ts on every database): found by
 * the initial sweep or dropped while watching, 200 at once within maxConcurrent, columns matched
 * by name, types inferred and widened, every format routed by extension into one table, and
 * small files grouped into one commit.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { ResultAsync } from 'neverthrow';
import { csvIngester } from '../../plugins/csv/index.ts';
import { openWatcher, startWatching, stopWatching } from '../../src/api.ts';
import { defineIngester } from '../../src/plugins.ts';
import { csv, drop, failedEntries, leftovers, stagedEntries, waitFor } from './drop.ts';
import { columnsOf, count, sqlTypes } from './env.ts';
import { groupLogger, type WatchBench } from './watch-bench.ts';
import type { ProtocolExpectations } from './protocol-suite.ts';

export function ingestCases(t: WatchBench, expect: ProtocolExpectations): void {
  it('ingests one file found by the initial sweep, records it in the ledger, then removes both files', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(
      dir,
      'a.csv',
      csv('id,name,score', [
        [1, 'ann', 1.5],
        [2, 'bob', 2.5],
        [3, 'cy', 3],
      ]),
    );
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesIngested, 1);
    assert.equal(stats.rowsIngested, 3);
    assert.equal(await count(t.pool, table), 3);
    const rows = await t.pool.query<{ id: string; name: string; score: number }>(`SELECT * FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => [String(r.id), r.name, r.score]),
      [
        ['1', 'ann', 1.5],
        ['2', 'bob', 2.5],
        ['3', 'cy', 3],
      ],
    );
    assert.deepEqual(await sqlTypes(t.pool, table), ['bigint', 'text', 'double precision']);
    assert.deepEqual(await leftovers(dir), []);
    const ledger = await t.pool.query<{ file_name: string; row_count: string }>(
      `SELECT file_name, row_count FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}'`,
    );
    assert.deepEqual(
      ledger.map((r) => [r.file_name, Number(r.row_count)]),
      [['a.csv', 3]],
    );
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
    await drop(
      dir,
      'live.csv',
      csv('k,v', [
        [1, 10],
        [2, 20],
      ]),
    );
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
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        drop(
          dir,
          `f${String(i).padStart(3, '0')}.csv`,
          csv('id,batch', [
            [i * 2, i],
            [i * 2 + 1, i],
          ]),
        ),
      ),
    );
    await waitFor(() => handle.stats.filesIngested === 200, '200 files', 60000);
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    console.log(
      `# ${t.db.name}: 200 files ingested in ${seconds.toFixed(2)} s (${(200 / seconds).toFixed(0)} files/s), peak concurrency ${peak}`,
    );
    assert.equal(await count(t.pool, table), 400);
    const [distinct] = await t.pool.query<{ ids: string; batches: string }>(
      `SELECT COUNT(DISTINCT id) AS ids, COUNT(DISTINCT batch) AS batches FROM ${table}`,
    );
    assert.equal(Number(distinct!.ids), 400);
    assert.equal(Number(distinct!.batches), 200);
    const [ledger] = await t.pool.query<{ n: string; claims: string }>(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT claim_id) AS claims FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}'`,
    );
    assert.deepEqual([Number(ledger!.n), Number(ledger!.claims)], [200, 200]);
    assert.ok(peak <= 3, `peak concurrent appends ${peak} > 3`);
    assert.ok(sampledPeak <= 3, `stats.inFlight reached ${sampledPeak}`);
    assert.ok(peak >= 2, 'files should have run in parallel');
    assert.equal(handle.stats.filesFailed, 0);
    assert.deepEqual(await leftovers(dir), []);
    await handle.stop();
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
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.city, Number(r.amount)]),
      [
        [1, 'oslo', 10],
        [2, 'rome', 20],
      ],
    );
    const report = JSON.parse(await readFile(join(dir, 'failed', '3.csv.error'), 'utf8'));
    assert.equal(report.code, 'UNKNOWN_COLUMN');
    assert.equal(report.column, 'town');
    assert.match(report.message, /"town"/);
    await stopWatching(dir, { registry: t.registry });
  });

  it('infers BIGINT (a later 3e9 fits) and waits for data before creating a table from a header-only file', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'a-header-only.csv', 'id,n,when\n');
    await drop(
      dir,
      'b.csv',
      csv('id,n,when', [
        [1, 5, '2024-01-02'],
        [2, 6, '2024-01-03'],
      ]),
    );
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
      [
        '0:csv-0',
        '1:jl-1',
        '2:jl-2',
        '3:js-3',
        '4:js-4',
        '5:ar-5',
        '6:ar-6',
        '7:st-7',
        ...(parquet ? ['11:pq-11', '12:pq-12', '13:pq-13', '14:pq-14'] : []),
      ],
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

  it('groups small files (PostgreSQL: one COPY FROM STDIN): bad ones among 120 fail alone, each good one lands once with its \
row count', async () => {
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
    const ledger = await t.pool.query<{ file_name: string; row_count: string }>(
      `SELECT file_name, row_count FROM hyperwatch_internal.ingest_log WHERE target_table = $1`,
      [table],
    );
    assert.equal(ledger.length, good.length, 'one ledger row per good file');
    const byName = new Map(ledger.map((r) => [r.file_name, Number(r.row_count)]));
    for (const i of good) assert.equal(byName.get(`g${String(i).padStart(3, '0')}.csv`), rowsOf(i), `ledger row count of file ${i}`);
    await handle.stop();
    assert.deepEqual(await stagedEntries(dir), []);
  });
}
