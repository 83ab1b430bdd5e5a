/**
 * Arrow types on a real hyperd: every mapped type round-trips through ARROWSTREAM and through CSV
 * alike, intervals and durations land as INTERVAL, decimals wider than 38 digits as their exact
 * text, a type with no column type (a union) is refused, and a file without rows makes a table.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Decimal,
  DurationNanosecond,
  DurationSecond,
  IntervalDayTime,
  IntervalMonthDayNano,
  IntervalYearMonth,
  Field,
  Int32,
  Int64,
  makeData,
  makeVector,
  SparseUnion,
  tableToIPC,
  Utf8,
} from 'apache-arrow';
import { useHyperFixture } from '../../helpers/env.ts';
import { expectError } from '../../helpers/plugin-bench.ts';
import { col, table, useArrowBench } from '../../helpers/arrow-bench.ts';
import { everyType } from '../../helpers/arrow-every-type.ts';

describe('arrow ingester', () => {
  const { bench, tableColumns, rowsOf } = useArrowBench();
  /**
   * A database of version 4 on the same hyperd: it has REAL and 38-digit NUMERIC, so every mapped
   * type keeps its own column type.
   */
  const v4 = useHyperFixture({ databaseVersion: 4 });

  it('round-trips every mapped type, through ARROWSTREAM and through CSV alike', async () => {
    const { table: data, expected, types } = everyType();
    for (const format of ['file', 'stream'] as const) {
      const file = await bench.claim(`types-${format}.arrow`, tableToIPC(data, format));
      const arrow = await bench.ingest(file, `types_${format}`, { target: v4 });
      assert.deepEqual(arrow, { rows: 3, attempts: 1 });
      assert.deepEqual(await tableColumns(v4, `types_${format}`), types);
      assert.deepEqual(await rowsOf(v4, `types_${format}`), expected);

      const csv = await bench.ingest(await bench.reopen(file), `types_${format}_csv`, { target: v4, remote: true });
      assert.deepEqual(csv, { rows: 3, attempts: 1 });
      assert.deepEqual(await rowsOf(v4, `types_${format}_csv`), expected);
    }
  });

  it('loads intervals and durations as INTERVAL, and decimals wider than 38 digits as their exact text', async () => {
    const months = makeVector(
      makeData({
        type: new IntervalYearMonth(),
        length: 3,
        nullCount: 1,
        nullBitmap: Uint8Array.of(0b011),
        data: Int32Array.of(14, -1, 0),
      }),
    );
    const dayTime = makeVector(
      makeData({
        type: new IntervalDayTime(),
        length: 3,
        nullCount: 1,
        nullBitmap: Uint8Array.of(0b011),
        data: Int32Array.of(3, 14_706_789, -2, -1500, 0, 0),
      }),
    );
    const mdn = new Int32Array(12);
    const view = new DataView(mdn.buffer);
    [
      [1, 2, 3_000_000_000n],
      [0, -1, -1_500_000n],
      [0, 0, 0n],
    ].forEach(([m, d, n], i) => {
      view.setInt32(i * 16, Number(m), true);
      view.setInt32(i * 16 + 4, Number(d), true);
      view.setBigInt64(i * 16 + 8, BigInt(n!), true);
    });
    const monthDayNano = makeVector(
      makeData({ type: new IntervalMonthDayNano(), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: mdn }),
    );
    // 10^40 + 1 and -1, at scale 2: 41 digits.
    const big = 10n ** 40n + 1n;
    const words = new Uint32Array(24);
    const put = (value: bigint, row: number): void => {
      const twos = value < 0n ? (1n << 256n) + value : value;
      for (let w = 0; w < 8; w++) words[row * 8 + w] = Number((twos >> BigInt(32 * w)) & 0xffffffffn);
    };
    put(big, 0);
    put(-1n, 1);
    const wide = makeVector(
      makeData({ type: new Decimal(2, 41, 256), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: words }),
    );
    const data = table({
      id: col([1, 2, 3], new Int32()),
      ym: months,
      dt: dayTime,
      mdn: monthDayNano,
      took_s: col([90061n, -5n, null], new DurationSecond()),
      took_ns: makeVector(
        makeData({
          type: new DurationNanosecond(),
          length: 3,
          nullCount: 1,
          nullBitmap: Uint8Array.of(0b011),
          data: BigInt64Array.of(1_500_000n, -2_000n, 0n),
        }),
      ),
      wide,
    });
    const expected = [
      {
        id: '1',
        ym: 'P1Y2M',
        dt: 'P3DT4H5M6.789000S',
        mdn: 'P1M2DT3S',
        took_s: 'PT25H1M1S',
        took_ns: 'PT0.001500S',
        wide: '100000000000000000000000000000000000000.01',
      },
      { id: '2', ym: 'P-1M', dt: 'P-2DT-1.500000S', mdn: 'P-1DT-0.001500S', took_s: 'PT-5S', took_ns: 'PT-0.000002S', wide: '-0.01' },
      { id: '3', ym: null, dt: null, mdn: null, took_s: null, took_ns: null, wide: null },
    ];
    for (const csv of [false, true]) {
      for (const format of ['file', 'stream'] as const) {
        const name = `iv_${format}_${csv}`;
        const outcome = await bench.ingest(await bench.claim(`${name}.arrow`, tableToIPC(data, format)), name, { remote: csv });
        assert.deepEqual(outcome, { rows: 3, attempts: 1 });
        assert.deepEqual(await tableColumns(bench, name), {
          id: 'integer',
          ym: 'interval',
          dt: 'interval',
          mdn: 'interval',
          took_s: 'interval',
          took_ns: 'interval',
          wide: 'text',
        });
        assert.deepEqual(await rowsOf(bench, name), expected, `${format}, ${csv ? 'CSV' : 'ARROWSTREAM'}`);
      }
    }
  });

  it('refuses a type with no column type (a union), naming the column', async () => {
    const union = new SparseUnion([0, 1], [new Field('n', new Int32(), true), new Field('s', new Utf8(), true)]);
    const children = [col([1, 2], new Int32()).data[0]!, col(['a', 'b'], new Utf8()).data[0]!];
    const either = makeVector(makeData({ type: union, length: 2, nullCount: 0, typeIds: Int8Array.of(0, 1), children }));
    const file = await bench.claim('union.arrow', tableToIPC(table({ id: col([1, 2], new Int32()), either }), 'file'));
    const error = expectError(await bench.ingest(file, 'unions'));
    assert.equal(error.kind, 'schema');
    assert.equal(error.code, 'ARROW_UNSUPPORTED_TYPE');
    assert.equal(error.column, 'either');
    assert.match(error.message, /union\.arrow: column "either" has Arrow type Union</);
    assert.equal(await tableColumns(bench, 'unions'), null);
  });

  it('creates the table from the schema of a file without rows', async () => {
    const empty = table({ id: col([] as bigint[], new Int64()), name: col([], new Utf8()) });
    assert.deepEqual(await bench.ingest(await bench.claim('empty-rows.arrow', tableToIPC(empty, 'stream')), 'no_rows'), {
      rows: 0,
      attempts: 1,
    });
    assert.deepEqual(await tableColumns(bench, 'no_rows'), { id: 'bigint', name: 'text' });
  });
});
