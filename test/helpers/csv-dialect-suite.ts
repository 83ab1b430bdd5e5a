/**
 * CSV files as other tools write them, for any database and either way a file reaches it (read by
 * the database itself, or streamed): NULL markers (`\N`, `NA`, `NULL`) and numbers with a decimal
 * comma; alone, in groups of small files and gzip-compressed, value for value. Their syntax
 * (quotes, escapes, preambles, comments, no header) is in csv-syntax-suite.ts. Run by
 * test/plugins/csv/csv-dialect.test.ts (hyperd, both ways) and csv-dialect-postgres.test.ts.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openWatcher } from '../../src/api.ts';
import { gzip } from './compression-suite.ts';
import { once, report } from './csv-dates-suite.ts';
import { drop, waitFor } from './drop.ts';
import { count, sqlTypes } from './env.ts';
import { groupLogger, type WatchBench } from './watch-bench.ts';

/** The rows of `sql` as arrays of text (NULL as null), in order. */
export async function rowsOf(t: WatchBench, sql: string): Promise<(string | null)[][]> {
  const rows = await t.pool.query(sql);
  return rows.map((r) => Object.values(r).map((v) => (v === null || v === undefined ? null : String(v))));
}

const isText = (sqlType: string | undefined) => /^(text|character varying)/.test(sqlType ?? '');

export function csvNullCases(t: WatchBench): void {
  it(
    'nullValues: \\N, NA and NULL unquoted are NULL in a new table (its number ' +
      'column typed as one), a quoted "NA" stays text; without them they are text',
    async () => {
      const file = 'id,amount,name\n1,NULL,\\N\n2,2.5,NA\n3,\\N,"NA"\n4,,x\n';
      const { dir, table, opts } = await t.inbox();
      await drop(dir, 'dump.csv', file);
      assert.equal((await once(t, dir, table, { ...opts, nullValues: ['\\N', 'NA', 'NULL'] })).filesIngested, 1);
      assert.deepEqual(await sqlTypes(t.pool, table).then((s) => s!.slice(0, 2)), ['bigint', 'double precision']);
      assert.deepEqual(await rowsOf(t, `SELECT id, amount, name FROM ${table} ORDER BY id`), [
        ['1', null, null],
        ['2', '2.5', null],
        ['3', null, 'NA'],
        ['4', null, 'x'],
      ]);
      const plain = await t.inbox();
      await drop(plain.dir, 'dump.csv', file);
      assert.equal((await once(t, plain.dir, plain.table, plain.opts)).filesIngested, 1);
      assert.ok(isText((await sqlTypes(t.pool, plain.table))![1]), 'without nullValues the markers are text');
      assert.deepEqual(await rowsOf(t, `SELECT amount, name FROM ${plain.table} ORDER BY id`), [
        ['NULL', '\\N'],
        ['2.5', 'NA'],
        ['\\N', 'NA'],
        [null, 'x'],
      ]);
    },
  );

  it(
    'nullValues into an existing table of numbers, dates and text: alone, large ' +
      '(streamed past the read-ahead), grouped, gzip-compressed, and with bad rows skipped',
    async () => {
      const { dir, table, opts } = await t.inbox();
      await t.pool.query(`CREATE TABLE ${table} (id BIGINT, n INTEGER, d DATE, s TEXT)`);
      const nulls = { ...opts, nullValues: ['NA', '\\N'] };
      await drop(dir, 'one.csv', 'id,n,d,s\n1,NA,\\N,NA\n2,5,2018-02-01,"\\N"\n');
      const N = 30_000;
      await drop(
        dir,
        'big.csv',
        `id,n,d,s\n${Array.from(
          { length: N },
          (_, i) => `${100_000 + i},${i % 3 === 0 ? 'NA' : i},${i % 5 === 0 ? '\\N' : '2018-03-04'},${i % 7 === 0 ? 'NA' : `s${i}`}`,
        ).join('\n')}\n`,
      );
      assert.equal((await once(t, dir, table, { ...nulls, batchFiles: 1 })).filesIngested, 2);
      assert.deepEqual(await rowsOf(t, `SELECT id, n, CAST(d AS TEXT) AS d, s FROM ${table} WHERE id < 100 ORDER BY id`), [
        ['1', null, null, null],
        ['2', '5', '2018-02-01', '\\N'],
      ]);
      const [big] = await rowsOf(t, `SELECT COUNT(*) AS a, COUNT(n) AS b, COUNT(d) AS c, COUNT(s) AS e FROM ${table} WHERE id >= 100000`);
      assert.deepEqual(big, [String(N), String(N - N / 3), String(N - N / 5), String(N - Math.ceil(N / 7))]);

      const logger = groupLogger();
      for (let i = 0; i < 5; i++)
        await writeFile(join(dir, `g${i}.csv`), `id,n,d,s\n${200 + i},NA,\\N,g${i}\n${210 + i},${i},2018-01-0${i + 1},NA\n`);
      await writeFile(join(dir, 'z.csv.gz'), await gzip('id,n,d,s\n220,\\N,NA,zipped\n'));
      for (const name of ['g0.csv', 'g1.csv', 'g2.csv', 'g3.csv', 'g4.csv', 'z.csv.gz']) await writeFile(join(dir, `${name}.ready`), '');
      const handle = await openWatcher(dir, table, { ...nulls, logger });
      await waitFor(() => handle.stats.filesIngested === 6, 'the group and the gzip file');
      await handle.stop();
      assert.ok(
        logger.groups.some((g) => g > 1),
        `files shared a transaction: ${logger.groups.join(', ')}`,
      );
      assert.deepEqual(await rowsOf(t, `SELECT id, n, CAST(d AS TEXT) AS d, s FROM ${table} WHERE id >= 200 AND id < 1000 ORDER BY id`), [
        ...[0, 1, 2, 3, 4].map((i) => [String(200 + i), null, null, `g${i}`]),
        ...[0, 1, 2, 3, 4].map((i) => [String(210 + i), String(i), `2018-01-0${i + 1}`, null]),
        ['220', null, null, 'zipped'],
      ]);

      await drop(dir, 'bad.csv', 'id,n,d,s\n300,NA,\\N,ok\n301,x,\\N,bad\n302,7,NA,ok\n');
      const skipped = await once(t, dir, table, { ...nulls, onBadRows: 'skip' });
      assert.equal(skipped.filesIngested, 1, JSON.stringify(skipped.lastError));
      assert.equal(skipped.rowsRejected, 1);
      assert.deepEqual(await rowsOf(t, `SELECT id, n, d, s FROM ${table} WHERE id >= 300 AND id < 1000 ORDER BY id`), [
        ['300', null, null, 'ok'],
        ['302', '7', null, 'ok'],
      ]);
      assert.match(await readFile(join(dir, 'failed', 'bad.csv.rejected.csv'), 'utf8'), /^3,.*"x".*,"301,x,\\N,bad"$/m);
    },
  );

  it('a value that is not a number still fails the file, naming its line, with nullValues set', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, n INTEGER)`);
    await drop(dir, 'bad.csv', 'id,n\n1,NA\n2,zz\n');
    const stats = await once(t, dir, table, { ...opts, nullValues: ['NA'] });
    assert.equal(stats.filesFailed, 1);
    const error = await report(dir, 'bad.csv');
    assert.match(error.code, /^DB_22/);
    assert.equal(error.line, 3);
    assert.equal(await count(t.pool, table), 0);
  });
}

export function csvNumberCases(t: WatchBench): void {
  const german = { csvDelimiter: ';', decimalSeparator: ',', thousandsSeparator: '.' };

  it(
    "decimalSeparator ',' and thousandsSeparator '.': a German spreadsheet's " +
      'numbers land as numbers in a new table; text columns keep their commas',
    async () => {
      const { dir, table, opts } = await t.inbox();
      await drop(
        dir,
        'export.csv',
        '\ufeffid;betrag;menge;notiz\r\n1;1.234,50;3;"1,5 kg"\r\n2;-0,5;1.000;a\r\n3;;2;b\r\n4;12.345.678,9;7;c\r\n',
      );
      assert.equal((await once(t, dir, table, { ...opts, ...german })).filesIngested, 1);
      assert.deepEqual((await sqlTypes(t.pool, table))!.slice(0, 3), ['bigint', 'double precision', 'bigint']);
      assert.deepEqual(await rowsOf(t, `SELECT id, betrag, menge, notiz FROM ${table} ORDER BY id`), [
        ['1', '1234.5', '3', '1,5 kg'],
        ['2', '-0.5', '1000', 'a'],
        ['3', null, '2', 'b'],
        ['4', '12345678.9', '7', 'c'],
      ]);
    },
  );

  it(
    'into an existing table (NUMERIC exact, INTEGER, TEXT): alone, large, grouped, ' +
      'gzip-compressed; a French thousands separator (narrow no-break space)',
    async () => {
      const { dir, table, opts } = await t.inbox();
      await t.pool.query(`CREATE TABLE ${table} (id BIGINT, amount NUMERIC(14,2), n INTEGER, note TEXT)`);
      await drop(dir, 'one.csv', 'id;amount;n;note\n1;1.234,56;1.000;1,5\n2;0,01;-7;x\n');
      const N = 30_000;
      await drop(
        dir,
        'big.csv',
        `id;amount;n;note\n${Array.from(
          { length: N },
          (_, i) => `${100_000 + i};${(i * 1001).toLocaleString('de-DE')},${String(i % 100).padStart(2, '0')};${i};n`,
        ).join('\n')}\n`,
      );
      assert.equal((await once(t, dir, table, { ...opts, ...german, batchFiles: 1 })).filesIngested, 2);
      assert.deepEqual(await rowsOf(t, `SELECT id, CAST(amount AS TEXT) AS a, n, note FROM ${table} WHERE id < 100 ORDER BY id`), [
        ['1', '1234.56', '1000', '1,5'],
        ['2', '0.01', '-7', 'x'],
      ]);
      const [wrong] = await rowsOf(
        t,
        `SELECT COUNT(*) AS n FROM ${table} WHERE id >= 100000 AND amount <> CAST((id - 100000) * 1001 AS NUMERIC(14,2)) + ` +
          `CAST((id - 100000) % 100 AS NUMERIC(14,2)) / 100`,
      );
      assert.deepEqual(wrong, ['0']);
      const logger = groupLogger();
      for (let i = 0; i < 4; i++) await writeFile(join(dir, `g${i}.csv`), `id;amount;n;note\n${200 + i};${i}.000,5${i};${i};g\n`);
      await writeFile(join(dir, 'z.csv.gz'), await gzip('id;amount;n;note\n210;9.999,99;1;z\n'));
      for (const name of ['g0.csv', 'g1.csv', 'g2.csv', 'g3.csv', 'z.csv.gz']) await writeFile(join(dir, `${name}.ready`), '');
      const handle = await openWatcher(dir, table, { ...opts, ...german, logger });
      await waitFor(() => handle.stats.filesIngested === 5, 'the group and the gzip file');
      await handle.stop();
      assert.ok(
        logger.groups.some((g) => g > 1),
        `files shared a transaction: ${logger.groups.join(', ')}`,
      );
      assert.deepEqual(await rowsOf(t, `SELECT id, CAST(amount AS TEXT) AS a FROM ${table} WHERE id >= 200 AND id < 1000 ORDER BY id`), [
        ['200', '0.50'],
        ['201', '1000.51'],
        ['202', '2000.52'],
        ['203', '3000.53'],
        ['210', '9999.99'],
      ]);
      // French: 1 234,5 with U+202F (what Intl writes for fr-FR), and a plain space.
      await drop(dir, 'fr.csv', 'id;amount;n;note\n300;1\u202f234,5;2;fr\n');
      assert.equal(
        (await once(t, dir, table, { ...opts, csvDelimiter: ';', decimalSeparator: ',', thousandsSeparator: '\u202f', batchFiles: 1 }))
          .filesIngested,
        1,
      );
      await drop(dir, 'sp.csv', 'id;amount;n;note\n301;1 234,5;2;sp\n');
      assert.equal(
        (await once(t, dir, table, { ...opts, csvDelimiter: ';', decimalSeparator: ',', thousandsSeparator: ' ' })).filesIngested,
        1,
      );
      assert.deepEqual(await rowsOf(t, `SELECT id, CAST(amount AS TEXT) AS a FROM ${table} WHERE id >= 300 AND id < 1000 ORDER BY id`), [
        ['300', '1234.50'],
        ['301', '1234.50'],
      ]);
    },
  );

  it(
    "a number not written as the separators say (1.5 where the decimal separator is ',') " +
      'fails naming it and the settings, nothing lands; with bad rows skipped it is set aside',
    async () => {
      const { dir, table, opts } = await t.inbox();
      await t.pool.query(`CREATE TABLE ${table} (id BIGINT, x DOUBLE PRECISION)`);
      await drop(dir, 'bad.csv', 'id;x\n1;2,5\n2;1.5\n3;12.34\n4;1.234\n');
      const stats = await once(t, dir, table, { ...opts, ...german });
      assert.equal(stats.filesFailed, 1);
      const error = await report(dir, 'bad.csv');
      assert.equal(error.code, 'NUMBER_FORMAT');
      assert.equal(error.line, 3);
      assert.equal(error.column, 'x');
      assert.match(error.message, /"1\.5" is not a number written with decimal separator ',' and thousands separator '\.'/);
      assert.match(error.hint, /--decimal-separator/);
      assert.equal(await count(t.pool, table), 0);
      await drop(dir, 'bad.csv', 'id;x\n1;2,5\n2;1.5\n3;12.34\n4;1.234\n');
      const skipped = await once(t, dir, table, { ...opts, ...german, onBadRows: 'skip' });
      assert.equal(skipped.filesIngested, 1, JSON.stringify(skipped.lastError));
      assert.equal(skipped.rowsRejected, 2);
      assert.deepEqual(await rowsOf(t, `SELECT id, x FROM ${table} ORDER BY id`), [
        ['1', '2.5'],
        ['4', '1234'],
      ]);
    },
  );

  it(
    'separators that cannot be used are refused when the watcher ' + 'starts: the same as the delimiter, as each other, not one character',
    async () => {
      const { dir, table, opts } = await t.inbox();
      await assert.rejects(
        openWatcher(dir, table, { ...opts, decimalSeparator: ',' }),
        /decimalSeparator is ",", the CSV delimiter too: .*; for tab-separated files, \.tsv too, --csv-delimiter tab\)/,
      );
      await assert.rejects(
        openWatcher(dir, table, { ...opts, csvDelimiter: ',', thousandsSeparator: ',' }),
        /thousandsSeparator is ",", the CSV delimiter too: set another delimiter \(csvDelimiter, --csv-delimiter ';'\)$/,
      );
      await assert.rejects(
        openWatcher(dir, table, { ...opts, csvDelimiter: ';', decimalSeparator: ',', thousandsSeparator: ',' }),
        /thousandsSeparator is ",", the decimal separator too/,
      );
      await assert.rejects(
        openWatcher(dir, table, { ...opts, csvDelimiter: ';', decimalSeparator: ',,' }),
        /decimalSeparator must be one character/,
      );
      await assert.rejects(openWatcher(dir, table, { ...opts, thousandsSeparator: '.' }), /set decimalSeparator too/);
    },
  );
}
