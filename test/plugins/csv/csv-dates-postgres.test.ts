/**
 * No date read by a guess on PostgreSQL (whose DateStyle reads 01/02/2018 month first, or day
 * first on a server set up so): the cases of helpers/csv-dates-suite.ts on a throwaway cluster,
 * and the same files on a server whose DateStyle is day first land the same values.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csvDatesPastHeadCases } from '../../helpers/csv-dates-head-suite.ts';
import { csvDateCases, datesOf, once } from '../../helpers/csv-dates-suite.ts';
import { drop } from '../../helpers/drop.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

const { pg, pgFixture } = await postgresForFile();

describe('dates on PostgreSQL', () => {
  const t = useWatchBench(pgFixture, 'dates_pg_');
  csvDateCases(t);
  csvDatesPastHeadCases(t);

  it("the server's DateStyle changes nothing: day first or month first, the same values land", async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, d DATE)`);
    try {
      await t.pool.query(`ALTER DATABASE ${pg.database} SET datestyle = 'ISO, DMY'`);
      await drop(dir, 'us.csv', 'id,d\n1,01/02/2018\n2,12/31/2018\n');
      // New sessions get the database's DateStyle; the watcher opens its own.
      assert.equal((await once(t, dir, table, { ...opts, dateStyle: 'MDY' })).filesIngested, 1);
      await drop(dir, 'amb.csv', 'id,d\n3,01/02/2018\n');
      assert.equal((await once(t, dir, table, opts)).filesFailed, 1);
    } finally {
      await t.pool.query(`ALTER DATABASE ${pg.database} RESET datestyle`);
    }
    assert.deepEqual(await datesOf(t, table), [
      [1, '2018-01-02'],
      [2, '2018-12-31'],
    ]);
  });
});
