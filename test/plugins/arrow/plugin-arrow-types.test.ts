/**
 * Arrow types on a real hyperd: every mapped type round-trips through ARROWSTREAM and through CSV
 * alike, intervals and durations land as INTERVAL, decimals wider than 38 digits as their exact
 * text, a type with no column type (a union) is refused, and a file without rows makes a table.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Binary,
  Bool,
  DateDay,
  DateMillisecond,
  Decimal,
  DurationNanosecond,
  DurationSecond,
  IntervalDayTime,
  IntervalMonthDayNano,
  IntervalYearMonth,
  Field,
  FixedSizeBinary,
  Float16,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  LargeBinary,
  LargeUtf8,
  List,
  makeData,
  makeVector,
  Map_,
  Null,
  SparseUnion,
  Struct,
  type Table,
  tableToIPC,
  TimeMicrosecond,
  TimeMillisecond,
  TimeNanosecond,
  TimeSecond,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimestampSecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  vectorFromArray,
  type Vector,
} from 'apache-arrow';
import { useHyperFixture } from '../../helpers/env.ts';
import { expectError } from '../../helpers/plugin-bench.ts';
import { col, decimalVector, table, useArrowBench } from '../../helpers/arrow-bench.ts';

describe('arrow ingester', () => {
  const { bench, tableColumns, rowsOf } = useArrowBench();
  /**
   * A database of version 4 on the same hyperd: it has REAL and 38-digit NUMERIC, so every mapped
   * type keeps its own column type.
   */
  const v4 = useHyperFixture({ databaseVersion: 4 });

  /** One column per mapped Arrow type (all nullable, last row all nulls), and the text Hyper gives back. */
  function everyType(): { table: Table; expected: Record<string, string | null>[]; types: Record<string, string> } {
    const when = new Date(Date.UTC(2024, 1, 29, 12, 34, 56, 789));
    const whole = new Date(Date.UTC(2024, 1, 29, 12, 34, 56));
    const yearOne = new Date(0);
    yearOne.setUTCFullYear(1, 0, 1);
    const columns: Record<string, Vector> = {
      id: col([1, 2, 3], new Int32()),
      i8: col([-128, 127, null], new Int8()),
      i16: col([-32768, 32767, null], new Int16()),
      i64: col([-9223372036854775808n, 9223372036854775807n, null], new Int64()),
      u8: col([0, 255, null], new Uint8()),
      u16: col([0, 65535, null], new Uint16()),
      u32: col([0, 4294967295, null], new Uint32()),
      u64: col([0n, 18446744073709551615n, null], new Uint64()),
      f16: col([1.5, -0.25, null], new Float16()),
      f32: col([1.5, -2, null], new Float32()),
      f64: col([0.1, Number.POSITIVE_INFINITY, null], new Float64()),
      dec: decimalVector([12345, 0, 0, 0, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0, 0, 0, 0], 10, 2, [2]),
      // 2^96 + 1 and -2, at scale 4.
      dec38: decimalVector([1, 0, 0, 1, 0xfffffffe, 0xffffffff, 0xffffffff, 0xffffffff, 0, 0, 0, 0], 38, 4, [2]),
      ok: col([true, false, null], new Bool()),
      s: col(['x,"y"\nz', '', null], new Utf8()),
      ls: col(['large', '\\.', null], new LargeUtf8()),
      dict: vectorFromArray(['red', 'red', null]),
      bin: col([Uint8Array.of(0, 255), new Uint8Array(0), null], new Binary()),
      lbin: col([Uint8Array.of(1), Uint8Array.of(2, 3), null], new LargeBinary()),
      fbin: col([Uint8Array.of(0xab, 0xcd), Uint8Array.of(0, 1), null], new FixedSizeBinary(2)),
      dday: col([when, yearOne, null], new DateDay()),
      dms: col([when, new Date(Date.UTC(1969, 11, 31)), null], new DateMillisecond()),
      ts_s: col([whole, new Date(-1000), null], new TimestampSecond()),
      ts_ms: col([when, new Date(-1), null], new TimestampMillisecond()),
      ts_us: makeVector(
        makeData({
          type: new TimestampMicrosecond(),
          length: 3,
          nullCount: 1,
          nullBitmap: Uint8Array.of(0b011),
          data: BigInt64Array.of(1709210096789012n, -1n, 0n),
        }),
      ),
      ts_ns: makeVector(
        makeData({
          type: new TimestampNanosecond(),
          length: 3,
          nullCount: 1,
          nullBitmap: Uint8Array.of(0b011),
          data: BigInt64Array.of(1709210096789012345n, -1n, 0n),
        }),
      ),
      tstz: makeVector(
        makeData({
          type: new TimestampMicrosecond('Europe/Paris'),
          length: 3,
          nullCount: 1,
          nullBitmap: Uint8Array.of(0b011),
          data: BigInt64Array.of(1709210096789012n, 0n, 0n),
        }),
      ),
      tstz_ns: makeVector(
        makeData({
          type: new TimestampNanosecond('UTC'),
          length: 3,
          nullCount: 1,
          nullBitmap: Uint8Array.of(0b011),
          data: BigInt64Array.of(1709210096789012345n, 0n, 0n),
        }),
      ),
      t_s: col([3661, 0, null], new TimeSecond()),
      t_ms: col([3661001, 86399999, null], new TimeMillisecond()),
      t_us: makeVector(
        makeData({
          type: new TimeMicrosecond(),
          length: 3,
          nullCount: 1,
          nullBitmap: Uint8Array.of(0b011),
          data: BigInt64Array.of(3661001002n, 0n, 0n),
        }),
      ),
      t_ns: makeVector(
        makeData({
          type: new TimeNanosecond(),
          length: 3,
          nullCount: 1,
          nullBitmap: Uint8Array.of(0b011),
          data: BigInt64Array.of(3661001002003n, 0n, 0n),
        }),
      ),
      list: col([[1, 2], [], null], new List(new Field('item', new Int32(), true))),
      struct: col(
        [{ a: 1, b: 'x"y' }, { a: null, b: null }, null],
        new Struct([new Field('a', new Int32(), true), new Field('b', new Utf8(), true)]),
      ),
      map: col(
        [new Map([['k', 1]]), new Map<string, number>(), null],
        new Map_<Utf8, Int32>(
          new Field(
            'entries',
            new Struct<{ key: Utf8; value: Int32 }>([new Field('key', new Utf8(), false), new Field('value', new Int32(), true)]),
            false,
          ),
        ),
      ),
      nothing: col([null, null, null], new Null()),
    };
    const expected: Record<string, string | null>[] = [
      {
        id: '1',
        i8: '-128',
        i16: '-32768',
        i64: '-9223372036854775808',
        u8: '0',
        u16: '0',
        u32: '0',
        u64: '0',
        f16: '1.5',
        f32: '1.5',
        f64: '0.1',
        dec: '123.45',
        dec38: '7922816251426433759354395.0337',
        ok: 'true',
        s: 'x,"y"\nz',
        ls: 'large',
        dict: 'red',
        bin: '\\x00ff',
        lbin: '\\x01',
        fbin: '\\xabcd',
        dday: '2024-02-29',
        dms: '2024-02-29',
        ts_s: '2024-02-29 12:34:56',
        ts_ms: '2024-02-29 12:34:56.789',
        ts_us: '2024-02-29 12:34:56.789012',
        ts_ns: '2024-02-29 12:34:56.789012',
        tstz: '2024-02-29 12:34:56.789012+00',
        tstz_ns: '2024-02-29 12:34:56.789012+00',
        t_s: '01:01:01',
        t_ms: '01:01:01.001',
        t_us: '01:01:01.001002',
        t_ns: '01:01:01.001002',
        list: '[1,2]',
        struct: '{"a":1,"b":"x\\"y"}',
        map: '{"k":1}',
        nothing: null,
      },
      {
        id: '2',
        i8: '127',
        i16: '32767',
        i64: '9223372036854775807',
        u8: '255',
        u16: '65535',
        u32: '4294967295',
        u64: '18446744073709551615',
        f16: '-0.25',
        f32: '-2',
        f64: 'Infinity',
        dec: '-0.01',
        dec38: '-0.0002',
        ok: 'false',
        s: '',
        ls: '\\.',
        dict: 'red',
        bin: '\\x',
        lbin: '\\x0203',
        fbin: '\\x0001',
        dday: '0001-01-01',
        dms: '1969-12-31',
        ts_s: '1969-12-31 23:59:59',
        ts_ms: '1969-12-31 23:59:59.999',
        ts_us: '1969-12-31 23:59:59.999999',
        ts_ns: '1969-12-31 23:59:59.999999',
        tstz: '1970-01-01 00:00:00+00',
        tstz_ns: '1970-01-01 00:00:00+00',
        t_s: '00:00:00',
        t_ms: '23:59:59.999',
        t_us: '00:00:00',
        t_ns: '00:00:00',
        list: '[]',
        struct: '{"a":null,"b":null}',
        map: '{}',
        nothing: null,
      },
      {
        id: '3',
        ...Object.fromEntries(
          Object.keys(columns)
            .filter((k) => k !== 'id')
            .map((k) => [k, null]),
        ),
      },
    ];
    const types: Record<string, string> = {
      id: 'integer',
      i8: 'smallint',
      i16: 'smallint',
      i64: 'bigint',
      u8: 'smallint',
      u16: 'integer',
      u32: 'bigint',
      u64: 'numeric(20,0)',
      f16: 'real',
      f32: 'real',
      f64: 'double precision',
      dec: 'numeric(10,2)',
      dec38: 'numeric(38,4)',
      ok: 'boolean',
      s: 'text',
      ls: 'text',
      dict: 'text',
      bin: 'bytea',
      lbin: 'bytea',
      fbin: 'bytea',
      dday: 'date',
      dms: 'date',
      ts_s: 'timestamp',
      ts_ms: 'timestamp',
      ts_us: 'timestamp',
      ts_ns: 'timestamp',
      tstz: 'timestamptz',
      tstz_ns: 'timestamptz',
      t_s: 'time',
      t_ms: 'time',
      t_us: 'time',
      t_ns: 'time',
      list: 'text',
      struct: 'text',
      map: 'text',
      nothing: 'text',
    };
    return { table: table(columns), expected, types };
  }

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
