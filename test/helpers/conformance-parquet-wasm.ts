/**
 * The Parquet conformance suite's files written by arrow-rs through parquet-wasm (`writeParquet`
 * with its `WriterProperties`): each compression, encoding and page version it offers, over the
 * types it maps, some rewritten by arrow-rs from DuckDB's files. The other writers' are in
 * conformance-parquet-cases.ts.
 */
import { readFile, writeFile } from 'node:fs/promises';
import {
  Binary,
  Bool,
  DateDay,
  Field,
  Float16,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  List,
  Struct,
  Table,
  tableToIPC,
  TimeMillisecond,
  TimeNanosecond,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { Compression, Encoding, readParquet, Table as WasmTable, WriterPropertiesBuilder, WriterVersion, writeParquet } from 'parquet-wasm';
import { type Expectation, LANDS, type WriterCase } from './conformance-parquet-cases.ts';

const WASM_ROWS = 200;
const nth = <T>(i: number, every: number, value: T): T | null => (i % every === 0 ? null : value);

/**
 * Columns hyperd's reader does not take (unsigned 64-bit, lists, structs), and unsigned 32-bit
 * ones, which arrow-rs delta-encodes in v2 pages (so hyperd would be passed over): left out of
 * `flat` files.
 */
const NOT_FOR_HYPERD = new Set(['u64', 'l', 'st', 'u32']);

/**
 * An Arrow table of the types arrow-rs maps to Parquet, with nulls, as an IPC stream. `flat`:
 * without the columns hyperd cannot read, so that on its path hyperd reads the file itself.
 */
function arrowStream(flat: boolean): Uint8Array {
  const rows = Array.from({ length: WASM_ROWS }, (_, i) => i);
  const base = Date.UTC(2024, 0, 1);
  const columns = {
    id: vectorFromArray(rows, new Int32()),
    i8: vectorFromArray(
      rows.map((i) => nth(i, 7, (i % 256) - 128)),
      new Int8(),
    ),
    i16: vectorFromArray(
      rows.map((i) => nth(i, 6, i * 163 - 16000)),
      new Int16(),
    ),
    i64: vectorFromArray(
      rows.map((i) => nth(i, 5, BigInt(i - 100) * 46116860184273879n)),
      new Int64(),
    ),
    u8: vectorFromArray(
      rows.map((i) => nth(i, 8, i % 256)),
      new Uint8(),
    ),
    u16: vectorFromArray(
      rows.map((i) => nth(i, 9, i * 327)),
      new Uint16(),
    ),
    u32: vectorFromArray(
      rows.map((i) => nth(i, 10, 4294967295 - i)),
      new Uint32(),
    ),
    u64: vectorFromArray(
      rows.map((i) => nth(i, 11, 18446744073709551615n - BigInt(i))),
      new Uint64(),
    ),
    f32: vectorFromArray(
      rows.map((i) => nth(i, 4, (i - 100) / 3)),
      new Float32(),
    ),
    f64: vectorFromArray(
      rows.map((i) => nth(i, 3, i === 1 ? Number.NaN : i === 2 ? -Infinity : (i - 100) / 7)),
      new Float64(),
    ),
    s: vectorFromArray(
      rows.map((i) => nth(i, 5, `s${i % 13}, "${i}"`)),
      new Utf8(),
    ),
    bin: vectorFromArray(
      rows.map((i) => nth(i, 6, Uint8Array.from([0, 255, i % 256]))),
      new Binary(),
    ),
    b: vectorFromArray(
      rows.map((i) => nth(i, 7, i % 3 === 0)),
      new Bool(),
    ),
    d: vectorFromArray(
      rows.map((i) => nth(i, 8, new Date(base + (i - 100) * 86_400_000 * 37))),
      new DateDay(),
    ),
    tms: vectorFromArray(
      rows.map((i) => nth(i, 9, base + i * 3_600_123)),
      new TimestampMillisecond(),
    ),
    tus: vectorFromArray(
      rows.map((i) => nth(i, 10, base + i * 61_000)),
      new TimestampMicrosecond('UTC'),
    ),
    tns: vectorFromArray(
      rows.map((i) => nth(i, 11, base + i * 1_000)),
      new TimestampNanosecond(),
    ),
    tmms: vectorFromArray(
      rows.map((i) => nth(i, 6, i * 431_001)),
      new TimeMillisecond(),
    ),
    tmns: vectorFromArray(
      rows.map((i) => nth(i, 7, BigInt(i) * 431_001_234_567n)),
      new TimeNanosecond(),
    ),
    f16: vectorFromArray(
      rows.map((i) => nth(i, 5, (i - 100) / 4)),
      new Float16(),
    ),
    l: vectorFromArray(
      rows.map((i) => nth(i, 4, i % 5 === 1 ? [] : [i, i + 1])),
      new List(new Field('item', new Int32(), true)),
    ),
    st: vectorFromArray(
      rows.map((i) => nth(i, 6, { a: i, b: `b${i}` })),
      new Struct([new Field('a', new Int32(), true), new Field('b', new Utf8(), true)]),
    ),
  };
  const kept = Object.fromEntries(Object.entries(columns).filter(([name]) => !flat || !NOT_FOR_HYPERD.has(name)));
  return tableToIPC(new Table(kept), 'stream');
}

interface WasmOptions {
  readonly compression: Compression;
  readonly version: WriterVersion;
  readonly dictionary: boolean;
  /** Per-column encodings (dictionary off), e.g. DELTA_BINARY_PACKED for integers. */
  readonly encodings?: Readonly<Record<string, Encoding>>;
  /** Only columns hyperd reads (see `arrowStream`). */
  readonly flat?: boolean;
}

/** arrow-rs reads the file and writes it again uncompressed (see `WriterCase.judgeVia`). */
async function rewrittenByArrowRs(path: string): Promise<string> {
  const copy = `${path}.judge.parquet`;
  const table = readParquet(new Uint8Array(await readFile(path)));
  await writeFile(copy, writeParquet(table, new WriterPropertiesBuilder().setCompression(Compression.UNCOMPRESSED).build()));
  return copy;
}

function wasm(name: string, options: WasmOptions, expect: Expectation = LANDS): WriterCase {
  return {
    name: `arrow-rs ${name}`,
    expect,
    ...(options.compression === Compression.LZ4 ? { judgeVia: rewrittenByArrowRs } : {}),
    write: async (path) => {
      let builder = new WriterPropertiesBuilder()
        .setCompression(options.compression)
        .setWriterVersion(options.version)
        .setDictionaryEnabled(options.dictionary)
        .setMaxRowGroupSize(64);
      for (const [column, encoding] of Object.entries(options.encodings ?? {})) builder = builder.setColumnEncoding(column, encoding);
      const table = WasmTable.fromIPCStream(arrowStream(options.flat ?? false));
      await writeFile(path, writeParquet(table, builder.build()));
    },
  };
}

export function parquetWasmCases(): WriterCase[] {
  const cases: WriterCase[] = [];
  const codecs: [string, Compression][] = [
    ['uncompressed', Compression.UNCOMPRESSED],
    ['snappy', Compression.SNAPPY],
    ['gzip', Compression.GZIP],
    ['brotli', Compression.BROTLI],
    ['lz4 (Hadoop framing)', Compression.LZ4],
    ['zstd', Compression.ZSTD],
    ['lz4 raw', Compression.LZ4_RAW],
  ];
  for (const [label, compression] of codecs) {
    cases.push(
      wasm(`${label}, page v2, dictionary, columns hyperd reads`, { compression, version: WriterVersion.V2, dictionary: true, flat: true }),
    );
    for (const [v, version] of [
      ['page v1', WriterVersion.V1],
      ['page v2', WriterVersion.V2],
    ] as const) {
      cases.push(wasm(`${label}, ${v}, dictionary`, { compression, version, dictionary: true }));
    }
  }
  for (const [v, version] of [
    ['page v1', WriterVersion.V1],
    ['page v2', WriterVersion.V2],
  ] as const) {
    cases.push(wasm(`plain, ${v}, no dictionary`, { compression: Compression.SNAPPY, version, dictionary: false }));
    for (const flat of [false, true]) {
      cases.push(
        wasm(`delta, byte-stream-split and RLE encodings, ${v}${flat ? ', columns hyperd reads' : ''}`, {
          flat,
          compression: Compression.ZSTD,
          version,
          dictionary: false,
          encodings: {
            id: Encoding.DELTA_BINARY_PACKED,
            i64: Encoding.DELTA_BINARY_PACKED,
            u32: Encoding.DELTA_BINARY_PACKED,
            s: Encoding.DELTA_BYTE_ARRAY,
            bin: Encoding.DELTA_LENGTH_BYTE_ARRAY,
            f32: Encoding.BYTE_STREAM_SPLIT,
            f64: Encoding.BYTE_STREAM_SPLIT,
            ...(version === WriterVersion.V2 ? { b: Encoding.RLE } : {}),
          },
        }),
      );
    }
  }
  return cases;
}
