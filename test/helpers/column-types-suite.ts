/**
 * `columnTypes` and `allText`, for any database: the types a user gives in place of the inferred
 * ones when a CSV or JSON file creates the table or adds a column (a zip code `00501` keeps its
 * zeros), and a type the database does not have refused before the watcher starts. Run by
 * test/src/columns/column-types.test.ts (hyperd) and column-types-postgres.test.ts.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openWatcher, WatchConfigError } from '../../src/api.ts';
import { once } from './csv-dates-suite.ts';
import { rowsOf } from './csv-dialect-suite.ts';
import { drop } from './drop.ts';
import { sqlTypes } from './env.ts';
import type { WatchBench } from './watch-bench.ts';

const ZIPS = 'id,zip,amount\n1,00501,1.5\n2,10001,2\n';

/** `character varying` and `text` alike, `numeric(12,2)` as both databases spell it. */
const plain = (types: readonly string[] | undefined) => types?.map((t) => (t === 'character varying' ? 'text' : t));

export function columnTypeCases(t: WatchBench): void {
  it(
    'CSV, columnTypes: a new table gets the types given (zip TEXT keeps 00501 and 10001 in one ' +
      'TEXT column, amount NUMERIC(12,2)); inferred from 10001 and 94105 alone, zip is a number',
    async () => {
      const { dir, table, opts } = await t.inbox();
      await drop(dir, 'zips.csv', ZIPS);
      const stats = await once(t, dir, table, { ...opts, columnTypes: { zip: 'TEXT', AMOUNT: 'NUMERIC(12,2)' } });
      assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
      assert.deepEqual(plain(await sqlTypes(t.pool, table)), ['bigint', 'text', 'numeric(12,2)']);
      assert.deepEqual(await rowsOf(t, `SELECT id, zip, amount FROM ${table} ORDER BY id`), [
        ['1', '00501', '1.50'],
        ['2', '10001', '2.00'],
      ]);
      // A first file whose zip codes all read as numbers makes the column a number, and a later
      // file's 00501 would land as 501; given as TEXT, the column is text from the first file on.
      const first = 'id,zip\n1,10001\n2,94105\n';
      const inferred = await t.inbox();
      await drop(inferred.dir, 'first.csv', first);
      assert.equal((await once(t, inferred.dir, inferred.table, inferred.opts)).filesIngested, 1);
      assert.deepEqual(await sqlTypes(t.pool, inferred.table), ['bigint', 'bigint']);
      const given = await t.inbox();
      await drop(given.dir, 'first.csv', first);
      assert.equal((await once(t, given.dir, given.table, { ...given.opts, columnTypes: { zip: 'TEXT' } })).filesIngested, 1);
      await drop(given.dir, 'later.csv', 'id,zip\n3,00501\n');
      assert.equal((await once(t, given.dir, given.table, given.opts)).filesIngested, 1);
      assert.deepEqual(await rowsOf(t, `SELECT zip FROM ${given.table} ORDER BY id`), [['10001'], ['94105'], ['00501']]);
    },
  );

  it('CSV, allText: every new column TEXT, values as written, but a column of columnTypes', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'zips.csv', ZIPS);
    assert.equal((await once(t, dir, table, { ...opts, allText: true, columnTypes: { id: 'INTEGER' } })).filesIngested, 1);
    assert.deepEqual(plain(await sqlTypes(t.pool, table)), ['integer', 'text', 'text']);
    assert.deepEqual(await rowsOf(t, `SELECT id, zip, amount FROM ${table} ORDER BY id`), [
      ['1', '00501', '1.5'],
      ['2', '10001', '2'],
    ]);
  });

  it(
    'CSV, an added column (schemaEvolution addColumns) gets its ' + 'type given, and allText the rest; existing columns keep theirs',
    async () => {
      const { dir, table, opts } = await t.inbox();
      await t.pool.query(`CREATE TABLE ${table} (id BIGINT, amount DOUBLE PRECISION)`);
      await drop(dir, 'more.csv', 'id,amount,zip,n\n1,2.5,00501,7\n');
      const stats = await once(t, dir, table, { ...opts, schemaEvolution: 'addColumns', allText: true, columnTypes: { n: 'SMALLINT' } });
      assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
      assert.deepEqual(plain(await sqlTypes(t.pool, table)), ['bigint', 'double precision', 'text', 'smallint']);
      assert.deepEqual(await rowsOf(t, `SELECT id, amount, zip, n FROM ${table}`), [['1', '2.5', '00501', '7']]);
    },
  );

  it('CSV: a value that does not fit the type given fails the file naming it (never a wider type), and nothing lands', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'bad.csv', 'id,n\n1,5\n2,x\n');
    const stats = await once(t, dir, table, { ...opts, columnTypes: { n: 'INTEGER' } });
    assert.equal(stats.filesFailed, 1);
    assert.equal(stats.filesIngested, 0);
    assert.equal(stats.lastError?.file, 'bad.csv');
    const types = await sqlTypes(t.pool, table);
    if (types) {
      assert.deepEqual(types, ['bigint', 'integer']);
      assert.deepEqual(await rowsOf(t, `SELECT COUNT(*) FROM ${table}`), [['0']]);
    }
  });

  it('JSON lines: columnTypes and allText for a new table and for an added column', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'a.jsonl', '{"id": 1, "zip": "00501", "n": 2.5, "tags": {"a": 1}}\n{"id": 2, "zip": "10001", "n": 3, "tags": null}\n');
    const stats = await once(t, dir, table, { ...opts, allText: true, columnTypes: { id: 'BIGINT', n: 'NUMERIC(10,2)' } });
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.deepEqual(plain(await sqlTypes(t.pool, table)), ['bigint', 'text', 'numeric(10,2)', 'text']);
    assert.deepEqual(await rowsOf(t, `SELECT id, zip, n, tags FROM ${table} ORDER BY id`), [
      ['1', '00501', '2.50', '{"a":1}'],
      ['2', '10001', '3.00', null],
    ]);
    await drop(dir, 'b.jsonl', '{"id": 3, "zip": "02134", "n": 1, "code": 42}\n');
    const added = await once(t, dir, table, { ...opts, schemaEvolution: 'addColumns', columnTypes: { code: 'TEXT' } });
    assert.equal(added.filesIngested, 1, JSON.stringify(added.lastError));
    assert.equal(plain(await sqlTypes(t.pool, table))?.[4], 'text');
    assert.deepEqual(await rowsOf(t, `SELECT zip, code FROM ${table} WHERE id = 3`), [['02134', '42']]);
  });

  it(
    'a type the database does not have stops the watcher from starting, naming ' +
      'the column and the type; a spelling that is no type is refused at once',
    async () => {
      const { dir, table, opts } = await t.inbox();
      const refused = await openWatcher(dir, table, { ...opts, columnTypes: { zip: 'NOSUCHTYPE' } }).catch((e: unknown) => e);
      assert.ok(refused instanceof WatchConfigError, String(refused));
      assert.match(refused.message, /columnTypes gives column "zip" the type "NOSUCHTYPE", which the database refuses/);
      assert.equal(t.registry.list().length, 0);
      const spelling = await openWatcher(dir, table, { ...opts, columnTypes: { zip: 'TEXT); DROP TABLE x; --' } }).catch((e: unknown) => e);
      assert.ok(spelling instanceof WatchConfigError, String(spelling));
      assert.match(spelling.message, /columnTypes gives column "zip" the type .* which is not the name of an SQL type/);
    },
  );
}
