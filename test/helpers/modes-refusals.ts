/**
 * The load modes' refusals and `order: 'name'` (modes-suite.ts runs them): a NULL key, a key
 * column the file lacks, a key that is no column, duplicate keys in one file; each fails the file
 * with a report naming it, and the table stays as it was.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openWatcher } from '../../src/api.ts';
import type { WatcherHandle } from '../../src/watcher/handle.ts';
import type { WatchOptions } from '../../src/options.ts';
import { csv, drop, failedEntries, waitFor } from './drop.ts';
import { dropAndWait, type ModesExpect, report, rowsOf } from './modes-common.ts';
import type { WatchBench } from './watch-bench.ts';

type Open = (options: WatchOptions) => Promise<{ dir: string; table: string; handle: WatcherHandle }>;

export function refusalCases(t: WatchBench, expect: ModesExpect, open: Open): void {
  it('a NULL key, a key column the file lacks, a key that is no column: the file fails, naming it; the table is untouched', async () => {
    const { dir, table, handle } = await open({ mode: 'upsert', key: 'id' });
    await dropAndWait(
      handle,
      dir,
      'a.csv',
      csv('id,name', [
        [1, 'a'],
        [2, 'b'],
      ]),
    );
    const before = await rowsOf(t, table, ['id', 'name'], 'id');
    await dropAndWait(handle, dir, 'nullkey.csv', 'id,name\n3,c\n,nobody\n');
    const nul = await report(dir, 'nullkey.csv');
    assert.equal(nul.code, 'NULL_KEY');
    assert.match(nul.message, /^nullkey\.csv: 1 row\(s\) have no value \(NULL\) in key column "id"/);
    if (expect.ordered) assert.match(nul.message, /row 2 of the file \(line 3/);
    assert.equal(nul.column, 'id');
    await dropAndWait(handle, dir, 'nokey.csv', csv('name', [['x']]));
    const missing = await report(dir, 'nokey.csv');
    assert.equal(missing.code, 'KEY_COLUMN_MISSING');
    assert.match(missing.message, /^nokey\.csv: the file has no column "id", which is part of the key/);
    assert.deepEqual(await rowsOf(t, table, ['id', 'name'], 'id'), before);
    await handle.stop();

    const other = await open({ mode: 'replace-keys', key: 'region' });
    await dropAndWait(other.handle, other.dir, 'a.csv', csv('id,name', [[1, 'a']]));
    const notColumn = await report(other.dir, 'a.csv');
    assert.equal(notColumn.code, 'KEY_NOT_A_COLUMN');
    assert.match(notColumn.message, /key column "region" is not a column of .*\(its columns: id, name\)/);
    assert.deepEqual(await failedEntries(other.dir), ['a.csv', 'a.csv.error', 'a.csv.ready']);
    await other.handle.stop();
  });

  it("duplicate keys in one file: 'fail' fails it; 'last' keeps the later row where the database keeps the load order", async () => {
    const failing = await open({ mode: 'upsert', key: 'id', duplicateKeys: 'fail' });
    await dropAndWait(failing.handle, failing.dir, 'a.csv', csv('id,name', [[1, 'a']]));
    await dropAndWait(
      failing.handle,
      failing.dir,
      'dup.csv',
      csv('id,name', [
        [2, 'first'],
        [3, 'c'],
        [2, 'second'],
      ]),
    );
    const dup = await report(failing.dir, 'dup.csv');
    assert.equal(dup.code, 'DUPLICATE_KEY');
    assert.match(
      dup.message,
      /1 row\(s\) repeat a key of an earlier row of the file \(e\.g\. id = '2', 2 rows\), and duplicateKeys is fail/,
    );
    assert.deepEqual(await rowsOf(t, failing.table, ['id', 'name'], 'id'), [{ id: '1', name: 'a' }]);
    await failing.handle.stop();

    const last = await open({ mode: 'upsert', key: 'id' });
    await dropAndWait(last.handle, last.dir, 'a.csv', csv('id,name', [[1, 'a']]));
    await dropAndWait(
      last.handle,
      last.dir,
      'dup.csv',
      csv('id,name', [
        [2, 'first'],
        [1, 'A1'],
        [2, 'second'],
        [1, 'A2'],
      ]),
    );
    if (expect.ordered) {
      assert.equal(last.handle.stats.filesFailed, 0, JSON.stringify(last.handle.stats.lastError));
      assert.deepEqual(await rowsOf(t, last.table, ['id', 'name'], 'id'), [
        { id: '1', name: 'A2' },
        { id: '2', name: 'second' },
      ]);
    } else {
      const refused = await report(last.dir, 'dup.csv');
      assert.equal(refused.code, 'DUPLICATE_KEY');
      assert.match(refused.message, /keeps no order of the rows to tell which is the last/);
      assert.deepEqual(await rowsOf(t, last.table, ['id', 'name'], 'id'), [{ id: '1', name: 'a' }]);
    }
    await last.handle.stop();
  });

  it("order 'name': files ready at once are applied by name, whatever order they came in", async () => {
    const { dir, table, opts } = await t.inbox();
    // Ready before the watcher starts, made in the order c, a, b; each sets the one row's value.
    for (const name of ['c', 'a', 'b']) {
      await drop(dir, `${name}.csv`, csv('id,v', [[1, name]]));
      await new Promise((res) => setTimeout(res, 20));
    }
    const handle = await openWatcher(dir, table, { ...opts, mode: 'upsert', key: 'id', order: 'name' });
    await waitFor(() => handle.stats.filesIngested === 3, 'three files');
    const applied = await t.pool.query<{ file_name: string }>(
      `SELECT file_name FROM hyperwatch_internal.ingest_log WHERE target_table = $1 ORDER BY committed_at`,
      [table],
    );
    assert.deepEqual(
      applied.map((a) => a.file_name),
      ['a.csv', 'b.csv', 'c.csv'],
    );
    assert.deepEqual(await rowsOf(t, table, ['id', 'v'], 'id'), [{ id: '1', v: 'c' }], 'the last by name wins');
    await handle.stop();
  });
}
