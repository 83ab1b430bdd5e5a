/**
 * The files of the Parquet conformance suite, each written at test time by another writer:
 * DuckDB (`COPY ... TO ... (FORMAT parquet, ...)`), arrow-rs through parquet-wasm
 * (`writeParquet` with its `WriterProperties`) and hyperd (`COPY ... TO ... WITH (FORMAT parquet)`).
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
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
import type { DbPool } from '../../src/types.ts';
import type { JudgedFile } from './conformance-parquet.ts';

/** What a case must do: land with the file's rows and values, or be refused as named. */
export type Expectation =
  | { readonly lands: true }
  | { readonly refused: { readonly kind: string; readonly code: string; readonly column?: string; readonly mentions: RegExp } };

export interface WriterCase {
  readonly name: string;
  readonly write: (path: string) => Promise<void>;
  readonly expect: Expectation;
  /**
   * For a file DuckDB cannot read (the old Hadoop LZ4 framing): the writer's own reading of it,
   * written again uncompressed beside it, for DuckDB to judge.
   */
  readonly judgeVia?: (path: string) => Promise<string>;
  /** For a file no reader here can judge whole: the rows it holds, stated by the case. */
  readonly stated?: JudgedFile;
}

export const LANDS: Expectation = { lands: true };

// ---------------------------------------------------------------------------------------------
// DuckDB
// ---------------------------------------------------------------------------------------------

/** Every 5th..11th row of a column is NULL (a different row per column). */
function withNulls(columns: readonly (readonly [string, string])[]): string {
  return columns.map(([name, expr], i) => `CASE WHEN (i + ${i}) % ${5 + (i % 7)} = 0 THEN NULL ELSE ${expr} END AS ${name}`).join(',\n  ');
}

const DUCK_SCALARS: readonly (readonly [string, string])[] = [
  ['i8', `((i % 256) - 128)::TINYINT`],
  ['i16', `((i * 331) % 65536 - 32768)::SMALLINT`],
  ['i32', `((i - 150)::BIGINT * 14316557)::INTEGER`],
  ['i64', `((i - 150)::BIGINT * 30744573456182584)`],
  ['u8', `(i % 256)::UTINYINT`],
  ['u16', `(i * 219 % 65536)::USMALLINT`],
  ['u32', `(4294967295 - i * 1000)::UINTEGER`],
  ['u64', `(18446744073709551615 - i)::UBIGINT`],
  ['d4', `((i - 150) / 10)::DECIMAL(4,1)`],
  ['d9', `((i - 150) * 1.25)::DECIMAL(9,2)`],
  ['d18', `((i - 150) * 123456789.123)::DECIMAL(18,3)`],
  ['d38', `((i - 150) * 1234567890123456789.0123456789)::DECIMAL(38,10)`],
  ['f32', `((i - 150) / 3)::FLOAT`],
  ['f64', `((i - 150) / 7)::DOUBLE`],
  ['b', `i % 3 = 0`],
  ['s', `'text ' || i || CASE WHEN i % 4 = 0 THEN ', "quoted"' ELSE '' END`],
  ['blob', `'\\x00\\xFF'::BLOB || encode(i::VARCHAR)`],
  ['dt', `DATE '1969-12-01' + i * 97`],
  ['tm', `TIME '00:00:00' + INTERVAL (i * 287) SECOND + INTERVAL (i) MICROSECOND`],
  ['ttz', `(TIME '00:00:00' + INTERVAL (i * 101) SECOND)::TIMETZ`],
  ['ts', `TIMESTAMP '1960-01-01 00:00:00.123456' + INTERVAL (i * 97) HOUR`],
  ['ts_s', `(TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (i) MINUTE)::TIMESTAMP_S`],
  ['ts_ms', `(TIMESTAMP '2024-01-01 00:00:00.123' + INTERVAL (i) MINUTE)::TIMESTAMP_MS`],
  ['ts_ns', `(TIMESTAMP '2024-01-01 00:00:00.123456' + INTERVAL (i) MINUTE)::TIMESTAMP_NS + INTERVAL (i) MICROSECOND`],
  ['tstz', `TIMESTAMPTZ '2000-02-29 12:00:00.5+00' + INTERVAL (i * 13) HOUR`],
  ['u', `('00000000-0000-4000-8000-' || lpad(i::VARCHAR, 12, '0'))::UUID`],
  ['e', `('c' || (i % 3))::ENUM('c0', 'c1', 'c2')`],
];

const DUCK_NESTED: readonly (readonly [string, string])[] = [
  ['li', `CASE WHEN i % 4 = 1 THEN [] ELSE [i, i + 1, NULL] END`],
  ['ls', `['a' || i, NULL, 'x,"y"']`],
  ['st', `{'x': i, 'y': 'v' || i, 'z': [i, -i]}`],
  ['mp', `MAP {'k' || i: i, 'k' || (i + 1): NULL}`],
  ['lst', `[{'a': i, 'b': 'b' || i}]`],
  ['ll', `[[i], [i, i], []]`],
  ['ld', `[DATE '2024-01-01' + i]`],
  ['lts', `[TIMESTAMP '2024-01-01 00:00:00' + INTERVAL (i) SECOND]`],
  ['ldec', `[(i * 1.5)::DECIMAL(9,2)]`],
  ['le', `[('c' || (i % 3))::ENUM('c0', 'c1', 'c2')]`],
];

function duck(duckdb: () => DuckDBConnection, name: string, select: string, options: string, expect: Expectation = LANDS): WriterCase {
  return {
    name: `duckdb ${name}`,
    expect,
    write: async (path) => {
      await duckdb().run(`COPY (${select}) TO '${path}' (FORMAT parquet${options ? `, ${options}` : ''})`);
    },
  };
}

export function duckdbCases(duckdb: () => DuckDBConnection): WriterCase[] {
  const scalars = `SELECT i AS id,\n  ${withNulls(DUCK_SCALARS)}\nFROM (SELECT range::INTEGER AS i FROM range(0, 300))`;
  const nested = `SELECT i AS id,\n  ${withNulls(DUCK_NESTED)}\nFROM (SELECT range::INTEGER AS i FROM range(0, 120))`;
  const mixed =
    `SELECT i AS id, 'name ' || (i % 17) AS name, (i * 0.37)::DOUBLE AS v, i % 2 = 0 AS flag, DATE '2024-01-01' + (i % 400) ` +
    `AS day, (i * 1.05)::DECIMAL(12,2) AS amount FROM (SELECT range::INTEGER AS i FROM range(0, 3000))`;
  // Without the columns hyperd cannot read, so that on its path hyperd reads these files itself.
  const serverReadable =
    `SELECT i AS id,\n  ${withNulls(DUCK_SCALARS.filter(([name]) => !['u32', 'u64', 'u'].includes(name)))}\nFROM (SELECT ` +
    `range::INTEGER AS i FROM range(0, 300))`;
  const cases: WriterCase[] = [
    duck(duckdb, 'every scalar type, v1', scalars, `PARQUET_VERSION v1, ROW_GROUP_SIZE 128`),
    duck(duckdb, 'every scalar type hyperd reads, v1', serverReadable, `PARQUET_VERSION v1`),
    duck(duckdb, 'every scalar type hyperd reads, v2', serverReadable, `PARQUET_VERSION v2`),
    duck(
      duckdb,
      'unsigned 32-bit values, plain',
      `SELECT i AS id, (4294967295 - i * 1000)::UINTEGER AS u32 FROM (SELECT range::INTEGER AS i FROM range(0, 100))`,
      `PARQUET_VERSION v1`,
    ),
    duck(
      duckdb,
      'unsigned 32-bit values, delta-encoded',
      `SELECT i AS id, (4294967295 - i * 1000)::UINTEGER AS u32 FROM (SELECT range::INTEGER AS i FROM range(0, 100))`,
      `PARQUET_VERSION v2`,
    ),
    duck(duckdb, 'every scalar type, v2 (delta encodings)', scalars, `PARQUET_VERSION v2, ROW_GROUP_SIZE 128`),
    duck(duckdb, 'lists, structs, maps, v1', nested, `PARQUET_VERSION v1`),
    duck(duckdb, 'lists, structs, maps, v2', nested, `PARQUET_VERSION v2, ROW_GROUP_SIZE 50`),
    duck(
      duckdb,
      'wide integers and bit strings',
      `SELECT i AS id, (i::HUGEINT * 170141183460469231731687303715884105) AS h, i::UHUGEINT AS uh, (i - 5)::VARINT AS vi, ` +
        `('0101' || (i % 2)::VARCHAR)::BIT AS bits FROM (SELECT range::INTEGER AS i FROM range(0, 20))`,
      '',
    ),
    duck(
      duckdb,
      'all-null columns',
      `SELECT i AS id, NULL::INTEGER AS n_int, NULL::VARCHAR AS n_text, NULL AS n_null, NULL::DECIMAL(20,2) AS n_dec, ` +
        `NULL::INTEGER[] AS n_list FROM (SELECT range::INTEGER AS i FROM range(0, 40))`,
      '',
    ),
    duck(
      duckdb,
      'no rows (zero row groups)',
      `SELECT i AS id, 'x' AS s FROM (SELECT range::INTEGER AS i FROM range(0, 10)) WHERE false`,
      '',
    ),
    duck(
      duckdb,
      'strings CSV and COPY find awkward',
      `SELECT * FROM (VALUES (1, 'a,b'), (2, 'say "hi"'), (3, E'two\\nlines\\r'), (4, '\\.'), (5, ''), (6, NULL), (7, ` +
        `'ünï©ødé 🚀'), (8, '\\N'), (9, ' padded ')) t(id, s)`,
      '',
    ),
    duck(
      duckdb,
      'long dictionary strings, 10 row groups',
      `SELECT i AS id, repeat('x', 200 + i % 50) || (i % 30) AS s FROM (SELECT range::INTEGER AS i FROM range(0, 10000))`,
      `ROW_GROUP_SIZE 1000`,
    ),
    duck(
      duckdb,
      'intervals',
      `SELECT i AS id, INTERVAL (i) DAY + INTERVAL (i) MONTH AS iv FROM (SELECT range::INTEGER AS i FROM range(0, 5))`,
      '',
      {
        refused: { kind: 'schema', code: 'PARQUET_UNSUPPORTED_TYPE', column: 'iv', mentions: /"iv".*INTERVAL/ },
      },
    ),
    duck(
      duckdb,
      'unsigned 32-bit values inside a list, v1',
      `SELECT i AS id, [(4294967295 - i)::UINTEGER, i::UINTEGER] AS lu32 FROM (SELECT range::INTEGER AS i FROM range(0, 50))`,
      `PARQUET_VERSION v1`,
    ),
    duck(
      duckdb,
      'unsigned 32-bit values inside a list, v2',
      `SELECT i AS id, [(4294967295 - i)::UINTEGER, i::UINTEGER] AS lu32 FROM (SELECT range::INTEGER AS i FROM range(0, 50))`,
      `PARQUET_VERSION v2`,
      {
        refused: {
          kind: 'schema',
          code: 'PARQUET_UNSUPPORTED_ENCODING',
          column: 'lu32',
          mentions: /"lu32".*unsigned 32-bit field "lu32\.list\.element" stored with DELTA_BINARY_PACKED/,
        },
      },
    ),
    duck(duckdb, 'times inside a list', `SELECT i AS id, [TIME '01:02:03'] AS lt FROM (SELECT range::INTEGER AS i FROM range(0, 5))`, '', {
      refused: { kind: 'schema', code: 'PARQUET_UNSUPPORTED_TYPE', column: 'lt', mentions: /"lt".*TIME/ },
    }),
    duck(
      duckdb,
      'wide decimals inside a struct',
      `SELECT i AS id, {'d': (i * 1.5)::DECIMAL(30,2)} AS sd FROM (SELECT range::INTEGER AS i FROM range(0, 5))`,
      '',
      {
        refused: { kind: 'schema', code: 'PARQUET_UNSUPPORTED_TYPE', column: 'sd', mentions: /"sd".*decimal of more than 15 digits/ },
      },
    ),
  ];
  for (const codec of ['uncompressed', 'snappy', 'gzip', 'zstd', 'lz4', 'brotli']) {
    for (const version of ['v1', 'v2']) {
      cases.push(
        duck(duckdb, `${codec} ${version}, 3 row groups`, mixed, `CODEC '${codec}', PARQUET_VERSION ${version}, ROW_GROUP_SIZE 1000`),
      );
    }
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------
// arrow-rs (parquet-wasm)
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// hyperd
// ---------------------------------------------------------------------------------------------

export function hyperCases(pool: () => DbPool): WriterCase[] {
  const select = `SELECT g AS id,
    CASE WHEN g % 7 = 0 THEN NULL ELSE (g - 500)::smallint END AS small,
    CASE WHEN g % 6 = 0 THEN NULL ELSE (g - 500)::bigint * 9007199254740 END AS big,
    CASE WHEN g % 5 = 0 THEN NULL ELSE ((g - 500) * 1.125)::numeric(18,3) END AS amount,
    CASE WHEN g % 4 = 0 THEN NULL ELSE 'name ' || g END AS name,
    CASE WHEN g % 3 = 0 THEN NULL ELSE g % 2 = 0 END AS flag,
    CASE WHEN g % 8 = 0 THEN NULL ELSE DATE '1960-01-01' + g * 31 END AS day,
    CASE WHEN g % 9 = 0 THEN NULL ELSE TIME '01:02:03.456789' END AS at,
    CASE WHEN g % 10 = 0 THEN NULL ELSE TIMESTAMP '2024-01-01 01:02:03.456789' + g * INTERVAL '1 hour' END AS ts,
    CASE WHEN g % 11 = 0 THEN NULL ELSE TIMESTAMPTZ '2024-01-01 01:02:03.5+00' + g * INTERVAL '1 minute' END AS tstz,
    CASE WHEN g % 12 = 0 THEN NULL ELSE (g - 500) / 3.0::double precision END AS ratio
    FROM generate_series(1, 1000) g`;
  return [
    {
      name: 'hyperd COPY TO, every type it writes',
      expect: LANDS,
      write: async (path) => {
        await pool().query(`COPY (${select}) TO '${path}' WITH (FORMAT parquet)`);
      },
    },
  ];
}
