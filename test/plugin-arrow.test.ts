import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Binary,
  Bool,
  compressionRegistry,
  CompressionType,
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
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  SparseUnion,
  Struct,
  Table,
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
  type DataType,
  type Vector,
} from 'apache-arrow';
import { Message } from 'apache-arrow/ipc/metadata/message';
import { decompress } from '../plugins/arrow/codecs.ts';
import { arrowIngester } from '../plugins/arrow/index.ts';
import { IpcProblem } from '../plugins/arrow/problem.ts';
import type { Logger } from '../src/types.ts';
import { count, useHyperFixture } from './helpers/env.ts';
import { columnTypes, expectError, type PluginTarget, usePluginBench } from './helpers/plugin-bench.ts';

const quiet: Logger = { debug() {}, info() {}, warn: (m) => { if (process.env.ARROW_TEST_LOG) console.log('WARN', m); }, error() {} };

/** A column of test data: an Arrow vector, nullable unless said otherwise. */
function col(values: readonly unknown[], type: DataType): Vector {
  return vectorFromArray(values, type);
}

/** A decimal column from its 32-bit words (little-endian two's complement); `nulls` marks null rows. */
function decimalVector(words: readonly number[], precision: number, scale: number, nulls: readonly number[] = []): Vector {
  const length = words.length / 4;
  const bitmap = new Uint8Array((length + 7) >> 3);
  for (let i = 0; i < length; i++) if (!nulls.includes(i)) bitmap[i >> 3]! |= 1 << (i & 7);
  return makeVector(makeData({ type: new Decimal(scale, precision, 128), length, nullCount: nulls.length, nullBitmap: bitmap, data: new Uint32Array(words) }));
}

function table(columns: Record<string, Vector>): Table {
  return new Table(columns);
}

describe('arrow ingester', () => {
  // The Arrow ingester asks for one retry at most (as CSV, when Hyper refuses the Arrow data).
  const bench = usePluginBench(arrowIngester, { maxAttempts: 5, logger: quiet });
  /**
   * A database of version 4 on the same hyperd: it has REAL and 38-digit NUMERIC, so every mapped
   * type keeps its own column type.
   */
  const v4 = useHyperFixture({ databaseVersion: 4 });

  function tableColumns(target: PluginTarget, name: string): Promise<Record<string, string> | null> {
    return columnTypes(target.pool, name);
  }

  /** Every column as text, rows ordered by the first column. */
  async function rowsOf(target: PluginTarget, name: string): Promise<Record<string, string | null>[]> {
    const columns = await target.pool.transaction((conn) => conn.describeTable({ name }));
    assert.ok(columns, `table ${name} exists`);
    const list = columns.map((c) => `"${c.name}"::text AS "${c.name}"`).join(', ');
    const rows = await target.pool.query<Record<string, string | null>>(`SELECT ${list} FROM "${name}" ORDER BY 1`);
    return rows.map((row) => ({ ...row }));
  }

  const basic = (): Table =>
    table({
      id: col([1, 2, 3], new Int32()),
      name: col(['alpha', 'b,"c"\nd', null], new Utf8()),
      score: col([1.5, null, -2.25], new Float64()),
      at: col([new Date(Date.UTC(2024, 1, 29, 12, 0, 0)), null, new Date(0)], new TimestampMillisecond()),
    });

  const expectedBasic = [
    { id: '1', name: 'alpha', score: '1.5', at: '2024-02-29 12:00:00' },
    { id: '2', name: 'b,"c"\nd', score: null, at: null },
    { id: '3', name: null, score: '-2.25', at: '1970-01-01 00:00:00' },
  ];

  it('loads the file format and the stream format, under each extension', async () => {
    const file = await bench.claim('basic.arrow', tableToIPC(basic(), 'file'));
    assert.deepEqual(await bench.ingest(file, 'fmt_file'), { rows: 3, attempts: 1 });
    assert.deepEqual(await rowsOf(bench, 'fmt_file'), expectedBasic);
    assert.deepEqual(await tableColumns(bench, 'fmt_file'), { id: 'integer', name: 'text', score: 'double precision', at: 'timestamp' });

    const stream = await bench.claim('basic.ipc', tableToIPC(basic(), 'stream'));
    assert.deepEqual(await bench.ingest(stream, 'fmt_stream'), { rows: 3, attempts: 1 });
    assert.deepEqual(await rowsOf(bench, 'fmt_stream'), expectedBasic);

    const feather = await bench.claim('basic.feather', tableToIPC(basic(), 'file'));
    assert.deepEqual(await bench.ingest(feather, 'fmt_stream'), { rows: 3, attempts: 1 });
    assert.equal(await count(bench.pool, 'fmt_stream'), 6);
  });

  it('loads a file with several record batches and dictionaries, in both formats', async () => {
    // One dictionary for the whole column, cut into three record batches.
    const whole = table({ id: col([0n, 1n, 2n, 3n, 4n, 5n], new Int64()), tag: vectorFromArray(['t0', null, 't1', null, 't2', null]) }).batches[0]!;
    const multi = new Table([whole.slice(0, 2), whole.slice(2, 4), whole.slice(4, 6)]);
    for (const format of ['file', 'stream'] as const) {
      const file = await bench.claim(`multi-${format}.arrow`, tableToIPC(multi, format));
      assert.deepEqual(await bench.ingest(file, `multi_${format}`), { rows: 6, attempts: 1 });
      const rows = await rowsOf(bench, `multi_${format}`);
      assert.deepEqual(
        rows.map((r) => r.tag),
        ['t0', null, 't1', null, 't2', null],
      );
    }
  });

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
      ts_us: makeVector(makeData({ type: new TimestampMicrosecond(), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: BigInt64Array.of(1709210096789012n, -1n, 0n) })),
      ts_ns: makeVector(makeData({ type: new TimestampNanosecond(), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: BigInt64Array.of(1709210096789012345n, -1n, 0n) })),
      tstz: makeVector(makeData({ type: new TimestampMicrosecond('Europe/Paris'), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: BigInt64Array.of(1709210096789012n, 0n, 0n) })),
      tstz_ns: makeVector(makeData({ type: new TimestampNanosecond('UTC'), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: BigInt64Array.of(1709210096789012345n, 0n, 0n) })),
      t_s: col([3661, 0, null], new TimeSecond()),
      t_ms: col([3661001, 86399999, null], new TimeMillisecond()),
      t_us: makeVector(makeData({ type: new TimeMicrosecond(), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: BigInt64Array.of(3661001002n, 0n, 0n) })),
      t_ns: makeVector(makeData({ type: new TimeNanosecond(), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: BigInt64Array.of(3661001002003n, 0n, 0n) })),
      list: col([[1, 2], [], null], new List(new Field('item', new Int32(), true))),
      struct: col([{ a: 1, b: 'x"y' }, { a: null, b: null }, null], new Struct([new Field('a', new Int32(), true), new Field('b', new Utf8(), true)])),
      map: col(
        [new Map([['k', 1]]), new Map<string, number>(), null],
        new Map_<Utf8, Int32>(new Field('entries', new Struct<{ key: Utf8; value: Int32 }>([new Field('key', new Utf8(), false), new Field('value', new Int32(), true)]), false)),
      ),
      nothing: col([null, null, null], new Null()),
    };
    const expected: Record<string, string | null>[] = [
      {
        id: '1', i8: '-128', i16: '-32768', i64: '-9223372036854775808', u8: '0', u16: '0', u32: '0', u64: '0', f16: '1.5', f32: '1.5', f64: '0.1',
        dec: '123.45', dec38: '7922816251426433759354395.0337', ok: 'true', s: 'x,"y"\nz', ls: 'large', dict: 'red', bin: '\\x00ff', lbin: '\\x01', fbin: '\\xabcd',
        dday: '2024-02-29', dms: '2024-02-29', ts_s: '2024-02-29 12:34:56', ts_ms: '2024-02-29 12:34:56.789', ts_us: '2024-02-29 12:34:56.789012',
        ts_ns: '2024-02-29 12:34:56.789012', tstz: '2024-02-29 12:34:56.789012+00', tstz_ns: '2024-02-29 12:34:56.789012+00',
        t_s: '01:01:01', t_ms: '01:01:01.001', t_us: '01:01:01.001002', t_ns: '01:01:01.001002', list: '[1,2]', struct: '{"a":1,"b":"x\\"y"}', map: '{"k":1}', nothing: null,
      },
      {
        id: '2', i8: '127', i16: '32767', i64: '9223372036854775807', u8: '255', u16: '65535', u32: '4294967295', u64: '18446744073709551615', f16: '-0.25', f32: '-2', f64: 'Infinity',
        dec: '-0.01', dec38: '-0.0002', ok: 'false', s: '', ls: '\\.', dict: 'red', bin: '\\x', lbin: '\\x0203', fbin: '\\x0001',
        dday: '0001-01-01', dms: '1969-12-31', ts_s: '1969-12-31 23:59:59', ts_ms: '1969-12-31 23:59:59.999', ts_us: '1969-12-31 23:59:59.999999',
        ts_ns: '1969-12-31 23:59:59.999999', tstz: '1970-01-01 00:00:00+00', tstz_ns: '1970-01-01 00:00:00+00',
        t_s: '00:00:00', t_ms: '23:59:59.999', t_us: '00:00:00', t_ns: '00:00:00', list: '[]', struct: '{"a":null,"b":null}', map: '{}', nothing: null,
      },
      { id: '3', ...Object.fromEntries(Object.keys(columns).filter((k) => k !== 'id').map((k) => [k, null])) },
    ];
    const types: Record<string, string> = {
      id: 'integer', i8: 'smallint', i16: 'smallint', i64: 'bigint', u8: 'smallint', u16: 'integer', u32: 'bigint', u64: 'numeric(20,0)', f16: 'real', f32: 'real', f64: 'double precision',
      dec: 'numeric(10,2)', dec38: 'numeric(38,4)', ok: 'boolean', s: 'text', ls: 'text', dict: 'text', bin: 'bytea', lbin: 'bytea', fbin: 'bytea', dday: 'date', dms: 'date',
      ts_s: 'timestamp', ts_ms: 'timestamp', ts_us: 'timestamp', ts_ns: 'timestamp', tstz: 'timestamptz', tstz_ns: 'timestamptz',
      t_s: 'time', t_ms: 'time', t_us: 'time', t_ns: 'time', list: 'text', struct: 'text', map: 'text', nothing: 'text',
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

  it('appends to an existing table by name: other order, a missing nullable column, wider types, another case', async () => {
    await bench.pool.query(`CREATE TABLE ex ("Name" VARCHAR(20), extra TEXT, score DOUBLE PRECISION, id BIGINT NOT NULL, at TIMESTAMPTZ)`);
    for (const csv of [false, true]) {
      const file = await bench.claim(`ex-${csv}.arrow`, tableToIPC(basic(), 'file'));
      assert.deepEqual(await bench.ingest(file, 'ex', { remote: csv }), { rows: 3, attempts: 1 });
    }
    const rows = await bench.pool.query<Record<string, string | null>>(`SELECT "Name", extra, score::text AS score, id::text AS id, at::text AS at FROM ex ORDER BY id, at`);
    const one = [
      { Name: 'alpha', extra: null, score: '1.5', id: '1', at: '2024-02-29 12:00:00+00' },
      { Name: 'b,"c"\nd', extra: null, score: null, id: '2', at: null },
      { Name: null, extra: null, score: '-2.25', id: '3', at: '1970-01-01 00:00:00+00' },
    ];
    assert.deepEqual(rows.map((r) => ({ ...r })), [one[0], one[0], one[1], one[1], one[2], one[2]]);
  });

  it('appends straight into a table whose columns match exactly (pass-through), and into one needing only a rewrite', async () => {
    await bench.pool.query(`CREATE TABLE exact (at TIMESTAMP, id INTEGER NOT NULL, name TEXT, score DOUBLE PRECISION)`);
    const schema = new Schema([new Field('id', new Int32(), false), new Field('name', new Utf8(), true)]);
    const batch = new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: 2, nullCount: 0, children: [col([7, 8], new Int32()).data[0]!, col(['p', null], new Utf8()).data[0]!] }));
    const file = await bench.claim('exact.arrow', tableToIPC(new Table([batch]), 'stream'));
    assert.deepEqual(await bench.ingest(file, 'exact'), { rows: 2, attempts: 1 });
    const dictSchema = new Schema([new Field('id', new Int32(), false), new Field('name', vectorFromArray(['q']).type, true), new Field('score', new Float64(), true)]);
    const dictColumns = [col([9, 10, 11], new Int32()), vectorFromArray(['q', 'q', null]), col([1, 2, 3], new Float64())];
    const dictBatch = new RecordBatch(dictSchema, makeData({ type: new Struct(dictSchema.fields), length: 3, nullCount: 0, children: dictColumns.map((v) => v.data[0]!) }));
    const dict = await bench.claim('exact-dict.arrow', tableToIPC(new Table([dictBatch]), 'file'));
    assert.deepEqual(await bench.ingest(dict, 'exact'), { rows: 3, attempts: 1 });
    const exact = await bench.pool.query(`SELECT id::text AS id, name, score::text AS score FROM exact ORDER BY score NULLS FIRST, id`);
    assert.deepEqual(exact.map((r) => ({ ...r })), [
      { id: '7', name: 'p', score: null },
      { id: '8', name: null, score: null },
      { id: '9', name: 'q', score: '1' },
      { id: '10', name: 'q', score: '2' },
      { id: '11', name: null, score: '3' },
    ]);
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

  it('loads intervals and durations as INTERVAL, and decimals wider than 38 digits as their exact text', async () => {
    const months = makeVector(makeData({ type: new IntervalYearMonth(), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: Int32Array.of(14, -1, 0) }));
    const dayTime = makeVector(makeData({ type: new IntervalDayTime(), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: Int32Array.of(3, 14_706_789, -2, -1500, 0, 0) }));
    const mdn = new Int32Array(12);
    const view = new DataView(mdn.buffer);
    [[1, 2, 3_000_000_000n], [0, -1, -1_500_000n], [0, 0, 0n]].forEach(([m, d, n], i) => {
      view.setInt32(i * 16, Number(m), true);
      view.setInt32(i * 16 + 4, Number(d), true);
      view.setBigInt64(i * 16 + 8, BigInt(n!), true);
    });
    const monthDayNano = makeVector(makeData({ type: new IntervalMonthDayNano(), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: mdn }));
    // 10^40 + 1 and -1, at scale 2: 41 digits.
    const big = 10n ** 40n + 1n;
    const words = new Uint32Array(24);
    const put = (value: bigint, row: number): void => {
      const twos = value < 0n ? (1n << 256n) + value : value;
      for (let w = 0; w < 8; w++) words[row * 8 + w] = Number((twos >> BigInt(32 * w)) & 0xffffffffn);
    };
    put(big, 0);
    put(-1n, 1);
    const wide = makeVector(makeData({ type: new Decimal(2, 41, 256), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: words }));
    const data = table({
      id: col([1, 2, 3], new Int32()),
      ym: months,
      dt: dayTime,
      mdn: monthDayNano,
      took_s: col([90061n, -5n, null], new DurationSecond()),
      took_ns: makeVector(makeData({ type: new DurationNanosecond(), length: 3, nullCount: 1, nullBitmap: Uint8Array.of(0b011), data: BigInt64Array.of(1_500_000n, -2_000n, 0n) })),
      wide,
    });
    const expected = [
      { id: '1', ym: 'P1Y2M', dt: 'P3DT4H5M6.789000S', mdn: 'P1M2DT3S', took_s: 'PT25H1M1S', took_ns: 'PT0.001500S', wide: '100000000000000000000000000000000000000.01' },
      { id: '2', ym: 'P-1M', dt: 'P-2DT-1.500000S', mdn: 'P-1DT-0.001500S', took_s: 'PT-5S', took_ns: 'PT-0.000002S', wide: '-0.01' },
      { id: '3', ym: null, dt: null, mdn: null, took_s: null, took_ns: null, wide: null },
    ];
    for (const csv of [false, true]) {
      for (const format of ['file', 'stream'] as const) {
        const name = `iv_${format}_${csv}`;
        const outcome = await bench.ingest(await bench.claim(`${name}.arrow`, tableToIPC(data, format)), name, { remote: csv });
        assert.deepEqual(outcome, { rows: 3, attempts: 1 });
        assert.deepEqual(await tableColumns(bench, name), { id: 'integer', ym: 'interval', dt: 'interval', mdn: 'interval', took_s: 'interval', took_ns: 'interval', wide: 'text' });
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

  it('reports a zero-byte file, garbage, and truncated files and streams as data errors', async () => {
    const cases: [string, Uint8Array, string][] = [];
    const fileBytes = tableToIPC(basic(), 'file');
    const streamBytes = tableToIPC(basic(), 'stream');
    cases.push(['empty.arrow', new Uint8Array(0), 'EMPTY_FILE']);
    cases.push(['garbage.arrow', new TextEncoder().encode('id,name\n1,not arrow at all\n'), 'ARROW_NOT_IPC']);
    cases.push(['zeros.arrow', new Uint8Array(64), 'ARROW_NOT_IPC']);
    cases.push(['cut-file.arrow', fileBytes.subarray(0, fileBytes.length - 100), 'ARROW_TRUNCATED']);
    cases.push(['cut-magic.arrow', fileBytes.subarray(0, 12), 'ARROW_TRUNCATED']);
    cases.push(['cut-stream.arrow', streamBytes.subarray(0, streamBytes.length - 40), 'ARROW_TRUNCATED']);
    // Cut after the end-of-stream marker's continuation token: inside a message's length prefix.
    cases.push(['cut-eos.arrow', streamBytes.subarray(0, streamBytes.length - 4), 'ARROW_TRUNCATED']);
    cases.push(['cut-schema.arrow', streamBytes.subarray(0, 20), 'ARROW_TRUNCATED']);
    // A stream whose end is intact but whose middle was overwritten.
    const scrambled = streamBytes.slice();
    scrambled.fill(0x5a, 300, 340);
    cases.push(['scrambled.arrow', scrambled, 'ARROW_']);
    for (const csv of [false, true]) {
      for (const [name, bytes, code] of cases) {
        const outcome = await bench.ingest(await bench.claim(`${csv ? 'csv-' : ''}${name}`, bytes), 'bad', { remote: csv });
        const error = expectError(outcome);
        assert.equal(error.kind, 'data', `${name}: ${JSON.stringify(error)}`);
        assert.ok(error.code.startsWith(code), `${name}: ${error.code} ${error.message}`);
        assert.match(error.message, new RegExp(name.replace('.', '\\.')));
        assert.ok(error.hint.length > 0);
        assert.equal(error.file, `${csv ? 'csv-' : ''}${name}`);
      }
    }
    assert.equal(await tableColumns(bench, 'bad'), null);
  });

  it('loads a stream that ends without its end-of-stream marker, and refuses one cut inside a message', async () => {
    const whole = basic().batches[0]!;
    const bytes = tableToIPC(new Table([whole.slice(0, 1), whole.slice(1, 3)]), 'stream');
    const closed = bytes.subarray(0, bytes.length - 8);
    for (const csv of [false, true]) {
      const outcome = await bench.ingest(await bench.claim(`closed-${csv}.arrow`, closed), `closed_${csv}`, { remote: csv });
      assert.deepEqual(outcome, { rows: 3, attempts: 1 });
      assert.deepEqual(await rowsOf(bench, `closed_${csv}`), expectedBasic);
    }
    // Every cut that is not at a message boundary is refused as truncated, and lands nothing (a
    // file of fewer than 8 bytes is not recognisable as a stream at all).
    const boundaries = messageEnds(bytes);
    for (let cut = 8; cut < bytes.length - 8; cut += 7) {
      if (boundaries.has(cut)) continue;
      const error = expectError(await bench.ingest(await bench.claim(`cut-${cut}.arrow`, bytes.subarray(0, cut)), 'cuts'));
      assert.equal(error.code, 'ARROW_TRUNCATED', `cut at ${cut}: ${error.message}`);
    }
    assert.equal(await tableColumns(bench, 'cuts'), null);
  });

  it('loads record batches with ZSTD body compression (decompressed here; Hyper reads none)', async () => {
    // A codec that only encodes (ZSTD frames of raw blocks are valid ZSTD): enough to write the
    // file; the conformance suite covers files from real compressors.
    compressionRegistry.set(CompressionType.ZSTD, { encode: zstdRawFrame });
    let bytes: Uint8Array;
    try {
      bytes = RecordBatchStreamWriter.writeAll(basic(), { compressionType: CompressionType.ZSTD }).toUint8Array(true);
    } finally {
      compressionRegistry.set(CompressionType.ZSTD, {});
    }
    for (const csv of [false, true]) {
      const outcome = await bench.ingest(await bench.claim(`compressed-${csv}.arrow`, bytes), `compressed_${csv}`, { remote: csv });
      assert.deepEqual(outcome, { rows: 3, attempts: 1 });
      assert.deepEqual(await rowsOf(bench, `compressed_${csv}`), expectedBasic);
    }
  });

  it('creates the table from the schema of a file without rows', async () => {
    const empty = table({ id: col([] as bigint[], new Int64()), name: col([], new Utf8()) });
    assert.deepEqual(await bench.ingest(await bench.claim('empty-rows.arrow', tableToIPC(empty, 'stream')), 'no_rows'), { rows: 0, attempts: 1 });
    assert.deepEqual(await tableColumns(bench, 'no_rows'), { id: 'bigint', name: 'text' });
  });

  it('does not create a table when creating tables is disabled', async () => {
    const error = expectError(await bench.ingest(await bench.claim('nocreate.arrow', tableToIPC(basic(), 'file')), 'not_there', { createTable: false }));
    assert.equal(error.code, 'TABLE_MISSING');
    assert.equal(error.kind, 'schema');
  });

  it('loads 1M rows in many batches with an exact count (time and peak RSS logged)', async () => {
    const rows = 1_000_000;
    const perBatch = 65_536;
    const ids = new BigInt64Array(rows);
    const values = new Float64Array(rows);
    const names: string[] = new Array<string>(rows);
    const tags: string[] = new Array<string>(rows);
    const at = new BigInt64Array(rows);
    for (let i = 0; i < rows; i++) {
      ids[i] = BigInt(i);
      values[i] = i / 7;
      names[i] = `name-${i}`;
      tags[i] = `tag-${i % 100}`;
      at[i] = 1_700_000_000_000_000n + BigInt(i) * 1_000n;
    }
    const timestamps = makeVector(makeData({ type: new TimestampMicrosecond(), length: rows, nullCount: 0, data: at }));
    const inBatches = (whole: RecordBatch): Table => {
      const parts: RecordBatch[] = [];
      for (let start = 0; start < rows; start += perBatch) parts.push(whole.slice(start, Math.min(rows, start + perBatch)));
      return new Table(parts);
    };
    const big = inBatches(new Table({ id: makeVector(ids), value: makeVector(values), name: vectorFromArray(names, new Utf8()), at: timestamps }).batches[0]!);
    const dictionary = inBatches(new Table({ id: makeVector(ids), value: makeVector(values), name: vectorFromArray(tags), at: timestamps }).batches[0]!);
    const batches = big.batches;
    const variants: { label: string; bytes: () => Uint8Array; csv?: boolean }[] = [
      { label: 'stream, pass-through', bytes: () => tableToIPC(big, 'stream') },
      { label: 'file, pass-through', bytes: () => tableToIPC(big, 'file') },
      // The same data with pre-0.15 framing, which Hyper does not read: decoded and re-encoded.
      { label: 'legacy-framed stream, re-encoded', bytes: () => RecordBatchStreamWriter.writeAll(big, { writeLegacyIpcFormat: true }).toUint8Array(true) },
      { label: 'stream, re-encoded (dictionary column)', bytes: () => tableToIPC(dictionary, 'stream') },
      { label: 'file, CSV', bytes: () => tableToIPC(big, 'file'), csv: true },
    ];
    for (const [k, variant] of variants.entries()) {
      const bytes = variant.bytes();
      const file = await bench.claim(`big-${k}.arrow`, bytes);
      const name = `big_${k}`;
      const started = performance.now();
      const outcome = await bench.ingest(file, name, { remote: variant.csv ?? false });
      const ms = performance.now() - started;
      assert.deepEqual(outcome, { rows, attempts: 1 });
      assert.equal(await count(bench.pool, name), rows);
      const sums = await bench.pool.query<{ s: string }>(`SELECT SUM(id)::text AS s FROM ${name}`);
      assert.equal(sums[0]!.s, String((rows * (rows - 1)) / 2));
      console.log(
        `arrow ${variant.label}: ${rows} rows, ${batches.length} batches, ${(bytes.length / 1048576).toFixed(1)} MiB in ${ms.toFixed(0)} ms ` +
          `(${((rows / ms) * 1000).toFixed(0)} rows/s); peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`,
      );
    }
  });
});

/** `data` as a ZSTD frame of raw (stored) blocks: valid ZSTD without a compressor. */
function zstdRawFrame(data: Uint8Array): Uint8Array {
  const header = [0x28, 0xb5, 0x2f, 0xfd, 0xa0, data.length & 0xff, (data.length >> 8) & 0xff, (data.length >> 16) & 0xff, (data.length >>> 24) & 0xff];
  const parts: Uint8Array[] = [Uint8Array.from(header)];
  let at = 0;
  do {
    const n = Math.min(131072, data.length - at);
    const block = (n << 3) | (at + n >= data.length ? 1 : 0);
    parts.push(Uint8Array.of(block & 0xff, (block >> 8) & 0xff, (block >> 16) & 0xff), data.subarray(at, at + n));
    at += n;
  } while (at < data.length);
  const out = new Uint8Array(parts.reduce((total, p) => total + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** The byte offsets where an IPC stream's messages end (a cut there is a complete, shorter stream). */
function messageEnds(bytes: Uint8Array): Set<number> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ends = new Set<number>();
  let at = 0;
  while (at + 8 <= bytes.length) {
    const length = view.getInt32(at + 4, true);
    if (length === 0) break;
    // The message's body length: the flatbuffer Message table's bodyLength, read through apache-arrow.
    const metadata = bytes.subarray(at + 8, at + 8 + length);
    const body = Number(Message.decode(metadata).bodyLength);
    at += 8 + length + body;
    ends.add(at);
  }
  return ends;
}

describe('arrow body codecs (unit)', () => {
  const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
  /** An LZ4 frame: magic, FLG, BD, [content size], header checksum byte, blocks, end mark, [checksums]. */
  function lz4Frame(blocks: { data: number[]; raw?: boolean }[], flags: { contentSize?: number; blockChecksum?: boolean; contentChecksum?: boolean } = {}): Uint8Array {
    const out: number[] = [0x04, 0x22, 0x4d, 0x18];
    const flg = 0x40 | (flags.blockChecksum ? 0x10 : 0) | (flags.contentSize !== undefined ? 0x08 : 0) | (flags.contentChecksum ? 0x04 : 0);
    out.push(flg, 0x40);
    if (flags.contentSize !== undefined) for (let k = 0; k < 8; k++) out.push(k < 4 ? (flags.contentSize >>> (8 * k)) & 0xff : 0);
    out.push(0xaa); // header checksum (not verified)
    for (const block of blocks) {
      const size = block.data.length | (block.raw ? 0x80000000 : 0);
      out.push(size & 0xff, (size >>> 8) & 0xff, (size >>> 16) & 0xff, (size >>> 24) & 0xff, ...block.data);
      if (flags.blockChecksum) out.push(1, 2, 3, 4);
    }
    out.push(0, 0, 0, 0);
    if (flags.contentChecksum) out.push(5, 6, 7, 8);
    return Uint8Array.from(out);
  }
  const ascii = (s: string): number[] => Array.from(new TextEncoder().encode(s));
  // Block 1 stored as is; block 2 copies 8 bytes from block 1 (linked blocks), then one literal.
  const linked = [{ data: ascii('abcdefgh'), raw: true }, { data: [0x04, 8, 0, 0x10, ...ascii('z')] }];

  it('decodes LZ4 frames: stored and compressed blocks, matches into the previous block, optional sizes and checksums', () => {
    assert.equal(text(decompress('lz4', lz4Frame(linked), 17, 'b')), 'abcdefghabcdefghz');
    assert.equal(text(decompress('lz4', lz4Frame(linked, { contentSize: 17, blockChecksum: true, contentChecksum: true }), 17, 'b')), 'abcdefghabcdefghz');
    // A run: a match overlapping the bytes it writes.
    assert.equal(text(decompress('lz4', lz4Frame([{ data: [0x1f, ...ascii('a'), 1, 0, 5, 0x00] }]), 25, 'b')), 'a'.repeat(25));
  });

  it('refuses LZ4 frames that do not fit what the buffer announced, or are cut or damaged', () => {
    const refusals: [Uint8Array, number, RegExp][] = [
      [lz4Frame(linked), 16, /holds more than the 16 bytes announced/],
      [lz4Frame(linked), 18, /decodes to 17 bytes, not the 18/],
      [lz4Frame(linked).subarray(0, 20), 17, /ends early/],
      [lz4Frame([{ data: [0x04, 9, 0] }]), 8, /match offset \(9\) before the start/],
      [Uint8Array.of(1, 2, 3, 4, 0x40, 0x40, 0), 1, /magic number/],
      [Uint8Array.of(0x04, 0x22, 0x4d, 0x18, 0x80, 0x40, 0), 1, /version 2/],
    ];
    for (const [frame, size, message] of refusals) {
      assert.throws(() => decompress('lz4', frame, size, 'buffer 3'), (error: unknown) => error instanceof IpcProblem && error.code === 'ARROW_CORRUPT' && /^buffer 3: the LZ4 frame/.test(error.message) && message.test(error.message));
    }
  });

  it('checks a ZSTD frame header before decoding: its content size, or its window', () => {
    // Single segment, 1-byte content size 200: more than the 100 announced.
    const tooBig = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x20, 200, 0, 0, 0);
    assert.throws(() => decompress('zstd', tooBig, 100, 'b'), /holds 200 bytes, more than the 100/);
    // No content size, a window of 2^(10+31) bytes.
    const hugeWindow = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x00, 31 << 3, 0, 0, 0);
    assert.throws(() => decompress('zstd', hugeWindow, 100, 'b'), /asks for a \d+-byte window for 100 bytes/);
    assert.throws(() => decompress('zstd', Uint8Array.of(1, 2, 3, 4, 5, 6), 10, 'b'), /magic number/);
    assert.equal(decompress('zstd', zstdRawFrame(new TextEncoder().encode('hello')), 5, 'b').length, 5);
  });
});
