/**
 * Date strings in JSON, for any database, read by `dateStyle`, `dateFormat` and `timestampFormat`
 * with CSV's rule: no date read by a guess, a file whose dates do not decide the order failing as
 * DATE_AMBIGUOUS (hint: --date-style) before a row lands; in a new table, an existing one and past
 * the type sample of a large file. Part of `jsonDialectCases` (json-dialect-suite.ts), which also
 * has the helpers both use.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { datesOf, once, report } from './csv-dates-suite.ts';
import { drop } from './drop.ts';
import { count, sqlTypes } from './env.ts';
import { lines, plain, textType } from './json-text.ts';
import type { WatchBench } from './watch-bench.ts';

/** Day `i` of 2018 written `DD/MM/YYYY`. */
function dmy(i: number): string {
  const date = new Date(Date.UTC(2018, 0, 1 + (i % 365)));
  return `${String(date.getUTCDate()).padStart(2, '0')}/${String(date.getUTCMonth() + 1).padStart(2, '0')}/2018`;
}

export function jsonDateCases(t: WatchBench): void {
  it('the reported case in JSON: "01/02/2018" into a DATE column fails as DATE_AMBIGUOUS naming --date-style, nothing lands; \
with dateStyle DMY or MDY it lands as meant', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, d DATE)`);
    await drop(
      dir,
      'eu.jsonl',
      lines([
        { id: 5, d: '01/02/2018' },
        { id: 6, d: '12/11/2018' },
      ]),
    );
    const refused = await once(t, dir, table, opts);
    assert.equal(refused.filesFailed, 1);
    const error = await report(dir, 'eu.jsonl');
    assert.equal(error.code, 'DATE_AMBIGUOUS');
    assert.equal(error.line, 1);
    assert.equal(error.column, 'd');
    assert.match(error.message, /^eu\.jsonl: line 1, column "d": "01\/02\/2018" reads as 1 February \(day first\) or 2 January/);
    assert.match(error.hint, /--date-style DMY/);
    assert.equal(await count(t.pool, table), 0, 'nothing of the file landed');

    await drop(
      dir,
      'eu.jsonl',
      lines([
        { id: 5, d: '01/02/2018' },
        { id: 6, d: '12/11/2018' },
      ]),
    );
    assert.equal((await once(t, dir, table, { ...opts, dateStyle: 'DMY' })).filesIngested, 1);
    await drop(
      dir,
      'us.json',
      JSON.stringify([
        { id: 7, d: '01/02/2018' },
        { id: 8, d: '12/11/2018' },
        { id: 9, d: '2018-03-04' },
      ]),
    );
    assert.equal((await once(t, dir, table, { ...opts, dateStyle: 'MDY' })).filesIngested, 1);
    assert.deepEqual(await datesOf(t, table), [
      [5, '2018-02-01'],
      [6, '2018-11-12'],
      [7, '2018-01-02'],
      [8, '2018-12-11'],
      [9, '2018-03-04'],
    ]);
  });

  it('a new table from JSON: a date column only when its strings decide the order; contradicting ones make it text; undecided \
ones fail before a table is made', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(
      dir,
      'undecided.jsonl',
      lines([
        { id: 1, d: '01/02/2018' },
        { id: 2, d: '03/04/2018' },
      ]),
    );
    assert.equal((await once(t, dir, table, opts)).filesFailed, 1);
    assert.equal((await report(dir, 'undecided.jsonl')).code, 'DATE_AMBIGUOUS');
    assert.equal(await sqlTypes(t.pool, table), undefined, 'no table was made');

    await drop(
      dir,
      'decided.jsonl',
      lines([
        { id: 1, d: '01/02/2018', t: '01/02/2018 10:30' },
        { id: 2, d: '13/02/2018', t: '02/13/2018 11:00' },
        { id: 3, d: null, t: null },
      ]),
    );
    const stats = await once(t, dir, table, opts);
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.deepEqual((await sqlTypes(t.pool, table))!.slice(1).map(plain), ['date', 'timestamp']);
    assert.deepEqual(await datesOf(t, table), [
      [1, '2018-02-01'],
      [2, '2018-02-13'],
      [3, null],
    ]);
    assert.deepEqual(await datesOf(t, table, 't'), [
      [1, '2018-01-02 10:30:00'],
      [2, '2018-02-13 11:00:00'],
      [3, null],
    ]);

    const other = await t.inbox();
    await drop(
      other.dir,
      'contra.jsonl',
      lines([
        { id: 1, d: '13/02/2018' },
        { id: 2, d: '02/13/2018' },
      ]),
    );
    assert.equal((await once(t, other.dir, other.table, other.opts)).filesIngested, 1);
    assert.match((await sqlTypes(t.pool, other.table))![1]!, textType);
    assert.deepEqual(await datesOf(t, other.table), [
      [1, '13/02/2018'],
      [2, '02/13/2018'],
    ]);
  });

  it('past the type sample of a large file: a date against the order the first records decided fails with its line; nothing \
lands', async () => {
    const { dir, table, opts } = await t.inbox();
    const N = 5000;
    const records = (bad: string | undefined) => Array.from({ length: N }, (_, i) => ({ id: i, d: i === 4000 && bad ? bad : dmy(i) }));
    await drop(dir, 'against.jsonl', lines(records('01/13/2018')));
    const stats = await once(t, dir, table, opts);
    assert.equal(stats.filesFailed, 1);
    const error = await report(dir, 'against.jsonl');
    assert.equal(error.code, 'DATE_ORDER');
    assert.equal(error.line, 4001);
    assert.match(error.message, /"01\/13\/2018" reads only month first, but the file's first rows read day first/);
    assert.equal(await count(t.pool, table).catch(() => 0), 0);

    await drop(dir, 'good.jsonl', lines(records(undefined)));
    const good = await once(t, dir, table, opts);
    assert.equal(good.filesIngested, 1, JSON.stringify(good.lastError));
    assert.equal((await sqlTypes(t.pool, table))![1], 'date');
    const wrong = await t.pool.query<{ n: number | string }>(
      `SELECT COUNT(*) AS n FROM ${table} WHERE d <> DATE '2018-01-01' + CAST(id % 365 AS INTEGER)`,
    );
    assert.equal(Number(wrong[0]!.n), 0, 'every day-first date read day first');
    assert.equal(await count(t.pool, table), N);
  });

  it('dateFormat and timestampFormat: a new table typed from them; a string not in the format fails naming it', async () => {
    const { dir, table, opts } = await t.inbox();
    const formats = { ...opts, dateFormat: '%d.%m.%Y', timestampFormat: '%d/%m/%Y %H:%M' };
    await drop(
      dir,
      'de.json',
      JSON.stringify([
        { id: 1, d: '01.02.2018', t: '01/02/2018 14:05' },
        { id: 2, d: '5.11.2018', t: '13/02/2018 00:00' },
        { id: 3, d: '2018-12-24', t: null },
      ]),
    );
    const stats = await once(t, dir, table, formats);
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.deepEqual((await sqlTypes(t.pool, table))!.slice(1).map(plain), ['date', 'timestamp']);
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
    await drop(
      dir,
      'wrong.jsonl',
      lines([
        { id: 4, d: '01.02.2018' },
        { id: 5, d: '01/02/2018' },
      ]),
    );
    assert.equal((await once(t, dir, table, formats)).filesFailed, 1);
    const error = await report(dir, 'wrong.jsonl');
    assert.equal(error.code, 'DATE_FORMAT');
    assert.equal(error.line, 2);
    assert.match(error.message, /"01\/02\/2018" does not match the format '%d\.%m\.%Y'/);
    assert.equal(await count(t.pool, table), 3);
  });
}
