/**
 * The text settings that mean something in JSON, for any database: `nullValues` (a string equal
 * to a marker is NULL, for type inference too), `columnTypes` and `allText` (a table made from a
 * JSON file, a column added to one), and date strings read by `dateStyle`, `dateFormat` and
 * `timestampFormat` with CSV's rule: no date read by a guess, a file whose dates do not decide the
 * order failing as DATE_AMBIGUOUS (hint: --date-style) before a row lands. Alone, in groups of
 * small files, gzip-compressed, past the type sample of a large file, with bad rows skipped. Run by
 * test/plugins/json/json-dialect.test.ts (hyperd) and json-dialect-postgres.test.ts. The date cases
 * of single files are in json-dates-suite.ts.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openWatcher } from '../../src/api.ts';
import { gzip } from './compression-suite.ts';
import { datesOf, once, report } from './csv-dates-suite.ts';
import { drop, waitFor } from './drop.ts';
import { count, sqlTypes } from './env.ts';
import { jsonDateCases } from './json-dates-suite.ts';
import { lines, plain, textType } from './json-text.ts';
import type { WatchBench } from './watch-bench.ts';

export function jsonDialectCases(t: WatchBench): void {
  // The date strings first (json-dates-suite.ts), then the other settings.
  jsonDateCases(t);
  it('nullValues: a string equal to a marker is NULL, in a new table (inferred past it) and an existing one; other strings, \
and markers inside nested values, stay as written', async () => {
    const { dir, table, opts } = await t.inbox();
    const nulls = { ...opts, nullValues: ['NA', '\\N', 'NULL'] };
    await drop(
      dir,
      'dump.jsonl',
      lines([
        { id: 1, n: 'NA', d: '2018-02-01', s: 'na', j: { k: 'NA' } },
        { id: 2, n: 2.5, d: '\\N', s: 'NULL', j: null },
        { id: 3, n: 'NULL', d: '2018-02-03', s: 'x', j: ['NA'] },
      ]),
    );
    const stats = await once(t, dir, table, nulls);
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    const types = (await sqlTypes(t.pool, table))!.map(plain);
    assert.deepEqual(types.slice(0, 3), ['bigint', 'double precision', 'date']);
    assert.match(types[3]!, textType);
    const rows = await t.pool.query<{ id: string | number; n: number | null; d: string | null; s: string | null; j: string | null }>(
      `SELECT id, n, CAST(d AS TEXT) AS d, s, CAST(j AS TEXT) AS j FROM ${table} ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.n === null ? null : Number(r.n), r.d, r.s, r.j === null ? null : JSON.parse(r.j)]),
      [
        [1, null, '2018-02-01', 'na', { k: 'NA' }],
        [2, 2.5, null, null, null],
        [3, null, '2018-02-03', 'x', ['NA']],
      ],
    );
    // Without the setting the same file makes n text and lands the markers as strings.
    const other = await t.inbox();
    await drop(
      other.dir,
      'dump.jsonl',
      lines([
        { id: 1, n: 'NA' },
        { id: 2, n: 2.5 },
      ]),
    );
    assert.equal((await once(t, other.dir, other.table, other.opts)).filesIngested, 1);
    assert.match((await sqlTypes(t.pool, other.table))![1]!, textType);
    // An existing table with a NOT NULL column: a marker there is NULL, so the record is a bad row.
    const strict = await t.inbox();
    await t.pool.query(`CREATE TABLE ${strict.table} (id BIGINT NOT NULL, v DOUBLE PRECISION)`);
    await drop(
      strict.dir,
      'some.jsonl',
      lines([
        { id: 1, v: 'NA' },
        { id: '\\N', v: 1 },
        { id: 3, v: 3 },
      ]),
    );
    const skipped = await once(t, strict.dir, strict.table, { ...strict.opts, nullValues: ['NA', '\\N'], onBadRows: 'skip' });
    assert.equal(skipped.filesIngested, 1, JSON.stringify(skipped.lastError));
    assert.equal(skipped.rowsRejected, 1);
    const kept = await t.pool.query<{ id: string | number; v: number | null }>(`SELECT id, v FROM ${strict.table} ORDER BY id`);
    assert.deepEqual(
      kept.map((r) => [Number(r.id), r.v === null ? null : Number(r.v)]),
      [
        [1, null],
        [3, 3],
      ],
    );
    const refused = (await readFile(join(strict.dir, 'failed', 'some.jsonl.rejected.jsonl'), 'utf8')).trim().split('\n');
    assert.equal(refused.length, 1);
    assert.equal(JSON.parse(refused[0]!).line, 2);
    assert.match(JSON.parse(refused[0]!).reason, /NOT NULL|not-null/i);
  });

  it('columnTypes and allText: a table made from a JSON file, and a column added to one, get the types given', async () => {
    const { dir, table, opts } = await t.inbox();
    const given = { ...opts, columnTypes: { id: 'INTEGER', price: 'NUMERIC(10,2)', extra: 'SMALLINT' } };
    await drop(dir, 'first.jsonl', lines([{ id: 1, zip: '00501', price: 9.5 }]));
    const first = await once(t, dir, table, given);
    assert.equal(first.filesIngested, 1, JSON.stringify(first.lastError));
    const types = (await sqlTypes(t.pool, table))!.map(plain);
    assert.equal(types[0], 'integer');
    assert.match(types[1]!, textType);
    assert.match(types[2]!, /^numeric\(10, ?2\)$/);
    await drop(dir, 'more.jsonl', lines([{ id: 2, zip: '02134', price: 1.25, extra: 7 }]));
    const added = await once(t, dir, table, { ...given, schemaEvolution: 'addColumns' });
    assert.equal(added.filesIngested, 1, JSON.stringify(added.lastError));
    assert.equal((await sqlTypes(t.pool, table))![3], 'smallint');
    const rows = await t.pool.query<{ id: number; zip: string; price: string; extra: number | null }>(
      `SELECT id, zip, CAST(price AS TEXT) AS price, extra FROM ${table} ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.zip, r.price, r.extra === null ? null : Number(r.extra)]),
      [
        [1, '00501', '9.50', null],
        [2, '02134', '1.25', 7],
      ],
    );

    const all = await t.inbox();
    await drop(all.dir, 'all.json', JSON.stringify([{ id: 1, ok: true, d: '2018-02-01', n: 1.5 }]));
    const stats = await once(t, all.dir, all.table, { ...all.opts, allText: true, columnTypes: { id: 'BIGINT' } });
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    const allTypes = (await sqlTypes(t.pool, all.table))!;
    assert.equal(allTypes[0], 'bigint');
    for (const type of allTypes.slice(1)) assert.match(type, textType);
    const row = await t.pool.query<{ ok: string; d: string; n: string }>(`SELECT ok, d, n FROM ${all.table}`);
    assert.deepEqual(row[0], { ok: 'true', d: '2018-02-01', n: '1.5' });
  });

  it('small files ready together, plain and gzip, lines and arrays: dates read by dateStyle, NULL markers; an ambiguous file \
fails alone and the rest land', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, d DATE, v DOUBLE PRECISION)`);
    const names: string[] = [];
    const write = async (name: string, content: string | Uint8Array) => {
      await writeFile(join(dir, name), content);
      names.push(name);
    };
    for (let i = 1; i <= 3; i++)
      await write(
        `l${i}.jsonl`,
        lines([
          { id: i, d: `0${i}/02/2018`, v: 'NA' },
          { id: 10 + i, d: `2${i}/01/2018`, v: i },
        ]),
      );
    for (let i = 1; i <= 2; i++) await write(`a${i}.json`, JSON.stringify([{ id: 20 + i, d: `1${i + 2}/03/2018`, v: '\\N' }]));
    for (let i = 1; i <= 2; i++) await write(`z${i}.jsonl.gz`, await gzip(lines([{ id: 30 + i, d: `2${i}/04/2018`, v: 0.5 }])));
    await write('amb.jsonl.gz', await gzip(lines([{ id: 40, d: '01/02/2018', v: 1 }])));
    for (const name of names) await writeFile(join(dir, `${name}.ready`), '');
    const handle = await openWatcher(dir, table, { ...opts, nullValues: ['NA', '\\N'] });
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === names.length, 'the group');
    await handle.stop();
    assert.equal(handle.stats.filesFailed, 1, JSON.stringify(handle.stats.lastError));
    const error = await report(dir, 'amb.jsonl.gz');
    assert.equal(error.code, 'DATE_AMBIGUOUS');
    assert.match(error.hint, /--date-style/);
    const rows = await t.pool.query<{ id: string | number; d: string; v: number | null }>(
      `SELECT id, CAST(d AS TEXT) AS d, v FROM ${table} ORDER BY id`,
    );
    const expected: [number, string, number | null][] = [];
    for (let i = 1; i <= 3; i++) expected.push([i, `2018-02-0${i}`, null], [10 + i, `2018-01-2${i}`, i]);
    for (let i = 1; i <= 2; i++) expected.push([20 + i, `2018-03-1${i + 2}`, null]);
    for (let i = 1; i <= 2; i++) expected.push([30 + i, `2018-04-2${i}`, 0.5]);
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.d, r.v === null ? null : Number(r.v)]),
      expected.sort((a, b) => a[0] - b[0]),
    );
    // With the style, the one that read both ways lands too, gzip-compressed.
    await drop(dir, 'amb.jsonl.gz', await gzip(lines([{ id: 40, d: '01/02/2018', v: 1 }])));
    assert.equal((await once(t, dir, table, { ...opts, dateStyle: 'DMY' })).filesIngested, 1);
    assert.deepEqual((await datesOf(t, table)).at(-1), [40, '2018-02-01']);
  });

  it('bad rows skipped: a date string against dateStyle is a bad row, set aside with its line and why; an ambiguous one still \
fails the file', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, d DATE)`);
    await drop(
      dir,
      'some.jsonl',
      lines([
        { id: 1, d: '01/02/2018' },
        { id: 2, d: '02/13/2018' },
        { id: 3, d: '31/12/2018' },
        { id: 4, d: '32/12/2018' },
      ]),
    );
    const stats = await once(t, dir, table, { ...opts, dateStyle: 'DMY', onBadRows: 'skip' });
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.equal(stats.rowsRejected, 2);
    assert.deepEqual(await datesOf(t, table), [
      [1, '2018-02-01'],
      [3, '2018-12-31'],
    ]);
    const rejected = (await readFile(join(dir, 'failed', 'some.jsonl.rejected.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number; reason: string; record: string });
    assert.deepEqual(
      rejected.map((r) => [r.line, r.reason, JSON.parse(r.record)]),
      [
        [2, 'column "d": "02/13/2018" reads only month first, not day first as dateStyle DMY says', { id: 2, d: '02/13/2018' }],
        [4, 'column "d": "32/12/2018" is not a date: 32/12 is neither a day and a month nor a month and a day', { id: 4, d: '32/12/2018' }],
      ],
    );
    await drop(dir, 'amb.jsonl', lines([{ id: 7, d: '01/02/2018' }]));
    const amb = await once(t, dir, table, { ...opts, onBadRows: 'skip' });
    assert.equal(amb.filesFailed, 1);
    assert.equal((await report(dir, 'amb.jsonl')).code, 'DATE_AMBIGUOUS');
    assert.equal(await count(t.pool, table), 2);
  });
}
