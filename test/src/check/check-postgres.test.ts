/**
 * `hyperwatch check` on PostgreSQL, as a user runs it: the file is ingested in one transaction on
 * the user's server that is rolled back, so neither the table it would create, nor hyperwatch's
 * own tables, nor a row in an existing table is left behind.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { drop } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { cli } from '../../helpers/proc.ts';

const { pg, db } = await postgresForFile();

async function scalar(sql: string): Promise<unknown> {
  const pool = await db.openPool({ maxConnections: 1 });
  try {
    const [row] = await pool.query(sql);
    return Object.values(row ?? {})[0];
  } finally {
    await pool.close();
  }
}

describe('hyperwatch check on PostgreSQL', () => {
  const tmp = useTempDir('hyperwatch-check-pg-');
  const flags = ['--adapter', 'postgres', '--url', pg.url];

  it('a new table: its columns and rows, exit 0, and nothing left on the server; an ambiguous date exits 1', async () => {
    const dir = await tmp.dir('new');
    const file = join(dir, 'orders.csv');
    await writeFile(file, 'id,day,amount\n1,2018-01-05,2.5\n2,2018-03-04,\\N\n');
    const run = await cli(['check', file, ...flags, '--null-value', '\\N', '--json']).done;
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { table: unknown; rows: unknown };
    assert.deepEqual(result.table, {
      name: 'orders',
      columns: [
        { name: 'id', type: 'bigint' },
        { name: 'day', type: 'date' },
        { name: 'amount', type: 'double precision' },
      ],
      created: true,
    });
    assert.deepEqual(result.rows, [
      { id: '1', day: '2018-01-05', amount: 2.5 },
      { id: '2', day: '2018-03-04', amount: null },
    ]);
    assert.equal(await scalar(`SELECT to_regclass('public.orders') IS NULL`), true);
    assert.equal(await scalar(`SELECT count(*)::int FROM pg_namespace WHERE nspname LIKE 'hyperwatch%'`), 0);

    const eu = join(dir, 'eu.csv');
    await writeFile(eu, 'id,day\n5,01/02/2018\n');
    const refused = await cli(['check', eu, ...flags, '--json']).done;
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal((JSON.parse(refused.stdout) as { error: { code: string } }).error.code, 'DATE_AMBIGUOUS');
    const dmy = await cli(['check', eu, ...flags, '--date-style', 'DMY']).done;
    assert.equal(dmy.code, 0, dmy.stderr);
    assert.match(dmy.stdout, /5 {2}\| 2018-02-01/);
    assert.equal(await scalar(`SELECT to_regclass('public.eu') IS NULL`), true);
  });

  it('an existing table: how the file fits it, the .error naming the table, and no row or ledger row added', async () => {
    const inbox = await tmp.dir('existing');
    await drop(inbox, 'first.csv', 'id,day,note\n1,2018-01-05,x\n');
    const watched = await cli(['watch', inbox, '--table', 'sales', ...flags, '--once']).done;
    assert.equal(watched.code, 0, watched.stderr);
    const ledger = await scalar('SELECT count(*)::int FROM hyperwatch_internal.ingest_log');
    const dir = await tmp.dir('files');
    const fits = join(dir, 'fits.csv');
    await writeFile(fits, 'id,day\n5,2018-02-01\n');
    const run = await cli(['check', fits, '--table', 'sales', ...flags, '--json']).done;
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { table: { fits: unknown }; rows: unknown };
    assert.deepEqual(result.table.fits, { matching: ['id', 'day'], empty: ['note'], added: [] });
    assert.deepEqual(result.rows, [{ id: '5', day: '2018-02-01', note: null }]);

    const extra = join(dir, 'extra.csv');
    await writeFile(extra, 'id,day,amount\n7,2018-05-06,1.5\n');
    const refused = await cli(['check', extra, '--table', 'sales', ...flags, '--json']).done;
    assert.equal(refused.code, 1, refused.stderr);
    const error = (JSON.parse(refused.stdout) as { error: { code: string; message: string; table: string } }).error;
    assert.equal(error.code, 'UNKNOWN_COLUMN');
    assert.equal(error.table, 'sales');
    assert.doesNotMatch(error.message, /hyperwatch_check/);

    assert.equal(await scalar('SELECT count(*)::int FROM sales'), 1);
    assert.equal(await scalar('SELECT count(*)::int FROM hyperwatch_internal.ingest_log'), ledger);
    assert.equal(await scalar(`SELECT count(*)::int FROM pg_namespace WHERE nspname LIKE 'hyperwatch_check%'`), 0);
  });

  it('--partition-columns: the key=value folders above the file as the columns PostgreSQL would get, nothing left', async () => {
    const dir = await tmp.dir('partitions');
    const folder = join(dir, 'events', 'day=2026-12-01', 'shard=12', 'city=Z%C3%BCrich');
    await mkdir(folder, { recursive: true });
    const file = join(folder, 'part-0.csv');
    await writeFile(file, 'id\n1\n');
    const run = await cli(['check', file, ...flags, '--partition-columns', '--table', 'events', '--json']).done;
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as { table: unknown; rows: unknown };
    assert.deepEqual(result.table, {
      name: 'events',
      columns: [
        { name: 'id', type: 'bigint' },
        { name: 'day', type: 'date' },
        { name: 'shard', type: 'bigint' },
        { name: 'city', type: 'text' },
      ],
      created: true,
    });
    assert.deepEqual(result.rows, [{ id: '1', day: '2026-12-01', shard: '12', city: 'Zürich' }]);
    assert.equal(await scalar(`SELECT to_regclass('public.events') IS NULL`), true);
  });
});
