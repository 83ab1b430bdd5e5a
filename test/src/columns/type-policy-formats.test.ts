/**
 * The one type policy, as users meet it: the same data written as Arrow and as Parquet (by arrow-rs,
 * through parquet-wasm, from the very same Arrow table) goes into tables of the same column types on
 * a real hyperd. Both formats land the same values where the policy lets the file in, and both
 * refuse it, before any row loads, where it does not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Decimal,
  Float64,
  Int16,
  makeData,
  makeVector,
  Table,
  tableToIPC,
  TimestampMicrosecond,
  Utf8,
  vectorFromArray,
  type DataType,
  type Vector,
} from 'apache-arrow';
import * as parquetWasm from 'parquet-wasm';
import { arrowIngester } from '../../../plugins/arrow/index.ts';
import { parquetIngester } from '../../../plugins/parquet/index.ts';
import { parseSqlType } from '../../../src/columns/sql-types.ts';
import { TYPE_FIT, typeFit, type TypeFit } from '../../../src/columns/type-policy.ts';
import type { Logger, LogicalType } from '../../../src/types.ts';
import { count } from '../../helpers/env.ts';
import { type PluginBench, usePluginBench } from '../../helpers/plugin-bench.ts';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

function decimals(unscaled: readonly (bigint | null)[], precision: number, scale: number): Vector {
  const words = new Uint32Array(unscaled.length * 4);
  const bitmap = new Uint8Array((unscaled.length + 7) >> 3);
  unscaled.forEach((value, i) => {
    if (value === null) return;
    bitmap[i >> 3]! |= 1 << (i & 7);
    let v = BigInt.asUintN(128, value);
    for (let w = 0; w < 4; w++, v >>= 32n) words[i * 4 + w] = Number(v & 0xffffffffn);
  });
  const nulls = unscaled.filter((v) => v === null).length;
  return makeVector(
    makeData({ type: new Decimal(scale, precision, 128), length: unscaled.length, nullCount: nulls, nullBitmap: bitmap, data: words }),
  );
}

const at = (iso: string): bigint => BigInt(Date.parse(iso)) * 1000n;
const micros = (values: (bigint | null)[], timezone?: string): Vector =>
  vectorFromArray(
    values.map((v) => (v === null ? null : Number(v / 1000n))),
    new TimestampMicrosecond(timezone ?? null) as DataType,
  );

interface Case {
  readonly label: string;
  readonly column: () => Vector;
  readonly fileType: LogicalType;
  readonly sqlType: string;
}

// Pairs on which the Arrow and Parquet ingesters once disagreed, and a few on which they agreed.
const cases: Case[] = [
  {
    label: 'Int64 → DOUBLE PRECISION',
    column: () => makeVector(BigInt64Array.from([1n, -2n, 9007199254740993n])),
    fileType: { kind: 'bigint' },
    sqlType: 'DOUBLE PRECISION',
  },
  {
    label: 'Timestamp → TIMESTAMPTZ',
    column: () => micros([at('2024-06-01T12:30:00Z'), null, at('1969-12-31T23:59:59Z')]),
    fileType: { kind: 'timestamp' },
    sqlType: 'TIMESTAMPTZ',
  },
  {
    label: 'Timestamp UTC → TIMESTAMP',
    column: () => micros([at('2024-06-01T12:30:00Z'), null, at('2000-01-01T00:00:00Z')], 'UTC'),
    fileType: { kind: 'timestamptz' },
    sqlType: 'TIMESTAMP',
  },
  {
    label: 'Decimal(16,2) → DOUBLE PRECISION',
    column: () => decimals([12345678901234n, null, -5n], 16, 2),
    fileType: { kind: 'decimal', precision: 16, scale: 2 },
    sqlType: 'DOUBLE PRECISION',
  },
  {
    label: 'Decimal(9,0) → INTEGER',
    column: () => decimals([123456789n, null, -1n], 9, 0),
    fileType: { kind: 'decimal', precision: 9, scale: 0 },
    sqlType: 'INTEGER',
  },
  {
    label: 'Int32 → BIGINT',
    column: () => makeVector(Int32Array.from([1, -2, 2147483647])),
    fileType: { kind: 'integer' },
    sqlType: 'BIGINT',
  },
  {
    label: 'Int16 → NUMERIC(5,0)',
    column: () => vectorFromArray([1, null, -32768], new Int16()),
    fileType: { kind: 'smallint' },
    sqlType: 'NUMERIC(5,0)',
  },
  {
    label: 'Float64 → TEXT',
    column: () => vectorFromArray([1.5, null, -0.25], new Float64()),
    fileType: { kind: 'double' },
    sqlType: 'TEXT',
  },
  {
    label: 'Int64 → INTEGER (narrower)',
    column: () => makeVector(BigInt64Array.from([1n, 2n, 3n])),
    fileType: { kind: 'bigint' },
    sqlType: 'INTEGER',
  },
  { label: 'Utf8 → BIGINT', column: () => vectorFromArray(['1', null, '3'], new Utf8()), fileType: { kind: 'text' }, sqlType: 'BIGINT' },
  {
    label: 'Float64 → NUMERIC(10,2)',
    column: () => vectorFromArray([1.5, null, 2], new Float64()),
    fileType: { kind: 'double' },
    sqlType: 'NUMERIC(10,2)',
  },
];

function arrowOf(c: Case): Uint8Array {
  return tableToIPC(new Table({ id: makeVector(Int32Array.from([1, 2, 3])), v: c.column() }), 'stream');
}

function parquetOf(c: Case): Uint8Array {
  return parquetWasm.writeParquet(parquetWasm.Table.fromIPCStream(arrowOf(c)));
}

/** The table's values as text, by id; `undefined` when the file was refused. */
async function load(
  bench: PluginBench,
  name: string,
  bytes: Uint8Array,
  table: string,
  sqlType: string,
  remote: boolean,
): Promise<{ values?: (string | null)[]; code?: string; kind?: string }> {
  await bench.pool.query(`CREATE TABLE ${table} (id INTEGER, v ${sqlType})`);
  const outcome = await bench.ingest(await bench.claim(name, bytes), table, { remote });
  if (outcome.error) {
    assert.equal(await count(bench.pool, table), 0, `${name}: a refused file loads no row`);
    return { code: outcome.error.code, kind: outcome.error.kind };
  }
  assert.equal(outcome.rows, 3, name);
  const rows = await bench.pool.query<{ v: string | null }>(`SELECT v::text AS v FROM ${table} ORDER BY id`);
  return { values: rows.map((r) => r.v) };
}

describe('one type policy for Arrow and Parquet, on a real hyperd', () => {
  const arrow = usePluginBench(arrowIngester, { maxAttempts: 3, logger: quiet });
  const parquet = usePluginBench(parquetIngester, { maxAttempts: 3, logger: quiet });

  for (const [i, c] of cases.entries()) {
    const fit: TypeFit = typeFit(c.fileType, parseSqlType(c.sqlType));
    it(`${c.label}: ${fit}, the same from both formats`, async () => {
      const results = [
        await load(arrow, `p${i}.arrow`, arrowOf(c), `arrow_${i}`, c.sqlType, false),
        await load(arrow, `p${i}r.arrow`, arrowOf(c), `arrow_remote_${i}`, c.sqlType, true),
        await load(parquet, `p${i}.parquet`, parquetOf(c), `parquet_${i}`, c.sqlType, false),
        await load(parquet, `p${i}r.parquet`, parquetOf(c), `parquet_remote_${i}`, c.sqlType, true),
      ];
      if (fit === TYPE_FIT.refused) {
        for (const r of results) assert.equal(r.kind, 'schema', JSON.stringify(r));
        assert.deepEqual(
          results.map((r) => r.code),
          ['TYPE_MISMATCH', 'TYPE_MISMATCH', 'PARQUET_TYPE_MISMATCH', 'PARQUET_TYPE_MISMATCH'],
        );
      } else {
        for (const r of results) assert.ok(r.values, JSON.stringify(r));
        assert.ok(
          results[0]!.values!.some((v) => v !== null),
          'values landed',
        );
        for (const r of results.slice(1)) assert.deepEqual(r.values, results[0]!.values);
      }
    });
  }
});
