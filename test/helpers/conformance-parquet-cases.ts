/**
 * The files of the Parquet conformance suite, each written at test time by another writer:
 * DuckDB (`COPY ... TO ... (FORMAT parquet, ...)`), arrow-rs through parquet-wasm
 * (`writeParquet` with its `WriterProperties`, in conformance-parquet-wasm.ts) and hyperd
 * (`COPY ... TO ... WITH (FORMAT parquet)`).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
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
