/**
 * CSV files as other tools write them, their syntax: other quote and escape characters (alone,
 * large, with a source column), preambles, comments, files without a header, and the settings
 * that cannot be used; for any database and either way a file reaches it. Run by
 * test/plugins/csv/csv-dialect.test.ts (hyperd, both ways) and csv-dialect-postgres.test.ts, with
 * the NULL markers and numbers of csv-dialect-suite.ts.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openWatcher } from '../../src/api.ts';
import { gzip } from './compression-suite.ts';
import { once, report } from './csv-dates-suite.ts';
import { rowsOf } from './csv-dialect-suite.ts';
import { drop, waitFor } from './drop.ts';
import { sqlTypes } from './env.ts';
import type { WatchBench } from './watch-bench.ts';

export function csvSyntaxCases(t: WatchBench): void {
  it("quote \"'\" and escape '\\': values as written, alone, large and with a source column; backslash-escaped double quotes", async () => {
    const { dir, table, opts } = await t.inbox();
    const single = { ...opts, quote: "'", escape: '\\' };
    await drop(dir, 'single.csv', "id,s\n1,'it\\'s'\n2,'a,b'\n3,'x\\\\y'\n5,\"plain\"\n");
    const N = 30_000;
    await drop(dir, 'big.csv', `id,s\n${Array.from({ length: N }, (_, i) => `${1000 + i},'r\\'${i}, x'`).join('\n')}\n`);
    assert.equal((await once(t, dir, table, { ...single, batchFiles: 1 })).filesIngested, 2);
    assert.deepEqual(await rowsOf(t, `SELECT id, s FROM ${table} WHERE id < 1000 ORDER BY id`), [
      ['1', "it's"],
      ['2', 'a,b'],
      ['3', 'x\\y'],
      ['5', '"plain"'],
    ]);
    const [wrong] = await rowsOf(
      t,
      `SELECT COUNT(*) AS n FROM ${table} WHERE id >= 1000 AND s <> 'r''' || CAST(id - 1000 AS TEXT) || ', x'`,
    );
    assert.deepEqual(wrong, ['0']);
    const sourced = await t.inbox();
    await drop(sourced.dir, 'src.csv', "id,s\n6,'o\\'k, \"q\"'\n7,x\n");
    assert.equal(
      (await once(t, sourced.dir, sourced.table, { ...sourced.opts, quote: "'", escape: '\\', sourceColumns: { file: '_file' } }))
        .filesIngested,
      1,
    );
    assert.deepEqual(await rowsOf(t, `SELECT s, _file FROM ${sourced.table} ORDER BY id`), [
      ['o\'k, "q"', 'src.csv'],
      ['x', 'src.csv'],
    ]);
    const other = await t.inbox();
    await drop(other.dir, 'esc.csv', 'id,s\n1,"say \\"hi\\""\n2,"back\\\\slash"\n');
    assert.equal((await once(t, other.dir, other.table, { ...other.opts, escape: '\\' })).filesIngested, 1);
    assert.deepEqual(await rowsOf(t, `SELECT s FROM ${other.table} ORDER BY id`), [['say "hi"'], ['back\\slash']]);
    // Two quoted sections in one field ('q''r' where '' is no escape): COPY joins them, strict
    // readers refuse them; the file fails naming the line, nothing of it lands.
    const joined = await t.inbox();
    await drop(joined.dir, 'joined.csv', "id,s\n1,'a'\n4,'q''r'\n");
    const stats = await once(t, joined.dir, joined.table, { ...joined.opts, quote: "'", escape: '\\' });
    assert.equal(stats.filesFailed, 1);
    assert.equal(stats.lastError?.code, 'CSV_QUOTE', JSON.stringify(stats.lastError));
    assert.match(stats.lastError?.message ?? '', /joined\.csv: line 3 .*text after the closing ' of a field/);
    // An inch mark in an unquoted field: COPY took it for a quoted section running on to the next
    // one, landing lines 2-4 as one row; it fails instead, naming line 2.
    const inch = await t.inbox();
    await drop(inch.dir, 'inch.csv', 'id,s\n1,12" pizza\n2,b\n3,14" pizza\n4,c\n');
    const refused = await once(t, inch.dir, inch.table, inch.opts);
    assert.equal(refused.filesFailed, 1);
    assert.equal(refused.lastError?.code, 'CSV_QUOTE', JSON.stringify(refused.lastError));
    assert.match(refused.lastError?.message ?? '', /inch\.csv: line 2 .*inside a field that does not begin with one/);
  });

  it(
    'a report with a preamble (skipLines), comment lines and blank lines ' +
      'at the end: the rows land, and an error names the line of the file',
    async () => {
      const { dir, table, opts } = await t.inbox();
      const options = { ...opts, skipLines: 2, commentPrefix: '#' };
      await drop(
        dir,
        'report.csv',
        'Sales report\nGenerated 2026-12-01\nid,region,amount\n1,north,10\n# a note in between\n2,south,20\n#3,east,30\n\n\n',
      );
      assert.equal((await once(t, dir, table, options)).filesIngested, 1);
      assert.deepEqual(await rowsOf(t, `SELECT id, region, amount FROM ${table} ORDER BY id`), [
        ['1', 'north', '10'],
        ['2', 'south', '20'],
      ]);
      await drop(dir, 'bad.csv', 'Title\nnotes\nid,region,amount\n# c\n# c\n4,west,zz\n');
      const stats = await once(t, dir, table, options);
      assert.equal(stats.filesFailed, 1);
      const error = await report(dir, 'bad.csv');
      assert.match(error.code, /^DB_22/);
      assert.equal(error.line, 6, error.message);
      await drop(dir, 'skip.csv', 'Title\nnotes\nid,region,amount\n# c\n5,west,zz\n6,east,60\n\n');
      const skipped = await once(t, dir, table, { ...options, onBadRows: 'skip' });
      assert.equal(skipped.filesIngested, 1, JSON.stringify(skipped.lastError));
      assert.equal(skipped.rowsRejected, 1);
      assert.match(await readFile(join(dir, 'failed', 'skip.csv.rejected.csv'), 'utf8'), /^5,.*"zz"/m);
      assert.deepEqual(await rowsOf(t, `SELECT id FROM ${table} WHERE id > 2 ORDER BY id`), [['6']]);
    },
  );

  it(
    'blank lines at the end of a file are no rows: such a file loads without ' +
      'any setting, alone and in a group; a one-column file gets no NULL row',
    async () => {
      const { dir, table, opts } = await t.inbox();
      await drop(dir, 'first.csv', 'id,name\n1,a\n\n');
      assert.equal((await once(t, dir, table, opts)).filesIngested, 1);
      for (let i = 0; i < 4; i++) await writeFile(join(dir, `g${i}.csv`), `id,name\r\n${10 + i},g\r\n\r\n\r\n`);
      for (let i = 0; i < 4; i++) await writeFile(join(dir, `g${i}.csv.ready`), '');
      const handle = await openWatcher(dir, table, opts);
      await waitFor(() => handle.stats.filesIngested === 4, 'the group');
      await handle.stop();
      assert.deepEqual(await rowsOf(t, `SELECT id, name FROM ${table} ORDER BY id`), [
        ['1', 'a'],
        ...[0, 1, 2, 3].map((i) => [String(10 + i), 'g']),
      ]);
      const one = await t.inbox();
      await drop(one.dir, 'notes.csv', 'note\nhello\n\n');
      assert.equal((await once(t, one.dir, one.table, one.opts)).filesIngested, 1);
      assert.deepEqual(await rowsOf(t, `SELECT note FROM ${one.table}`), [['hello']]);
      // A header-only file stays what it was: nothing lands, no table is made.
      const empty = await t.inbox();
      await drop(empty.dir, 'header.csv', 'id,name\n\n');
      assert.equal((await once(t, empty.dir, empty.table, empty.opts)).filesIngested, 1);
      assert.equal(await sqlTypes(t.pool, empty.table), undefined);
    },
  );

  it(
    'header false: every line is a row, named by columnNames (or column1, ' +
      'column2...), into a new table and an existing one; too few names fail the file',
    async () => {
      const { dir, table, opts } = await t.inbox();
      await drop(dir, 'plain.csv', '1,alpha,2.5\n2,beta,3\n');
      assert.equal((await once(t, dir, table, { ...opts, header: false })).filesIngested, 1);
      assert.deepEqual(
        (await t.pool.transaction((c) => c.describeTable({ name: table })))!.map((c) => c.name),
        ['column1', 'column2', 'column3'],
      );
      assert.deepEqual(await rowsOf(t, `SELECT column1, column2, column3 FROM ${table} ORDER BY column1`), [
        ['1', 'alpha', '2.5'],
        ['2', 'beta', '3'],
      ]);
      const named = await t.inbox();
      await t.pool.query(`CREATE TABLE ${named.table} (id BIGINT, name TEXT, score DOUBLE PRECISION)`);
      const names = { ...named.opts, header: false, columnNames: ['name', 'id', 'score'] };
      await drop(named.dir, 'a.csv', 'alpha,1,2.5\nbeta,2,\n');
      await drop(named.dir, 'b.csv.gz', await gzip('gamma,3,1\n'));
      for (let i = 0; i < 3; i++) await writeFile(join(named.dir, `g${i}.csv`), `g${i},${10 + i},0.5\n`);
      for (let i = 0; i < 3; i++) await writeFile(join(named.dir, `g${i}.csv.ready`), '');
      assert.equal((await once(t, named.dir, named.table, names)).filesIngested, 5);
      assert.deepEqual(await rowsOf(t, `SELECT id, name, score FROM ${named.table} ORDER BY id`), [
        ['1', 'alpha', '2.5'],
        ['2', 'beta', null],
        ['3', 'gamma', '1'],
        ['10', 'g0', '0.5'],
        ['11', 'g1', '0.5'],
        ['12', 'g2', '0.5'],
      ]);
      await drop(named.dir, 'wide.csv', 'delta,4,1,extra\n');
      const wide = await once(t, named.dir, named.table, names);
      assert.equal(wide.filesFailed, 1);
      const error = await report(named.dir, 'wide.csv');
      assert.equal(error.code, 'CSV_COLUMN_NAMES');
      assert.match(error.message, /line 1 has 4 field\(s\), and columnNames names 3/);
    },
  );

  it('settings that cannot be used are refused when the watcher starts', async () => {
    const { dir, table, opts } = await t.inbox();
    await assert.rejects(openWatcher(dir, table, { ...opts, quote: ',' }), /quote cannot be ","/);
    await assert.rejects(openWatcher(dir, table, { ...opts, quote: '""' }), /quote must be one ASCII character/);
    await assert.rejects(openWatcher(dir, table, { ...opts, skipLines: -1 }), /skipLines is -1/);
    await assert.rejects(openWatcher(dir, table, { ...opts, commentPrefix: '' }), /commentPrefix is ""/);
    await assert.rejects(openWatcher(dir, table, { ...opts, columnNames: ['a'] }), /columnNames is set but the files have a header line/);
    await assert.rejects(openWatcher(dir, table, { ...opts, header: false, columnNames: ['a', 'A'] }), /names a column twice/);
  });
}
