/**
 * The load modes on a real PostgreSQL server (a throwaway cluster for this file): the cases of
 * modes-suite.ts, the reader during replaces, and upserts by `INSERT ... ON CONFLICT` where the
 * key has a unique index.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openWatcher } from '../../../src/api.ts';
import type { Logger } from '../../../src/types.ts';
import { csv, drop, waitFor } from '../../helpers/drop.ts';
import { rowsOf } from '../../helpers/modes-common.ts';
import { modeCases } from '../../helpers/modes-suite.ts';
import { replaceReaderCase } from '../../helpers/modes-reader.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

const { pgFixture } = await postgresForFile();

describe('load modes on PostgreSQL', () => {
  const t = useWatchBench(pgFixture, 'm');
  modeCases(t, { ordered: true, grouped: true });
  replaceReaderCase(t, { files: 50, rows: 200_000 });

  it('upsert onto a table whose key is its primary key: INSERT ... ON CONFLICT, the columns a file lacks keep their values', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT PRIMARY KEY, name TEXT, score BIGINT)`);
    await t.pool.query(`INSERT INTO ${table} VALUES (1, 'a', 10), (2, 'b', 20)`);
    const said: string[] = [];
    const logger: Logger = { debug: (m) => said.push(m), info: () => {}, warn: () => {}, error: () => {} };
    const handle = await openWatcher(dir, table, { ...opts, mode: 'upsert', key: 'id', logger });
    await drop(
      dir,
      'a.csv',
      csv('id,name', [
        [2, 'B'],
        [3, 'c'],
      ]),
    );
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 1, 'a.csv');
    await drop(
      dir,
      'b.csv',
      csv('id,score', [
        [1, 11],
        [3, 33],
        [1, 12],
      ]),
    );
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 2, 'b.csv');
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.deepEqual(await rowsOf(t, table, ['id', 'name', 'score'], 'id'), [
      { id: '1', name: 'a', score: '12' },
      { id: '2', name: 'B', score: '20' },
      { id: '3', name: 'c', score: '33' },
    ]);
    assert.equal(said.filter((m) => m === 'upsert by INSERT ... ON CONFLICT').length, 2);
    await handle.stop();
  });
});
