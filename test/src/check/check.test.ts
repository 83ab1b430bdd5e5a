/**
 * `hyperwatch check <file>` as a user runs it, on a real embedded hyperd: the table a file would
 * create or how it fits an existing one, its first rows, the `.error` it would get; the file left
 * where it is and the user's database neither created nor written. Also `checkFile` in the API.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkFile } from '../../../src/check/check-file.ts';
import { drop, waitFor } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { cli } from '../../helpers/proc.ts';

interface Checked {
  lands: boolean;
  table: {
    name: string;
    columns: { name: string; type: string }[];
    created?: boolean;
    fits?: { matching: string[]; empty: string[]; added: string[] };
  };
  rows: Record<string, unknown>[];
  rowCount: number;
  error?: { code: string; hint: string; line?: number; column?: string; file: string };
}

describe('hyperwatch check', () => {
  const tmp = useTempDir('hyperwatch-check-');

  it('a good CSV: the columns it would create and its rows, exit 0; the file stays, no database is made', async () => {
    const dir = await tmp.dir('good');
    const file = join(dir, 'orders.csv');
    const content = 'id,day,name\n1,2018-01-05,apple\n2,2018-03-04,pear\n3,2018-03-05,fig\n';
    await writeFile(file, content);
    const db = join(dir, 'user.hyper');
    const run = await cli(['check', file, '--database', db]).done;
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /would create table orders/);
    assert.match(run.stdout, /id\s+bigint\n\s+day\s+date\n\s+name\s+text/);
    assert.match(run.stdout, /3 rows would land/);
    assert.match(run.stdout, /2 {2}\| 2018-03-04 \| pear/);
    assert.equal(await readFile(file, 'utf8'), content);
    assert.deepEqual((await readdir(dir)).sort(), ['orders.csv']);
    assert.equal(existsSync(db), false);

    const json = await cli(['check', file, '--database', db, '--table', 'sales.orders', '--rows', '2', '--json']).done;
    assert.equal(json.code, 0, json.stderr);
    const result = JSON.parse(json.stdout) as Checked;
    assert.deepEqual(result.table, {
      name: 'sales.orders',
      columns: [
        { name: 'id', type: 'bigint' },
        { name: 'day', type: 'date' },
        { name: 'name', type: 'text' },
      ],
      created: true,
    });
    assert.deepEqual(result.rows, [
      { id: '1', day: '2018-01-05', name: 'apple' },
      { id: '2', day: '2018-03-04', name: 'pear' },
    ]);
    assert.equal(result.rowCount, 3);
    assert.equal(existsSync(db), false);
  });

  it('an ambiguous date exits 1 with the DATE_AMBIGUOUS .error; --date-style DMY lands it as 1 February', async () => {
    const dir = await tmp.dir('dates');
    const file = join(dir, 'eu.csv');
    await writeFile(file, 'id,day\n5,01/02/2018\n6,12/11/2018\n');
    const refused = await cli(['check', file, '--json']).done;
    assert.equal(refused.code, 1, refused.stderr);
    const failed = JSON.parse(refused.stdout) as Checked;
    assert.equal(failed.lands, false);
    assert.equal(failed.error?.code, 'DATE_AMBIGUOUS');
    assert.match(failed.error?.hint ?? '', /--date-style DMY/);
    assert.equal(failed.error?.line, 2);
    assert.equal(failed.error?.column, 'day');
    assert.deepEqual(failed.rows, []);
    assert.equal(failed.table.created, false);
    const text = await cli(['check', file]).done;
    assert.equal(text.code, 1);
    assert.match(text.stdout, /would fail \(DATE_AMBIGUOUS\)/);
    assert.match(text.stdout, /"code": "DATE_AMBIGUOUS"/);

    const run = await cli(['check', file, '--date-style', 'DMY']).done;
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /day\s+date/);
    assert.match(run.stdout, /5 {2}\| 2018-02-01\n6 {2}\| 2018-11-12/);
    assert.deepEqual(await readdir(dir), ['eu.csv']);
  });

  it('against an existing table: how the file fits it, what would fail, and no row added to the real table', async () => {
    const inbox = await tmp.dir('existing');
    const db = tmp.path('existing.hyper');
    await drop(inbox, 'first.csv', 'id,day,note\n1,2018-01-05,x\n');
    assert.equal((await cli(['watch', inbox, '--table', 't', '--database', db, '--once']).done).code, 0);
    const dir = await tmp.dir('files');
    const fits = join(dir, 'fits.csv');
    await writeFile(fits, 'id,day\n5,01/02/2018\n6,13/02/2018\n');
    const run = await cli(['check', fits, '--table', 't', '--database', db, '--json']).done;
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout) as Checked;
    assert.deepEqual(result.table.fits, { matching: ['id', 'day'], empty: ['note'], added: [] });
    assert.equal(result.table.created, undefined);
    assert.deepEqual(result.rows, [
      { id: '5', day: '2018-02-01', note: null },
      { id: '6', day: '2018-02-13', note: null },
    ]);

    const extra = join(dir, 'extra.csv');
    await writeFile(extra, 'id,day,amount\n7,2018-05-06,1.5\n');
    const refused = await cli(['check', extra, '--table', 't', '--database', db]).done;
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stdout, /would fail \(UNKNOWN_COLUMN\)/);
    assert.match(refused.stdout, /table t has:\n\s+id\s+bigint\n\s+day\s+date\n\s+note\s+text/);
    const added = await cli(['check', extra, '--table', 't', '--database', db, '--schema-evolution', 'add-columns']).done;
    assert.equal(added.code, 0, added.stderr);
    assert.match(
      added.stdout,
      /fits table t:\n {2}columns it fills: id, day\n {2}left NULL in every row: note\n {2}columns it would add: amount/,
    );
    assert.match(added.stdout, /amount\s+double precision/);

    const query = await cli(['query', '--database', db, '--json', 'SELECT id FROM t ORDER BY id']).done;
    assert.deepEqual(JSON.parse(query.stdout), [{ id: '1' }]);
    assert.deepEqual((await readdir(dir)).sort(), ['extra.csv', 'fits.csv']);
  });

  it("beside a running watcher of the database: the table read through that watcher's hyperd, nothing added to it", {
    timeout: 120_000,
  }, async () => {
    const inbox = await tmp.dir('live');
    const db = tmp.path('live.hyper');
    await drop(inbox, 'first.csv', 'id,day\n1,2018-01-05\n');
    const watch = cli(['watch', inbox, '--table', 't', '--database', db]);
    let stderr = '';
    watch.child.stderr!.on('data', (d: string) => (stderr += d));
    try {
      await waitFor(() => /watching/.test(stderr) || watch.child.exitCode !== null, 'the watcher to start', 60_000);
      assert.equal(watch.child.exitCode, null, stderr);
      const count = async () => {
        const q = await cli(['query', '--database', db, '--json', 'SELECT COUNT(*) AS n FROM t']).done;
        return q.code === 0 ? Number((JSON.parse(q.stdout) as { n: string }[])[0]!.n) : -1;
      };
      await waitFor(async () => (await count()) === 1, 'the first file', 60_000);
      const file = join(await tmp.dir('live-files'), 'more.csv');
      await writeFile(file, 'id,day\n2,13/02/2018\n');
      const run = await cli(['check', file, '--table', 't', '--database', db, '--json']).done;
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout) as Checked;
      assert.deepEqual(result.table.fits, { matching: ['id', 'day'], empty: [], added: [] });
      assert.deepEqual(result.rows, [{ id: '2', day: '2018-02-13' }]);
      assert.equal(await count(), 1);
      assert.equal(watch.child.exitCode, null, stderr);
    } finally {
      watch.child.kill('SIGTERM');
      await watch.done;
    }
  });

  it('usage errors exit 2: no file, a file that is not there, a bad --rows, a bad option', async () => {
    const dir = await tmp.dir('usage');
    await writeFile(join(dir, 'a.csv'), 'id\n1\n');
    for (const args of [
      ['check'],
      ['check', join(dir, 'missing.csv')],
      ['check', join(dir, 'a.csv'), '--rows', 'ten'],
      ['check', join(dir, 'a.csv'), '--date-style', 'DM'],
    ]) {
      const run = await cli(args).done;
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /^hyperwatch: /);
    }
    const help = await cli(['check', '--help']).done;
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--date-style/);
    assert.match(help.stdout, /--rows <n>/);
  });

  it('checkFile in the API returns the same result, with --null-value and --column-type as options', async () => {
    const dir = await tmp.dir('api');
    const file = join(dir, 'dump.csv');
    await writeFile(file, 'zip,amount\n00501,\\N\n10115,2.5\n');
    const result = await checkFile(file, {
      table: 'zips',
      nullValues: ['\\N'],
      columnTypes: { zip: 'TEXT' },
      rows: 1,
      database: join(dir, 'no.hyper'),
    });
    assert.equal(result.lands, true);
    assert.deepEqual(result.table.columns, [
      { name: 'zip', type: 'text' },
      { name: 'amount', type: 'double precision' },
    ]);
    assert.deepEqual(result.rows, [{ zip: '00501', amount: null }]);
    assert.equal(result.rowCount, 2);
    assert.deepEqual(await readdir(dir), ['dump.csv']);
  });
});
