/**
 * The Parquet ingester against an existing table on a real hyperd: columns matched by name and
 * widened, and the schema errors (a column the table lacks, a type that does not fit, a value
 * too long, no table when creating tables is disabled, a Parquet type with no column type).
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { count } from '../../helpers/env.ts';
import { miniParquet, plain } from '../../helpers/conformance-parquet-mini.ts';
import { context, LOCAL, REMOTE, useParquetBench } from '../../helpers/parquet-bench.ts';

describe('parquet ingester', () => {
  const { fx, hyperParquet, ingest, select, expectError, manyTypesFile } = useParquetBench();
  let manyTypes: string;

  before(async () => {
    manyTypes = await manyTypesFile();
  });

  it('appends to an existing table by column name: other order, other case, a missing nullable column, widening', async () => {
    // id is INT32 in the file (→ bigint), r is FLOAT (real → double precision), v is a decimal (→ double).
    const path = await hyperParquet(
      'existing.parquet',
      `SELECT g AS id, 'n' || g AS name, g * 1.5 AS v, (g / 4.0)::real AS r FROM generate_series(1, 3) g`,
    );
    for (const [ctx, table] of [
      [context(LOCAL), 'existing_fast'],
      [context(REMOTE), 'existing_decoded'],
    ] as const) {
      await fx.pool.query(`CREATE TABLE ${table} ("Name" TEXT, note TEXT, v DOUBLE PRECISION, id BIGINT NOT NULL, r DOUBLE PRECISION)`);
      assert.deepEqual((await ingest(path, table, ctx))._unsafeUnwrap(), { rows: 3 });
      assert.deepEqual(await select(`SELECT id, "Name", note, v, r FROM ${table} ORDER BY id`), [
        { id: '1', Name: 'n1', note: null, v: 1.5, r: 0.25 },
        { id: '2', Name: 'n2', note: null, v: 3, r: 0.5 },
        { id: '3', Name: 'n3', note: null, v: 4.5, r: 0.75 },
      ]);
    }
  });

  it('rejects a file column the table lacks', async () => {
    await fx.pool.query(`CREATE TABLE narrow (id BIGINT, name TEXT)`);
    const path = await hyperParquet('extra.parquet', `SELECT 1 AS id, 'x'::text AS name, 2.5::double precision AS surprise`);
    const error = expectError(await ingest(path, 'narrow'), 'schema', 'UNKNOWN_COLUMN');
    assert.match(error.message, /extra\.parquet/);
    assert.match(error.message, /"surprise"/);
    assert.equal(await count(fx.pool, 'narrow'), 0);
  });

  it('rejects a column whose type does not fit the table, naming both types', async () => {
    await fx.pool.query(`CREATE TABLE typed (id BIGINT, amount BIGINT)`);
    const path = await hyperParquet('mismatch.parquet', `SELECT 1 AS id, 'twelve'::text AS amount`);
    for (const ctx of [context(LOCAL), context(REMOTE)]) {
      const error = expectError(await ingest(path, 'typed', ctx), 'schema', 'PARQUET_TYPE_MISMATCH');
      assert.equal(error.column, 'amount');
      assert.match(
        error.message,
        /mismatch\.parquet: column "amount" is text in the file \(Parquet BYTE_ARRAY STRING\) but bigint in table typed/,
      );
    }
  });

  it('widens anything into text, but never cuts a value too long for varchar(n)', async () => {
    const fits = await hyperParquet(
      'short.parquet',
      `SELECT g AS id, 'ab' || g AS code, DATE '2024-01-01' + g AS day FROM generate_series(1, 2) g`,
    );
    const tooLong = await hyperParquet('long.parquet', `SELECT 3 AS id, 'abcd'::text AS code, DATE '2024-01-01' AS day`);
    for (const [ctx, table] of [
      [context(LOCAL), 'short_fast'],
      [context(REMOTE), 'short_decoded'],
    ] as const) {
      await fx.pool.query(`CREATE TABLE ${table} (id TEXT, code VARCHAR(3), day TEXT)`);
      assert.deepEqual((await ingest(fits, table, ctx))._unsafeUnwrap(), { rows: 2 });
      assert.deepEqual(await select(`SELECT id, code, day FROM ${table} ORDER BY id`), [
        { id: '1', code: 'ab1', day: '2024-01-02' },
        { id: '2', code: 'ab2', day: '2024-01-03' },
      ]);
      const result = await ingest(tooLong, table, ctx);
      assert.ok(result.isErr(), 'a value too long is an error');
      assert.equal(result.error.kind, 'data', result.error.message);
      if (ctx.capabilities.readsLocalFiles) {
        assert.equal(result.error.code, 'VALUE_TOO_LONG');
        assert.match(
          result.error.message,
          /long\.parquet: column "code" has a value of 4 characters \("abcd"\), too long for character varying\(3\) in table short_fast/,
        );
      }
      assert.equal(await count(fx.pool, table), 2);
    }
  });

  it('rejects a missing table when creating tables is disabled', async () => {
    const error = expectError(await ingest(manyTypes, 'never_created', context(LOCAL, new Map(), false)), 'schema', 'TABLE_MISSING');
    assert.match(error.message, /never_created/);
  });

  it('rejects an unsupported type, naming the column and its Parquet type', async () => {
    const path = join(fx.root, 'fixtures', 'interval.parquet');
    await writeFile(
      path,
      miniParquet(
        [
          { name: 'id', type: 1, data: plain.i32([1]) },
          { name: 'span', type: 7, typeLength: 12, convertedType: 21, data: plain.fixed([new Uint8Array(12)]) },
        ],
        1,
      ),
    );
    const error = expectError(await ingest(path, 'unsupported'), 'schema', 'PARQUET_UNSUPPORTED_TYPE');
    assert.equal(error.column, 'span');
    assert.match(error.message, /interval\.parquet: column "span" has Parquet type FIXED_LEN_BYTE_ARRAY\(12\) INTERVAL/);
    assert.equal(await fx.pool.transaction((conn) => conn.describeTable({ name: 'unsupported' })), null);
  });
});
