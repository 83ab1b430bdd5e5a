/**
 * `hyperwatch check --partition-columns` as a user runs it, on a real embedded hyperd: a file
 * below `key=value` folders (written by DuckDB, or by hand) shows the partition columns the
 * watcher would add, typed as it types them, in the table it would create and in its fit against
 * an existing one; `--dir` names the watched directory, `--ready marker` the unit folder below it.
 */
import assert from 'node:assert/strict';
import { cp, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { drop } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { duckdb, filesIn, sparkJob } from '../../helpers/marker-cases.ts';
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
  error?: { code: string; message: string; hint: string; file: string; folder?: string };
}

async function check(args: readonly string[], code: number): Promise<Checked> {
  const run = await cli(['check', ...args, '--json']).done;
  assert.equal(run.code, code, `${args.join(' ')}: ${run.stderr}${run.stdout}`);
  return JSON.parse(run.stdout) as Checked;
}

describe('hyperwatch check --partition-columns', () => {
  const tmp = useTempDir('hyperwatch-check-partitions-');

  it("DuckDB's Hive folders: date a DATE, region a TEXT, shard a BIGINT, as the watcher then creates them", async () => {
    const dir = await tmp.dir('duckdb');
    const out = join(dir, 'orders');
    await duckdb(async (run) => {
      await run(
        `COPY (SELECT i AS id, 'l' || i AS label, DATE '2026-12-01' + CAST(i % 2 AS INTEGER) AS date, ` +
          `CASE WHEN i % 3 = 0 THEN 'eu' ELSE 'us' END AS region, i % 2 AS shard ` +
          `FROM range(0, 12) t(i)) TO '${out}' (FORMAT parquet, PARTITION_BY (date, region, shard))`,
      );
    });
    const parts = await filesIn(out);
    const part = parts.find((p) => p.startsWith('date=2026-12-01/region=eu/shard=0/'));
    assert.ok(part, `DuckDB wrote ${parts.join(', ')}`);
    const file = join(out, part);
    // No --dir: the watched directory is the folder above the file's key=value folders, orders/.
    const result = await check([file, '--partition-columns', '--table', 'orders'], 0);
    const expected = [
      { name: 'id', type: 'bigint' },
      { name: 'label', type: 'text' },
      { name: 'date', type: 'date' },
      { name: 'region', type: 'text' },
      { name: 'shard', type: 'bigint' },
    ];
    assert.deepEqual(result.table, { name: 'orders', columns: expected, created: true });
    // ids 0 and 6: i % 2 = 0 (2026-12-01, shard 0) and i % 3 = 0 (eu).
    assert.deepEqual(
      result.rows.map((r) => [Number(r.id), r.label, r.date, r.region, Number(r.shard)]),
      [
        [0, 'l0', '2026-12-01', 'eu', 0],
        [6, 'l6', '2026-12-01', 'eu', 0],
      ],
    );
    const text = await cli(['check', file, '--partition-columns']).done;
    assert.equal(text.code, 0, text.stderr);
    assert.match(
      text.stdout,
      /would create table data_0:\n\s+id\s+bigint\n\s+label\s+text\n\s+date\s+date\n\s+region\s+text\n\s+shard\s+bigint/,
    );
    assert.match(text.stdout, /\n0 +\| l0 +\| 2026-12-01 \| eu +\| 0\n/);
    // Without --partition-columns the folders are no columns.
    const plain = await check([file], 0);
    assert.deepEqual(
      plain.table.columns.map((c) => c.name),
      ['id', 'label'],
    );

    // The watcher on a copy of the folder makes the same table, and the file fits it whole.
    const db = tmp.path('duckdb.hyper');
    const inbox = join(dir, 'inbox');
    await cp(out, inbox, { recursive: true });
    for (const p of parts) await writeFile(join(inbox, `${p}.ready`), '');
    const watched = await cli(['watch', inbox, '--table', 'orders', '--database', db, '--recursive', '--partition-columns', '--once']).done;
    assert.equal(watched.code, 0, watched.stderr);
    const fits = await check([file, '--partition-columns', '--table', 'orders', '--database', db], 0);
    assert.deepEqual(fits.table.columns, expected, 'the columns the watcher created');
    assert.deepEqual(fits.table.fits, { matching: ['id', 'label', 'date', 'region', 'shard'], empty: [], added: [] });
  });

  it('by hand, with --dir: escapes decoded, __HIVE_DEFAULT_PARTITION__ NULL, 007 TEXT; the fit against a table lacking them', async () => {
    const root = await tmp.dir('hand');
    const inbox = join(root, 'inbox');
    const folder = join(inbox, 'year=2026', 'city=New%20York%2FNY', 'note=__HIVE_DEFAULT_PARTITION__', 'zip=007');
    await mkdir(folder, { recursive: true });
    const file = join(folder, 'p.csv');
    await writeFile(file, 'id,amount\n1,2.5\n2,3.5\n');
    const flags = [file, '--partition-columns', '--dir', inbox, '--table', 't', '--source-column', 'file=_file'];
    const created = await check(flags, 0);
    assert.deepEqual(created.table.columns, [
      { name: 'id', type: 'bigint' },
      { name: 'amount', type: 'double precision' },
      { name: '_file', type: 'text' },
      { name: 'year', type: 'bigint' },
      { name: 'city', type: 'text' },
      { name: 'note', type: 'text' },
      { name: 'zip', type: 'text' },
    ]);
    const name = 'year=2026/city=New%20York%2FNY/note=__HIVE_DEFAULT_PARTITION__/zip=007/p.csv';
    assert.deepEqual(created.rows[0], { id: '1', amount: 2.5, _file: name, year: '2026', city: 'New York/NY', note: null, zip: '007' });

    // An existing table without those columns: the file fails as the watcher fails it, or adds them.
    const db = tmp.path('hand.hyper');
    const first = await tmp.dir('first');
    await drop(first, 'a.csv', 'id,amount,_file\n9,1.5,a.csv\n');
    assert.equal((await cli(['watch', first, '--table', 't', '--database', db, '--once']).done).code, 0);
    const missing = await check([...flags, '--database', db], 1);
    assert.equal(missing.error?.code, 'SOURCE_COLUMN_MISSING');
    assert.match(missing.error?.hint ?? '', /ALTER TABLE/);
    const added = await check([...flags, '--database', db, '--schema-evolution', 'add-columns'], 0);
    assert.deepEqual(added.table.fits, { matching: ['id', 'amount', '_file'], empty: [], added: ['year', 'city', 'note', 'zip'] });
    assert.deepEqual(added.table.columns.slice(3), created.table.columns.slice(3), 'typed as in a table the file creates');
    const text = await cli(['check', ...flags, '--database', db, '--schema-evolution', 'add-columns']).done;
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /columns it would add: year, city, note, zip\n/);
    assert.match(text.stdout, /year\s+bigint\n\s+city\s+text\n\s+note\s+text\n\s+zip\s+text/);

    // --dir one folder higher: inbox/ is not key=value, and the watcher would fail the file for it.
    const above = await check([file, '--partition-columns', '--dir', root], 1);
    assert.equal(above.error?.code, 'PARTITION_NOT_KEY_VALUE');
    assert.match(above.error?.message ?? '', /folder "inbox" is not a partition folder/);
    assert.equal(above.error?.file, `inbox/${name}`);
    // A --dir the file is not in is a usage error.
    const outside = await cli(['check', file, '--partition-columns', '--dir', first]).done;
    assert.equal(outside.code, 2, outside.stderr);
    assert.match(outside.stderr, /is not inside the watched directory .*--dir/);
    assert.deepEqual(await readdir(folder), ['p.csv'], 'the file left where it is');
  });

  it('--ready marker: the job folder below --dir is the unit, not a partition; a bad part fails as the folder would', async () => {
    const exports = await tmp.dir('exports');
    const parts = await sparkJob(exports, 'job-7', 0, 6, 2);
    const part = parts.find((p) => p.endsWith('.parquet') && p.startsWith('date=2026-12-01/region=eu/'));
    assert.ok(part, parts.join(', '));
    const file = join(exports, 'job-7', part);
    const flags = ['--ready', 'marker', '--partition-columns', '--source-column', 'file=_file', '--table', 'jobs'];
    for (const dir of [['--dir', exports], []]) {
      const result = await check([file, ...flags, ...dir], 0);
      assert.deepEqual(result.table.columns, [
        { name: 'id', type: 'bigint' },
        { name: 'label', type: 'text' },
        { name: '_file', type: 'text' },
        { name: 'date', type: 'date' },
        { name: 'region', type: 'text' },
      ]);
      // sparkJob's ids 0..5: i % 2 = 0 is 2026-12-01, i % 3 = 0 is eu: id 0 alone.
      assert.deepEqual(result.rows, [{ id: '0', label: 'p0', _file: `job-7/${part}`, date: '2026-12-01', region: 'eu' }]);
    }
    // Without --ready marker, job-7/ is a folder of the path like any other.
    const unmarked = await check([file, '--partition-columns', '--dir', exports], 1);
    assert.equal(unmarked.error?.code, 'PARTITION_NOT_KEY_VALUE');
    assert.match(unmarked.error?.message ?? '', /folder "job-7"/);
    // A part the folder would fail for: its report, failed/job-7.error, is the one shown.
    const bad = join(exports, 'job-7', 'date=2026-12-03', 'region=eu', 'part-bad.csv');
    await writeFile(bad, 'id,day\n5,01/02/2018\n');
    const failed = await check([bad, ...flags, '--dir', exports], 1);
    assert.equal(failed.error?.code, 'DATE_AMBIGUOUS');
    assert.equal(failed.error?.file, 'job-7/date=2026-12-03/region=eu/part-bad.csv');
    assert.equal(failed.error?.folder, 'job-7', 'the report of the folder, failed/job-7.error');
    // A file directly in the watched directory: marker mode would leave it alone.
    await writeFile(join(exports, 'loose.csv'), 'id\n1\n');
    const loose = await cli(['check', join(exports, 'loose.csv'), '--ready', 'marker', '--dir', exports]).done;
    assert.equal(loose.code, 2, loose.stderr);
    assert.match(loose.stderr, /directly in the watched directory .*readyWhen: 'marker' leaves files alone/);
  });
});
