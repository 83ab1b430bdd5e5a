/**
 * The load modes (replace, upsert, replace-keys) and `order`, as a user runs them: files dropped
 * in sequence into a watched directory, the table read back row by row after each. Shared by
 * the Hyper and the PostgreSQL test files (`mode-*.test.ts`); the refusals are in modes-refusals.ts.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openWatcher } from '../../src/api.ts';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import type { WatchOptions } from '../../src/options.ts';
import { miniParquet, plain } from './conformance-parquet-mini.ts';
import { csv } from './drop.ts';
import type { WatchBench } from './watch-bench.ts';
import { dropAndWait, type ModesExpect, r, rowsOf } from './modes-common.ts';
import { groupCases } from './modes-groups.ts';
import { refusalCases } from './modes-refusals.ts';

export function modeCases(t: WatchBench, expect: ModesExpect): void {
  const open = async (options: WatchOptions) => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, ...options });
    return { dir, table, handle };
  };

  it("replace: each file becomes the table's whole content (CSV, JSON lines, an empty file)", async () => {
    const { dir, table, handle } = await open({ mode: 'replace' });
    await dropAndWait(
      handle,
      dir,
      'a.csv',
      csv('id,name,score', [
        [1, 'x', 10],
        [2, 'y', 20],
        [3, 'z', 30],
      ]),
    );
    assert.deepEqual(await rowsOf(t, table, ['id', 'name', 'score'], 'id'), [r('1', 'x', '10'), r('2', 'y', '20'), r('3', 'z', '30')]);
    await dropAndWait(handle, dir, 'b.jsonl', '{"id":7,"name":"q","score":70}\n{"id":8,"name":"w","score":80}\n');
    assert.deepEqual(await rowsOf(t, table, ['id', 'name', 'score'], 'id'), [r('7', 'q', '70'), r('8', 'w', '80')]);
    await dropAndWait(handle, dir, 'c.csv', csv('id,name', [[9, 'only']]));
    assert.deepEqual(await rowsOf(t, table, ['id', 'name', 'score'], 'id'), [r('9', 'only', null)], 'a column the file lacks is NULL');
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.equal(handle.stats.filesIngested, 3);
    await handle.stop();
  });

  it('upsert: rows with a known key replace theirs (columns the file lacks keep their values), others are inserted', async () => {
    const { dir, table, handle } = await open({ mode: 'upsert', key: 'id' });
    await dropAndWait(
      handle,
      dir,
      'a.csv',
      csv('id,name,score', [
        [1, 'a', 10],
        [2, 'b', 20],
        [3, 'c', 30],
      ]),
    );
    assert.deepEqual(await rowsOf(t, table, ['id', 'name', 'score'], 'id'), [r('1', 'a', '10'), r('2', 'b', '20'), r('3', 'c', '30')]);
    await dropAndWait(
      handle,
      dir,
      'b.csv',
      csv('id,name,score', [
        [2, 'B', 21],
        [4, 'd', 40],
      ]),
    );
    assert.deepEqual(await rowsOf(t, table, ['id', 'name', 'score'], 'id'), [
      r('1', 'a', '10'),
      r('2', 'B', '21'),
      r('3', 'c', '30'),
      r('4', 'd', '40'),
    ]);
    // Without score: the rows it updates keep theirs; the row it inserts has none.
    await dropAndWait(
      handle,
      dir,
      'c.csv',
      csv('id,name', [
        [3, 'C'],
        [5, 'e'],
        [1, 'A'],
      ]),
    );
    assert.deepEqual(await rowsOf(t, table, ['id', 'name', 'score'], 'id'), [
      r('1', 'A', '10'),
      r('2', 'B', '21'),
      r('3', 'C', '30'),
      r('4', 'd', '40'),
      r('5', 'e', null),
    ]);
    // JSON lines: every column of the table is in its load (a key may come late), so a key a record lacks is NULL.
    await dropAndWait(handle, dir, 'd.jsonl', '{"id":4,"name":"D","score":41}\n{"id":6,"name":"f","score":60}\n');
    assert.deepEqual((await rowsOf(t, table, ['id', 'name', 'score'], 'id')).slice(3), [
      r('4', 'D', '41'),
      r('5', 'e', null),
      r('6', 'f', '60'),
    ]);
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    const [ledger] = await t.pool.query<{ n: string; rows: string }>(
      `SELECT COUNT(*) AS n, SUM(row_count) AS rows FROM hyperwatch_internal.ingest_log WHERE target_table = $1`,
      [table],
    );
    assert.deepEqual([Number(ledger!.n), Number(ledger!.rows)], [4, 10], 'one ledger row per file, with the rows it brought');
    await handle.stop();
  });

  it('upsert of a 200,000-row file over a 150,000-row table: every row where it belongs, no staging table left', async () => {
    const { dir, table, handle } = await open({ mode: 'upsert', key: 'id' });
    const rowsFrom = (from: number, to: number, v: string) => {
      const lines = ['id,v'];
      for (let id = from; id <= to; id++) lines.push(`${id},${v}`);
      return `${lines.join('\n')}\n`;
    };
    await dropAndWait(handle, dir, 'a.csv', rowsFrom(1, 150_000, 'a'));
    await dropAndWait(handle, dir, 'b.csv', rowsFrom(100_001, 300_000, 'b'));
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    const summary = await t.pool.query<Record<string, string | number>>(
      `SELECT v, COUNT(*) AS n, COUNT(DISTINCT id) AS ids, MIN(id) AS lo, MAX(id) AS hi FROM ${table} GROUP BY v ORDER BY v`,
    );
    assert.deepEqual(
      summary.map((x) => [x.v, Number(x.n), Number(x.ids), Number(x.lo), Number(x.hi)]),
      [
        ['a', 100_000, 100_000, 1, 100_000],
        ['b', 200_000, 200_000, 100_001, 300_000],
      ],
    );
    const own = await t.pool.query<{ relname: string }>(
      `SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
        WHERE n.nspname = 'hyperwatch_internal' AND c.relkind = 'r'`,
    );
    const names = own.map((x) => x.relname);
    assert.ok(names.includes('ingest_log'), `the catalog query sees hyperwatch's own tables: ${names.join(', ')}`);
    assert.deepEqual(
      names.filter((n) => n.startsWith('stage')),
      [],
      'no staging table left behind',
    );
    await handle.stop();
  });

  it('upsert from Arrow IPC and Parquet files (one lacking a column), onto a table a CSV made', async () => {
    const { dir, table, handle } = await open({ mode: 'upsert', key: 'id' });
    await dropAndWait(
      handle,
      dir,
      'a.csv',
      csv('id,name,score', [
        [1, 'a', 10],
        [2, 'b', 20],
        [3, 'c', 30],
      ]),
    );
    // Arrow, without score: row 2 keeps its score.
    const arrow = tableToIPC(tableFromArrays({ id: Int32Array.from([2, 4]), name: ['B', 'd'] }), 'stream');
    await dropAndWait(handle, dir, 'b.arrows', arrow);
    const text = (values: string[]) => plain.bytes(values.map((v) => new TextEncoder().encode(v)));
    const parquet = miniParquet(
      [
        { name: 'id', type: 1, data: plain.i32([3, 9]) },
        { name: 'name', type: 6, convertedType: 0, data: text(['C', 'z']) },
        { name: 'score', type: 1, data: plain.i32([33, 99]) },
      ],
      2,
    );
    await dropAndWait(handle, dir, 'c.parquet', parquet);
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.deepEqual(await rowsOf(t, table, ['id', 'name', 'score'], 'id'), [
      r('1', 'a', '10'),
      r('2', 'B', '20'),
      r('3', 'C', '33'),
      r('4', 'd', null),
      r('9', 'z', '99'),
    ]);
    await handle.stop();
  });

  it('upsert with schema evolution and source columns: a new column is added, filled for the rows the file brings', async () => {
    const { dir, table, handle } = await open({
      mode: 'upsert',
      key: 'id',
      schemaEvolution: 'addColumns',
      sourceColumns: { file: 'src' },
    });
    await dropAndWait(
      handle,
      dir,
      'a.csv',
      csv('id,name', [
        [1, 'a'],
        [2, 'b'],
      ]),
    );
    await dropAndWait(
      handle,
      dir,
      'b.csv',
      csv('id,name,extra', [
        [2, 'B', 'x'],
        [3, 'c', 'y'],
      ]),
    );
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.deepEqual(await rowsOf(t, table, ['id', 'name', 'extra', 'src'], 'id'), [
      { id: '1', name: 'a', extra: null, src: 'a.csv' },
      { id: '2', name: 'B', extra: 'x', src: 'b.csv' },
      { id: '3', name: 'c', extra: 'y', src: 'b.csv' },
    ]);
    await handle.stop();
  });

  it("upsert with onBadRows 'skip': the bad rows are left out of what is applied", async () => {
    const { dir, table, handle } = await open({ mode: 'upsert', key: 'id', onBadRows: 'skip' });
    await dropAndWait(
      handle,
      dir,
      'a.csv',
      csv('id,amount', [
        [1, 10],
        [2, 20],
      ]),
    );
    await dropAndWait(handle, dir, 'b.csv', 'id,amount\n2,21\n3,not-a-number\n4,40\n');
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.equal(handle.stats.rowsRejected, 1);
    assert.deepEqual(await rowsOf(t, table, ['id', 'amount'], 'id'), [
      { id: '1', amount: '10' },
      { id: '2', amount: '21' },
      { id: '4', amount: '40' },
    ]);
    await handle.stop();
  });

  it('upsert with a key of two columns', async () => {
    const { dir, table, handle } = await open({ mode: 'upsert', key: ['region', 'day'] });
    await dropAndWait(
      handle,
      dir,
      'a.csv',
      csv('region,day,total', [
        ['eu', 1, 5],
        ['eu', 2, 6],
        ['us', 1, 7],
      ]),
    );
    await dropAndWait(
      handle,
      dir,
      'b.csv',
      csv('region,day,total', [
        ['us', 1, 70],
        ['us', 2, 80],
      ]),
    );
    await dropAndWait(handle, dir, 'c.csv', csv('region,day,total', [['eu', 2, 60]]));
    assert.deepEqual(await rowsOf(t, table, ['region', 'day', 'total'], 'region, day'), [
      { region: 'eu', day: '1', total: '5' },
      { region: 'eu', day: '2', total: '60' },
      { region: 'us', day: '1', total: '70' },
      { region: 'us', day: '2', total: '80' },
    ]);
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    await handle.stop();
  });

  it('replace-keys: the rows whose key value appears in the file go, then its rows come in', async () => {
    const { dir, table, handle } = await open({ mode: 'replace-keys', key: 'day' });
    await dropAndWait(
      handle,
      dir,
      'a.csv',
      csv('day,item,qty', [
        [1, 'p', 1],
        [1, 'q', 2],
        [2, 'p', 3],
      ]),
    );
    await dropAndWait(
      handle,
      dir,
      'b.csv',
      csv('day,item,qty', [
        [2, 'x', 30],
        [2, 'y', 31],
        [3, 'z', 40],
      ]),
    );
    assert.deepEqual(await rowsOf(t, table, ['day', 'item', 'qty'], 'day, item'), [
      { day: '1', item: 'p', qty: '1' },
      { day: '1', item: 'q', qty: '2' },
      { day: '2', item: 'x', qty: '30' },
      { day: '2', item: 'y', qty: '31' },
      { day: '3', item: 'z', qty: '40' },
    ]);
    await dropAndWait(handle, dir, 'c.jsonl', '{"day":1,"item":"r","qty":9}\n');
    assert.deepEqual(await rowsOf(t, table, ['day', 'item', 'qty'], 'day, item'), [
      { day: '1', item: 'r', qty: '9' },
      { day: '2', item: 'x', qty: '30' },
      { day: '2', item: 'y', qty: '31' },
      { day: '3', item: 'z', qty: '40' },
    ]);
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    await handle.stop();
  });
  groupCases(t, expect);
  refusalCases(t, expect, open);
}
