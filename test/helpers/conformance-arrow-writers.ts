/**
 * Arrow files as other writers make them, made at test time: apache-arrow JS (one huge batch,
 * many batches, dictionaries, nested, map, large offsets, all-null, no batches, many types, with
 * LZ4 and ZSTD body compression from real compressors), arrow-rs (through parquet-wasm: Parquet
 * written and read back by arrow-rs, then written as an IPC stream by arrow-rs).
 */
import {
  Binary,
  BinaryView,
  Bool,
  compressionRegistry,
  CompressionType,
  DateDay,
  Decimal,
  Dictionary,
  DurationMillisecond,
  Field,
  IntervalDayTime,
  IntervalMonthDayNano,
  IntervalYearMonth,
  FixedSizeBinary,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  LargeBinary,
  LargeList,
  LargeUtf8,
  List,
  makeData,
  makeVector,
  Map_,
  Null,
  type RecordBatch,
  RecordBatchStreamWriter,
  Struct,
  Table,
  tableToIPC,
  TimeMicrosecond,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  Utf8View,
  vectorFromArray,
  type DataType,
  type Vector,
} from 'apache-arrow';
import { compress as lz4Frame } from 'lz4js';
import * as parquetWasm from 'parquet-wasm';
import { ZstdCodec } from 'zstd-codec';
import { compressStream, joinStream, splitStream, streamToFile, withDictionaryId } from './conformance-arrow-ipc.ts';

const col = (values: readonly unknown[], type: DataType): Vector => vectorFromArray(values, type);

/** `n` rows of id, value, name, at (µs timestamps), deterministic. */
export function plainTable(n: number): Table {
  const ids = new Int32Array(n);
  const values = new Float64Array(n);
  const at = new BigInt64Array(n);
  const names: (string | null)[] = new Array(n);
  for (let i = 0; i < n; i++) {
    ids[i] = i;
    values[i] = i / 7;
    at[i] = 1_700_000_000_000_000n + BigInt(i) * 1_001n;
    names[i] = i % 13 === 0 ? null : `name-${i}-${'x'.repeat(i % 5)}`;
  }
  return new Table({
    id: makeVector(ids),
    value: makeVector(values),
    name: vectorFromArray(names, new Utf8()),
    at: makeVector(makeData({ type: new TimestampMicrosecond(), length: n, nullCount: 0, data: at })),
  });
}

/** `n` rows in one batch whose columns Hyper does not take as they are (dictionary, list, nanoseconds, large text). */
export function rewrittenTable(n: number): Table {
  const tags: (string | null)[] = new Array(n);
  const lists: (number[] | null)[] = new Array(n);
  const texts: string[] = new Array(n);
  const nanos = new BigInt64Array(n);
  for (let i = 0; i < n; i++) {
    tags[i] = i % 11 === 0 ? null : `tag-${i % 97}`;
    lists[i] = i % 17 === 0 ? null : [i, -i];
    texts[i] = `row ${i}`;
    nanos[i] = 1_700_000_000_123_456_789n + BigInt(i) * 1_000_001n;
  }
  return new Table({
    id: makeVector(Int32Array.from({ length: n }, (_, i) => i)),
    tag: vectorFromArray(tags),
    pair: vectorFromArray(lists, new List(new Field('item', new Int32(), true))),
    text: vectorFromArray(texts, new LargeUtf8()),
    at: makeVector(makeData({ type: new TimestampNanosecond(), length: n, nullCount: 0, data: nanos })),
  });
}

/** The same rows cut into batches of `size`. */
export function inBatches(table: Table, size: number): Table {
  if (table.batches.length !== 1) throw new Error('inBatches takes a table of one batch');
  const whole = table.batches[0]!;
  const parts: RecordBatch[] = [];
  for (let start = 0; start < whole.numRows; start += size) parts.push(whole.slice(start, Math.min(whole.numRows, start + size)));
  return new Table(parts);
}

function monthDayNano(values: readonly [number, number, bigint][]): Int32Array {
  const out = new Int32Array(values.length * 4);
  const view = new DataView(out.buffer);
  values.forEach(([months, days, nanos], i) => {
    view.setInt32(i * 16, months, true);
    view.setInt32(i * 16 + 4, days, true);
    view.setBigInt64(i * 16 + 8, nanos, true);
  });
  return out;
}

function decimal256(values: readonly bigint[]): Uint32Array {
  const words = new Uint32Array(values.length * 8);
  values.forEach((value, row) => {
    const twos = value < 0n ? (1n << 256n) + value : value;
    for (let w = 0; w < 8; w++) words[row * 8 + w] = Number((twos >> BigInt(32 * w)) & 0xffffffffn);
  });
  return words;
}

/** A column per common type, 4 rows (the last all null). */
export function manyTypes(): Table {
  const decimal = makeVector(
    makeData({
      type: new Decimal(2, 10, 128),
      length: 4,
      nullCount: 1,
      nullBitmap: Uint8Array.of(0b0111),
      data: new Uint32Array([12345, 0, 0, 0, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 7, 0, 0, 0, 0, 0, 0, 0]),
    }),
  );
  const nanos = makeVector(
    makeData({
      type: new TimestampNanosecond('UTC'),
      length: 4,
      nullCount: 1,
      nullBitmap: Uint8Array.of(0b0111),
      data: BigInt64Array.of(1709210096789012345n, -1n, 0n, 0n),
    }),
  );
  const time = makeVector(
    makeData({
      type: new TimeMicrosecond(),
      length: 4,
      nullCount: 1,
      nullBitmap: Uint8Array.of(0b0111),
      data: BigInt64Array.of(3661001002n, 0n, 86399999999n, 0n),
    }),
  );
  return new Table({
    i8: col([-128, 127, 0, null], new Int8()),
    i16: col([-32768, 32767, 1, null], new Int16()),
    i32: col([-2147483648, 2147483647, 2, null], new Int32()),
    i64: col([-9223372036854775808n, 9223372036854775807n, 3n, null], new Int64()),
    u8: col([0, 255, 4, null], new Uint8()),
    u16: col([0, 65535, 5, null], new Uint16()),
    u32: col([0, 4294967295, 6, null], new Uint32()),
    u64: col([0n, 18446744073709551615n, 7n, null], new Uint64()),
    f32: col([1.5, -0.1, 3.25, null], new Float32()),
    f64: col([0.1, -1e300, Number.POSITIVE_INFINITY, null], new Float64()),
    dec: decimal,
    ok: col([true, false, true, null], new Bool()),
    s: col(['x,"y"\nz', '', 'ünïcödé', null], new Utf8()),
    bin: col([Uint8Array.of(0, 255), new Uint8Array(0), Uint8Array.of(1, 2, 3), null], new Binary()),
    fbin: col([Uint8Array.of(0xab, 0xcd), Uint8Array.of(0, 1), Uint8Array.of(2, 3), null], new FixedSizeBinary(2)),
    day: col([new Date(Date.UTC(2024, 1, 29)), new Date(Date.UTC(1969, 11, 31)), new Date(0), null], new DateDay()),
    ts_ms: col([new Date(Date.UTC(2024, 1, 29, 12, 34, 56, 789)), new Date(-1), new Date(0), null], new TimestampMillisecond()),
    ts_ns: nanos,
    t_us: time,
    dict: vectorFromArray(['red', 'green', 'red', null]),
    ym: makeVector(
      makeData({
        type: new IntervalYearMonth(),
        length: 4,
        nullCount: 1,
        nullBitmap: Uint8Array.of(0b0111),
        data: Int32Array.of(14, -1, 0, 0),
      }),
    ),
    dt: makeVector(
      makeData({
        type: new IntervalDayTime(),
        length: 4,
        nullCount: 1,
        nullBitmap: Uint8Array.of(0b0111),
        data: Int32Array.of(3, 14_706_789, -2, -1500, 0, 1, 0, 0),
      }),
    ),
    mdn: makeVector(
      makeData({
        type: new IntervalMonthDayNano(),
        length: 4,
        nullCount: 1,
        nullBitmap: Uint8Array.of(0b0111),
        data: monthDayNano([
          [1, 2, 3_000_001_000n],
          [0, -1, -1_500_000n],
          [-3, 0, 86_400_000_001_999n],
          [0, 0, 0n],
        ]),
      }),
    ),
    took: col([90061001n, -5n, 0n, null], new DurationMillisecond()),
    wide: makeVector(
      makeData({
        type: new Decimal(3, 45, 256),
        length: 4,
        nullCount: 1,
        nullBitmap: Uint8Array.of(0b0111),
        data: decimal256([10n ** 44n + 1n, -123456n, 0n, 0n]),
      }),
    ),
  });
}

export function nestedTable(): Table {
  const item = new Field('item', new Int32(), true);
  const struct = new Struct([new Field('a', new Int32(), true), new Field('b', new Utf8(), true)]);
  const entries = new Field(
    'entries',
    new Struct<{ key: Utf8; value: Int32 }>([new Field('key', new Utf8(), false), new Field('value', new Int32(), true)]),
    false,
  );
  return new Table({
    id: col([1, 2, 3], new Int32()),
    list: col([[1, 2], [], null], new List(item)),
    struct: col([{ a: 1, b: 'x"y' }, { a: null, b: null }, null], struct),
    list_of_struct: col([[{ a: 5, b: 'p' }], null, []], new List(new Field('item', struct, true))),
    map: col(
      [
        new Map([
          ['k', 1],
          ['l', null],
        ]),
        new Map<string, number>(),
        null,
      ],
      new Map_<Utf8, Int32>(entries),
    ),
  });
}

export function largeOffsetsTable(): Table {
  return new Table({
    id: col([1, 2, 3], new Int32()),
    ls: col(['large', '', null], new LargeUtf8()),
    lb: col([Uint8Array.of(1), Uint8Array.of(2, 3), null], new LargeBinary()),
    ll: col([[1, 2, 3], null, []], new LargeList(new Field('item', new Int32(), true))),
  });
}

export function allNullTable(): Table {
  return new Table({
    id: col([1, 2, 3], new Int32()),
    n_int: col([null, null, null], new Int64()),
    n_text: col([null, null, null], new Utf8()),
    n_null: col([null, null, null], new Null()),
  });
}

/** Dictionary columns over several batches (the writer sends a new dictionary when one changes). */
export function dictionaryTable(): Table {
  const type = new Dictionary(new Utf8(), new Int32());
  const batches = [
    ['a', 'b', null],
    ['b', 'c', 'c'],
    ['zz', null, 'a'],
  ].map((tags, k) => new Table({ id: col([k * 3, k * 3 + 1, k * 3 + 2], new Int32()), tag: vectorFromArray(tags, type) }).batches[0]!);
  return new Table(batches);
}

/** One dictionary for the whole column, the rows cut into three batches (as the file format needs). */
export function sharedDictionaryTable(): Table {
  return inBatches(
    new Table({
      id: col([0, 1, 2, 3, 4, 5, 6, 7, 8], new Int32()),
      tag: vectorFromArray(['a', 'b', null, 'b', 'c', 'c', 'zz', null, 'a']),
    }),
    3,
  );
}

export function ipc(table: Table, format: 'file' | 'stream'): Uint8Array {
  return tableToIPC(table, format);
}

let zstdSimple: Promise<{ compress(data: Uint8Array, level?: number): Uint8Array }> | undefined;
function zstd(): Promise<{ compress(data: Uint8Array, level?: number): Uint8Array }> {
  zstdSimple ??= new Promise((resolve) => ZstdCodec.run((z) => resolve(new z.Simple())));
  return zstdSimple;
}

/** The table written with LZ4_FRAME or ZSTD body compression, by real compressors (lz4js, zstd-codec). */
export async function compressedIpc(table: Table, codec: 'lz4' | 'zstd', format: 'file' | 'stream'): Promise<Uint8Array> {
  const simple = codec === 'zstd' ? await zstd() : undefined;
  const stream = compressStream(
    tableToIPC(table, 'stream'),
    codec,
    codec === 'lz4' ? (data) => lz4Frame(data) : (data) => simple!.compress(data, 3),
  );
  return format === 'file' ? streamToFile(stream) : stream;
}

/** The table as apache-arrow JS's own writer compresses it (LZ4_FRAME by lz4js): each buffer's prefix holds its compressed size. */
export function apacheArrowCompressed(table: Table): Uint8Array {
  compressionRegistry.set(CompressionType.LZ4_FRAME, { encode: (data) => lz4Frame(data) });
  try {
    return RecordBatchStreamWriter.writeAll(table, { compressionType: CompressionType.LZ4_FRAME }).toUint8Array(true);
  } finally {
    compressionRegistry.set(CompressionType.LZ4_FRAME, {});
  }
}

export function viewTable(): Table {
  return new Table({
    id: col([1, 2, 3], new Int32()),
    sv: col(['short', 'a string longer than twelve bytes', null], new Utf8View()),
    bv: col([Uint8Array.of(1, 2), null, new Uint8Array(20).fill(7)], new BinaryView()),
  });
}

/**
 * A stream with a delta dictionary: the first batch's dictionary is ['a', 'b']; the second batch
 * sends ['c'] as a delta and uses index 2 ('c') and 0 ('a'). apache-arrow's writer sends whole
 * dictionaries again, so the delta is assembled from two streams here. Returns the stream and
 * the table it means.
 */
export function deltaDictionaryStream(): { bytes: Uint8Array; table: Table } {
  const type = new Dictionary(new Utf8(), new Int32(), 0);
  const one = splitStream(tableToIPC(new Table({ id: col([1, 2], new Int32()), tag: vectorFromArray(['a', 'b'], type) }), 'stream'));
  const two = splitStream(tableToIPC(new Table({ id: col([3, 4], new Int32()), tag: vectorFromArray(['c', 'c'], type) }), 'stream'));
  // The second batch's indices (buffer 3: id validity, id values, tag validity, tag indices) all point at 'c': 2 after the delta, then 'a'.
  const batch = two[2]!;
  const body = batch.body.slice();
  const indices = (batch.message.header() as { buffers: { offset: number }[] }).buffers[3]!;
  new DataView(body.buffer).setInt32(indices.offset, 2, true);
  new DataView(body.buffer).setInt32(indices.offset + 4, 0, true);
  const bytes = joinStream([
    ...one.map((m) => ({ metadata: m.metadata, body: m.body })),
    { metadata: withDictionaryId(two[1]!.message, 0, true), body: two[1]!.body },
    { metadata: batch.metadata, body },
  ]);
  const table = new Table({ id: col([1, 2, 3, 4], new Int32()), tag: vectorFromArray(['a', 'b', 'c', 'a'], new Utf8()) });
  return { bytes, table };
}

/** The table as arrow-rs writes it: through a Parquet file written and read by arrow-rs, out as an IPC stream. */
export function arrowRsStream(table: Table): Uint8Array {
  const wasmTable = parquetWasm.Table.fromIPCStream(tableToIPC(table, 'stream'));
  const parquet = parquetWasm.writeParquet(wasmTable);
  return parquetWasm.readParquet(parquet).intoIPCStream();
}
