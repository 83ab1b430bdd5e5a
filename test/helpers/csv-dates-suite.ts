/**
 * No date read by a guess, for any database and either way a file reaches it (the database reading
 * the claimed file itself, or the file streamed): `01/02/2018` lands as the producer meant it
 * when `dateStyle` (or a format) says how dates are written, or when the file's own values decide
 * it; otherwise the file fails as DATE_AMBIGUOUS before a row lands, into an existing DATE or
 * TIMESTAMP column as into a new one. Alone, in groups of small files, gzip-compressed, with bad
 * rows skipped and with source columns (past the head of a large file: csv-dates-head-suite.ts). Run by
 * test/plugins/csv/csv-dates.test.ts (hyperd, both ways) and csv-dates-postgres.test.ts.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openWatcher, startWatching, stopWatching } from '../../src/api.ts';
import type { WatchOptions } from '../../src/options.ts';
import type { WatcherStats } from '../../src/observe/stats.ts';
import { gzip } from './compression-suite.ts';
import { drop, failedEntries, waitFor } from './drop.ts';
import { count, sqlTypes } from './env.ts';
import type { WatchBench } from './watch-bench.ts';

export interface ErrorReport {
  readonly code: string;
  readonly message: string;
  readonly hint: string;
  readonly line?: number;
  readonly column?: string | number;
}

export async function report(dir: string, name: string): Promise<ErrorReport> {
  return JSON.parse(await readFile(join(dir, 'failed', `${name}.error`), 'utf8')) as ErrorReport;
}

/** `id` and `d` of the table as text, ordered by id. */
export async function datesOf(t: WatchBench, table: string, column = 'd'): Promise<[number, string | null][]> {
  const rows = await t.pool.query<{ id: number | string; d: string | null }>(
    `SELECT id, CAST(${column} AS TEXT) AS d FROM ${table} ORDER BY id`,
  );
  return rows.map((r) => [Number(r.id), r.d]);
}

export async function once(t: WatchBench, dir: string, table: string, options: WatchOptions): Promise<WatcherStats> {
  await startWatching(dir, table, options);
  return (await stopWatching(dir, { registry: t.registry })).stats;
}

/** `timestamp without time zone` (PostgreSQL's spelling) as `timestamp` (Hyper's). */
const plainTimestamp = (sqlType: string) => sqlType.replace(/ without time zone$/, '');

/** Day `i` of 2018 written `DD/MM/YYYY` (day first) and as ISO. */
export function day(i: number): { dmy: string; mdy: string; iso: string } {
  const date = new Date(Date.UTC(2018, 0, 1 + (i % 365)));
  const dd = String(date.getUTCDate()).padStart(2, '0');
  const mm = String(date.getUTCMonth() + 1).padStart(2, '0');
  return { dmy: `${dd}/${mm}/2018`, mdy: `${mm}/${dd}/2018`, iso: `2018-${mm}-${dd}` };
}

export function csvDateCases(t: WatchBench): void {
  it('the reported case: 01/02/2018 into a DATE column fails as DATE_AMBIGUOUS naming --date-style, nothing lands; with \
dateStyle DMY or MDY it lands as meant', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'first.csv', 'id,d\n1,2018-01-05\n');
    assert.equal((await once(t, dir, table, opts)).filesIngested, 1);
    assert.deepEqual(await sqlTypes(t.pool, table).then((s) => s![1]), 'date');
    await drop(dir, 'eu.csv', 'id,d\n5,01/02/2018\n6,12/11/2018\n');
    const refused = await once(t, dir, table, opts);
    assert.equal(refused.filesFailed, 1);
    const error = await report(dir, 'eu.csv');
    assert.equal(error.code, 'DATE_AMBIGUOUS');
    assert.equal(error.line, 2);
    assert.equal(error.column, 'd');
    assert.match(
      error.message,
      /^eu\.csv: line 2, column "d": "01\/02\/2018" reads as 1 February \(day first\) or 2 January \(month first\) 2018/,
    );
    assert.match(error.hint, /--date-style DMY/);
    assert.equal(await count(t.pool, table), 1, 'nothing of the file landed');

    await drop(dir, 'eu.csv', 'id,d\n5,01/02/2018\n6,12/11/2018\n');
    assert.equal((await once(t, dir, table, { ...opts, dateStyle: 'DMY' })).filesIngested, 1);
    await drop(dir, 'us.csv', 'id,d\n7,01/02/2018\n8,12/11/2018\n');
    assert.equal((await once(t, dir, table, { ...opts, dateStyle: 'MDY' })).filesIngested, 1);
    assert.deepEqual(await datesOf(t, table), [
      [1, '2018-01-05'],
      [5, '2018-02-01'],
      [6, '2018-11-12'],
      [7, '2018-01-02'],
      [8, '2018-12-11'],
    ]);
  });

  it('an existing TIMESTAMP column: the order the file decides (a day over 12), or DATE_ORDER when its values contradict each \
other', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, d TIMESTAMP)`);
    await drop(dir, 'decided.csv', 'id,d\n1,01/02/2018 10:30\n2,13/02/2018 23:05:01\n3,\n4,2018-03-04 05:06:07\n');
    await drop(dir, 'mixed.csv', 'id,d\n9,13/02/2018 10:00\n10,02/13/2018 10:00\n');
    const stats = await once(t, dir, table, { ...opts, batchFiles: 1 });
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.deepEqual(await datesOf(t, table), [
      [1, '2018-02-01 10:30:00'],
      [2, '2018-02-13 23:05:01'],
      [3, null],
      [4, '2018-03-04 05:06:07'],
    ]);
    const mixed = await report(dir, 'mixed.csv');
    assert.equal(mixed.code, 'DATE_ORDER');
    assert.equal(mixed.line, 3);
    assert.match(mixed.message, /"02\/13\/2018 10:00" reads only month first, but "13\/02\/2018 10:00" \(line 2\) only day first/);
  });

  it('a new table: a column is a date only when its values decide the order; contradicting values make it text; undecided ones \
fail before a table is made', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'undecided.csv', 'id,d\n1,01/02/2018\n2,03/04/2018\n');
    const first = await once(t, dir, table, opts);
    assert.equal(first.filesFailed, 1);
    assert.equal((await report(dir, 'undecided.csv')).code, 'DATE_AMBIGUOUS');
    assert.equal(await sqlTypes(t.pool, table), undefined, 'no table was made');

    await drop(dir, 'decided.csv', 'id,d,t\n1,01/02/2018,01/02/2018 10:30\n2,13/02/2018,02/13/2018 11:00\n');
    assert.equal((await once(t, dir, table, opts)).filesIngested, 1);
    assert.deepEqual((await sqlTypes(t.pool, table))!.slice(1).map(plainTimestamp), ['date', 'timestamp']);
    assert.deepEqual(await datesOf(t, table), [
      [1, '2018-02-01'],
      [2, '2018-02-13'],
    ]);
    assert.deepEqual(await datesOf(t, table, 't'), [
      [1, '2018-01-02 10:30:00'],
      [2, '2018-02-13 11:00:00'],
    ]);

    const other = await t.inbox();
    await drop(other.dir, 'contra.csv', 'id,d\n1,13/02/2018\n2,02/13/2018\n');
    assert.equal((await once(t, other.dir, other.table, other.opts)).filesIngested, 1);
    assert.match((await sqlTypes(t.pool, other.table))![1]!, /^(text|character varying)/);
    assert.deepEqual(await datesOf(t, other.table), [
      [1, '13/02/2018'],
      [2, '02/13/2018'],
    ]);
  });

  it('dateFormat and timestampFormat: a new table typed from them, values in range, a value not in the format fails \
naming it', async () => {
    const { dir, table, opts } = await t.inbox();
    const formats = { ...opts, dateFormat: '%d.%m.%Y', timestampFormat: '%d/%m/%Y %H:%M' };
    await drop(dir, 'de.csv', 'id,d,t\n1,01.02.2018,01/02/2018 14:05\n2,5.11.2018,13/02/2018 00:00\n3,2018-12-24,\n');
    assert.equal((await once(t, dir, table, formats)).filesIngested, 1);
    assert.deepEqual((await sqlTypes(t.pool, table))!.slice(1).map(plainTimestamp), ['date', 'timestamp']);
    assert.deepEqual(await datesOf(t, table), [
      [1, '2018-02-01'],
      [2, '2018-11-05'],
      [3, '2018-12-24'],
    ]);
    assert.deepEqual(await datesOf(t, table, 't'), [
      [1, '2018-02-01 14:05:00'],
      [2, '2018-02-13 00:00:00'],
      [3, null],
    ]);
    await drop(dir, 'wrong.csv', 'id,d,t\n4,01.02.2018,01/02/2018 14:05\n5,01/02/2018,01/02/2018 14:05\n');
    const stats = await once(t, dir, table, formats);
    assert.equal(stats.filesFailed, 1);
    const error = await report(dir, 'wrong.csv');
    assert.equal(error.code, 'DATE_FORMAT');
    assert.equal(error.line, 3);
    assert.match(error.message, /"01\/02\/2018" does not match the format '%d\.%m\.%Y'/);
    assert.equal(await count(t.pool, table), 3);
  });

  it('small files ready together: day-first files land as meant with dateStyle, ISO ones share a COPY; without it the \
ambiguous ones fail alone and the rest land', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'first.csv', 'id,d\n0,2018-01-01\n');
    assert.equal((await once(t, dir, table, opts)).filesIngested, 1);
    const write = async (name: string, text: string) => writeFile(join(dir, name), text);
    for (let i = 1; i <= 4; i++) await write(`dmy${i}.csv`, `id,d\n${i},0${i}/02/2018\n${10 + i},2${i}/01/2018\n`);
    for (let i = 1; i <= 3; i++) await write(`iso${i}.csv`, `id,d\n${20 + i},2018-03-0${i}\n`);
    await write('amb.csv', 'id,d\n30,01/02/2018\n');
    const names = ['dmy1.csv', 'iso1.csv', 'dmy2.csv', 'amb.csv', 'iso2.csv', 'dmy3.csv', 'iso3.csv', 'dmy4.csv'];
    for (const name of names) await writeFile(join(dir, `${name}.ready`), '');
    // Without a style: the day-first files decide their own order (a day over 12), amb.csv cannot.
    const handle = await openWatcher(dir, table, opts);
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === names.length, 'the group');
    await handle.stop();
    assert.equal(handle.stats.filesFailed, 1);
    assert.equal((await report(dir, 'amb.csv')).code, 'DATE_AMBIGUOUS');
    const expected: [number, string][] = [[0, '2018-01-01']];
    for (let i = 1; i <= 4; i++) expected.push([i, `2018-02-0${i}`], [10 + i, `2018-01-2${i}`]);
    for (let i = 1; i <= 3; i++) expected.push([20 + i, `2018-03-0${i}`]);
    assert.deepEqual(
      await datesOf(t, table),
      expected.sort((a, b) => a[0] - b[0]),
    );
    // With the style, files that only read both ways land too.
    for (let i = 1; i <= 3; i++) await write(`style${i}.csv`, `id,d\n${40 + i},0${i}/02/2018\n`);
    for (let i = 1; i <= 3; i++) await writeFile(join(dir, `style${i}.csv.ready`), '');
    const styled = await once(t, dir, table, { ...opts, dateStyle: 'DMY' });
    assert.equal(styled.filesIngested, 3, JSON.stringify(styled.lastError));
    assert.deepEqual(
      (await datesOf(t, table)).filter(([id]) => id > 40),
      [
        [41, '2018-02-01'],
        [42, '2018-02-02'],
        [43, '2018-02-03'],
      ],
    );
  });

  it('gzip-compressed files: dates read the same as plain; ambiguous ones fail; a large one past the read-ahead too', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, d DATE)`);
    await drop(dir, 'amb.csv.gz', await gzip('id,d\n1,01/02/2018\n'));
    await drop(dir, 'us.csv.gz', await gzip('id,d\n2,01/02/2018\n3,12/31/2018\n'));
    const N = 40_000;
    await drop(dir, 'big.csv.gz', await gzip(`id,d\n${Array.from({ length: N }, (_, i) => `${100 + i},${day(i).mdy}`).join('\n')}\n`));
    const stats = await once(t, dir, table, { ...opts, batchFiles: 1 });
    assert.equal(stats.filesIngested, 2, JSON.stringify(stats.lastError));
    assert.equal((await report(dir, 'amb.csv.gz')).code, 'DATE_AMBIGUOUS');
    assert.deepEqual((await datesOf(t, table)).slice(0, 2), [
      [2, '2018-01-02'],
      [3, '2018-12-31'],
    ]);
    const wrong = await t.pool.query<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM ${table} WHERE id >= 100 AND d <> DATE '2018-01-01' + CAST((id - 100) % 365 AS INTEGER)`,
    );
    assert.equal(Number(wrong[0]!.n), 0);
    assert.equal(await count(t.pool, table), N + 2);
    await drop(dir, 'amb.csv.gz', await gzip('id,d\n1,01/02/2018\n'));
    assert.equal((await once(t, dir, table, { ...opts, dateStyle: 'DMY' })).filesIngested, 1);
    assert.deepEqual((await datesOf(t, table))[0], [1, '2018-02-01']);
  });

  it('bad rows skipped: a date against dateStyle is a bad row, set aside with its line and why; an ambiguous date still fails \
the file', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, d DATE)`);
    await drop(dir, 'some.csv', 'id,d\n1,01/02/2018\n2,02/13/2018\n3,31/12/2018\n4,32/12/2018\n');
    const stats = await once(t, dir, table, { ...opts, dateStyle: 'DMY', onBadRows: 'skip' });
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.equal(stats.rowsRejected, 2);
    assert.deepEqual(await datesOf(t, table), [
      [1, '2018-02-01'],
      [3, '2018-12-31'],
    ]);
    const rejected = await readFile(join(dir, 'failed', 'some.csv.rejected.csv'), 'utf8');
    // The reasons as CSV fields: their quotes doubled.
    assert.match(
      rejected,
      /^3,"column ""d"": ""02\/13\/2018"" reads only month first, not day first as dateStyle DMY says","2,02\/13\/2018"$/m,
    );
    assert.match(rejected, /^5,"column ""d"": ""32\/12\/2018"" is not a date: 32\/12 is neither/m);
    await drop(dir, 'amb.csv', 'id,d\n7,01/02/2018\n');
    const amb = await once(t, dir, table, { ...opts, onBadRows: 'skip' });
    assert.equal(amb.filesFailed, 1);
    assert.equal((await report(dir, 'amb.csv')).code, 'DATE_AMBIGUOUS');
    assert.ok((await failedEntries(dir)).includes('amb.csv.error'));
  });

  it('source columns with day-first dates: every row named, dates as meant', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'src.csv', 'id,d\n1,01/02/2018\n2,28/02/2018\n');
    assert.equal((await once(t, dir, table, { ...opts, dateStyle: 'DMY', sourceColumns: { file: '_file' } })).filesIngested, 1);
    const rows = await t.pool.query<{ id: number | string; d: string; f: string }>(
      `SELECT id, CAST(d AS TEXT) AS d, _file AS f FROM ${table} ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.d, r.f]),
      [
        [1, '2018-02-01', 'src.csv'],
        [2, '2018-02-28', 'src.csv'],
      ],
    );
  });

  it("two-digit years and month names: 1/2/18 needs a style (then the databases' century rule); 1 Feb 2018 needs none", async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, d DATE)`);
    await drop(dir, 'short.csv', 'id,d\n1,1/2/18\n');
    const refused = await once(t, dir, table, opts);
    assert.equal(refused.filesFailed, 1);
    const error = await report(dir, 'short.csv');
    assert.equal(error.code, 'DATE_AMBIGUOUS');
    assert.match(error.message, /two-digit year/);
    await drop(dir, 'short.csv', 'id,d\n1,1/2/18\n2,12/31/99\n');
    await drop(dir, 'names.csv', 'id,d\n3,1 Feb 2018\n4,"Feb 2, 2018"\n5,Thu 01-Mar-2018\n');
    assert.equal((await once(t, dir, table, { ...opts, dateStyle: 'MDY' })).filesIngested, 2);
    assert.deepEqual(await datesOf(t, table), [
      [1, '2018-01-02'],
      [2, '1999-12-31'],
      [3, '2018-02-01'],
      [4, '2018-02-02'],
      [5, '2018-03-01'],
    ]);
  });

  it('settings that cannot be used are refused when the watcher starts', async () => {
    const { dir, table, opts } = await t.inbox();
    await assert.rejects(openWatcher(dir, table, { ...opts, dateStyle: 'DYM' as never }), /dateStyle is "DYM", not one of YMD, DMY, MDY/);
    await assert.rejects(openWatcher(dir, table, { ...opts, dateFormat: '%d.%m' }), /dateFormat "%d\.%m" has no year/);
    await assert.rejects(openWatcher(dir, table, { ...opts, dateFormat: '%Y-%m-%d %H' }), /give it as timestampFormat/);
  });
}
