/**
 * Dates past the head of a large CSV file (the first rows decide how the file is read; the rest
 * must agree): a value against the order decided, an ambiguous one after ISO dates, and ISO dates
 * followed by day-first ones with `dateStyle`. Run beside helpers/csv-dates-suite.ts by the same test files.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { day, once, report } from './csv-dates-suite.ts';
import { drop } from './drop.ts';
import { count } from './env.ts';
import type { WatchBench } from './watch-bench.ts';

export function csvDatesPastHeadCases(t: WatchBench): void {
  it('past the head of a large file: a value against the order its first rows decided, or an ambiguous one after ISO dates, \
fails the file with its line; nothing lands', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, d DATE)`);
    const N = 30_000;
    const lines = (write: (i: number) => string) => `id,d\n${Array.from({ length: N }, (_, i) => `${i},${write(i)}`).join('\n')}\n`;
    // Day first, decided at once (13/01/2018 is on line 14); line 25002 reads only month first.
    await drop(
      dir,
      'against.csv',
      lines((i) => (i === 25_000 ? '01/13/2018' : day(i).dmy)),
    );
    // ISO dates, then one that reads both ways on line 25002.
    await drop(
      dir,
      'late.csv',
      lines((i) => (i === 25_000 ? '03/04/2018' : day(i).iso)),
    );
    // Day first all through: lands.
    await drop(
      dir,
      'good.csv',
      lines((i) => day(i).dmy).replaceAll(/^(\d+)/gm, (id) => String(Number(id) + N)),
    );
    const stats = await once(t, dir, table, { ...opts, batchFiles: 1 });
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    const against = await report(dir, 'against.csv');
    assert.equal(against.code, 'DATE_ORDER');
    assert.equal(against.line, 25_002);
    assert.match(against.message, /"01\/13\/2018" reads only month first, but the file's first rows read day first/);
    const late = await report(dir, 'late.csv');
    assert.equal(late.code, 'DATE_AMBIGUOUS');
    assert.equal(late.line, 25_002);
    assert.equal(await count(t.pool, table), N, 'only the good file landed');
    const wrong = await t.pool.query<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM ${table} WHERE d <> DATE '2018-01-01' + CAST((id - ${N}) % 365 AS INTEGER)`,
    );
    assert.equal(Number(wrong[0]!.n), 0, 'every day first date read day first');
  });

  it('past the head of a large file with dateStyle: ISO dates, then day-first ones, land as meant; an empty value is NULL; \
quoted ISO dates land', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, d DATE, ts TIMESTAMP)`);
    const N = 30_000;
    // ISO in the head (the file may load as written), another form from line 20002 on, CRLF line ends.
    const value = (i: number, time = '') =>
      i === 25_000 ? '' : i < 20_000 ? `${day(i).iso}${time}` : i % 2 === 0 ? `${day(i).dmy}${time}` : `"${day(i).iso}${time}"`;
    const text = `id,d,ts\r\n${Array.from({ length: N }, (_, i) => `${i},${value(i)},${value(i, ' 10:30')}`).join('\r\n')}\r\n`;
    await drop(dir, 'mixed.csv', text);
    const stats = await once(t, dir, table, { ...opts, dateStyle: 'DMY' });
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.equal(await count(t.pool, table), N);
    const wrong = await t.pool.query<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM ${table} WHERE id <> 25000 AND (d <> DATE '2018-01-01' + CAST(id % 365 AS INTEGER) ` +
        `OR CAST(ts AS DATE) <> d)`,
    );
    assert.equal(Number(wrong[0]!.n), 0, 'every date read day first, or as ISO');
    const empty = await t.pool.query<{ d: string | null }>(`SELECT CAST(d AS TEXT) AS d FROM ${table} WHERE id = 25000`);
    assert.equal(empty[0]!.d, null);
  });
}
