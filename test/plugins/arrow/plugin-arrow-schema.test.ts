/**
 * The Arrow ingester against an existing table on a real hyperd: columns matched by name, the
 * pass-through when they match exactly, and the refusals (a column the table lacks, a type that
 * does not fit, a NULL for NOT NULL, no table when creating tables is disabled).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Field, Float64, Int32, makeData, RecordBatch, Schema, Struct, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { count } from '../../helpers/env.ts';
import { expectError } from '../../helpers/plugin-bench.ts';
import { basic, col, useArrowBench } from '../../helpers/arrow-bench.ts';

describe('arrow ingester', () => {
  const { bench } = useArrowBench();

  it('appends to an existing table by name: other order, a missing nullable column, wider types, another case', async () => {
    await bench.pool.query(`CREATE TABLE ex ("Name" VARCHAR(20), extra TEXT, score DOUBLE PRECISION, id BIGINT NOT NULL, at TIMESTAMPTZ)`);
    for (const csv of [false, true]) {
      const file = await bench.claim(`ex-${csv}.arrow`, tableToIPC(basic(), 'file'));
      assert.deepEqual(await bench.ingest(file, 'ex', { remote: csv }), { rows: 3, attempts: 1 });
    }
    const rows = await bench.pool.query<Record<string, string | null>>(
      `SELECT "Name", extra, score::text AS score, id::text AS id, at::text AS at FROM ex ORDER BY id, at`,
    );
    const one = [
      { Name: 'alpha', extra: null, score: '1.5', id: '1', at: '2024-02-29 12:00:00+00' },
      { Name: 'b,"c"\nd', extra: null, score: null, id: '2', at: null },
      { Name: null, extra: null, score: '-2.25', id: '3', at: '1970-01-01 00:00:00+00' },
    ];
    assert.deepEqual(
      rows.map((r) => ({ ...r })),
      [one[0], one[0], one[1], one[1], one[2], one[2]],
    );
  });

  it('appends straight into a table whose columns match exactly (pass-through), and into one needing only a rewrite', async () => {
    await bench.pool.query(`CREATE TABLE exact (at TIMESTAMP, id INTEGER NOT NULL, name TEXT, score DOUBLE PRECISION)`);
    const schema = new Schema([new Field('id', new Int32(), false), new Field('name', new Utf8(), true)]);
    const batch = new RecordBatch(
      schema,
      makeData({
        type: new Struct(schema.fields),
        length: 2,
        nullCount: 0,
        children: [col([7, 8], new Int32()).data[0]!, col(['p', null], new Utf8()).data[0]!],
      }),
    );
    const file = await bench.claim('exact.arrow', tableToIPC(new Table([batch]), 'stream'));
    assert.deepEqual(await bench.ingest(file, 'exact'), { rows: 2, attempts: 1 });
    const dictSchema = new Schema([
      new Field('id', new Int32(), false),
      new Field('name', vectorFromArray(['q']).type, true),
      new Field('score', new Float64(), true),
    ]);
    const dictColumns = [col([9, 10, 11], new Int32()), vectorFromArray(['q', 'q', null]), col([1, 2, 3], new Float64())];
    const dictBatch = new RecordBatch(
      dictSchema,
      makeData({ type: new Struct(dictSchema.fields), length: 3, nullCount: 0, children: dictColumns.map((v) => v.data[0]!) }),
    );
    const dict = await bench.claim('exact-dict.arrow', tableToIPC(new Table([dictBatch]), 'file'));
    assert.deepEqual(await bench.ingest(dict, 'exact'), { rows: 3, attempts: 1 });
    const exact = await bench.pool.query(`SELECT id::text AS id, name, score::text AS score FROM exact ORDER BY score NULLS FIRST, id`);
    assert.deepEqual(
      exact.map((r) => ({ ...r })),
      [
        { id: '7', name: 'p', score: null },
        { id: '8', name: null, score: null },
        { id: '9', name: 'q', score: '1' },
        { id: '10', name: 'q', score: '2' },
        { id: '11', name: null, score: '3' },
      ],
    );
    assert.equal(await count(bench.pool, 'exact'), 5);
  });

  it('refuses a file column the table lacks', async () => {
    await bench.pool.query(`CREATE TABLE narrow (id INTEGER, name TEXT)`);
    const file = await bench.claim('extra.arrow', tableToIPC(basic(), 'file'));
    const error = expectError(await bench.ingest(file, 'narrow'));
    assert.equal(error.kind, 'schema');
    assert.equal(error.code, 'UNKNOWN_COLUMN');
    assert.equal(error.column, 'score');
    assert.match(error.message, /extra\.arrow.*"score"/);
    assert.equal(await count(bench.pool, 'narrow'), 0);
  });

  it('refuses a column whose type does not fit, naming both types', async () => {
    await bench.pool.query(`CREATE TABLE typed (id SMALLINT, name TEXT, score DOUBLE PRECISION, at TIMESTAMP)`);
    const file = await bench.claim('mismatch.arrow', tableToIPC(basic(), 'stream'));
    const error = expectError(await bench.ingest(file, 'typed'));
    assert.equal(error.kind, 'schema');
    assert.equal(error.code, 'TYPE_MISMATCH');
    assert.equal(error.column, 'id');
    assert.match(error.message, /mismatch\.arrow: column "id" is Int32 \(integer\) in the file, but smallint in table typed/);
    assert.ok(error.hint.length > 0);
  });

  it('refuses a NULL for a NOT NULL column', async () => {
    await bench.pool.query(`CREATE TABLE strict (id INTEGER, name TEXT NOT NULL, score DOUBLE PRECISION, at TIMESTAMP)`);
    const error = expectError(await bench.ingest(await bench.claim('nulls.arrow', tableToIPC(basic(), 'file')), 'strict'));
    assert.equal(error.kind, 'data');
    assert.equal(await count(bench.pool, 'strict'), 0);
  });

  it('does not create a table when creating tables is disabled', async () => {
    const error = expectError(
      await bench.ingest(await bench.claim('nocreate.arrow', tableToIPC(basic(), 'file')), 'not_there', { createTable: false }),
    );
    assert.equal(error.code, 'TABLE_MISSING');
    assert.equal(error.kind, 'schema');
  });
});
