/**
 * The Parquet ingester against a real hyperd. Fixtures are written by hyperd itself
 * (`COPY (SELECT ...) TO 'f.parquet' WITH (FORMAT parquet)`), and, for the types hyperd cannot
 * write (INT96, unsigned ints, ENUM, UUID, INTERVAL, ...), by the tiny Parquet writer below.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, readFile, truncate, writeFile } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { before, describe, it } from 'node:test';
import type { SchemaElement, SchemaTree } from 'hyparquet';
import { err, type Result } from 'neverthrow';
import { encoderFor, formatDate, formatDecimal, formatTime, toJson } from '../plugins/parquet/csv.ts';
import { formatTimestamp, hexBytes, quoteCsv } from '../plugins/shared/csv-text.ts';
import { MAX_GROUP_BYTES, openGroup } from '../plugins/parquet/decode.ts';
import { parquetIngester } from '../plugins/parquet/index.ts';
import { describeParquetType, mapParquetColumn } from '../plugins/parquet/types.ts';
import { fitsColumn } from '../src/type-policy.ts';
import { IngestFailure, isIngestFailure } from '../src/errors.ts';
import { claimFile, type OpenedFile } from '../src/files.ts';
import { silentLogger } from '../src/log.ts';
import { standardSqlType } from '../src/sql.ts';
import { parseSqlType } from '../src/sql-types.ts';
import type { AppendResult, DbCapabilities, DbConnection, IngestContext, IngestError, LogicalType, Row, TableColumn } from '../src/types.ts';
import { columnsOf, count, removeDir, tempDir, useHyperFixture } from './helpers/env.ts';
import { createManyTypes } from './helpers/many-types.ts';
import { type MiniColumn, miniParquet, plain, type ThriftField } from './helpers/conformance-parquet-mini.ts';

const LOCAL: DbCapabilities = { readsLocalFiles: true, arrowStream: true, parquet: true, durableCommit: false };
/** What PostgreSQL or a remote hyperd offers: the file must be decoded by us. */
const REMOTE: DbCapabilities = { readsLocalFiles: false, arrowStream: false, parquet: false, durableCommit: false };

function context(capabilities: DbCapabilities, fileState = new Map<string, unknown>(), createTable = true): IngestContext {
  return { capabilities, attempt: 1, fileState, sqlType: standardSqlType, schema: { createTable }, logger: silentLogger };
}

// ---------------------------------------------------------------------------------------------
// Unit tests: no database
// ---------------------------------------------------------------------------------------------

function leaf(element: Omit<SchemaElement, 'name' | 'repetition_type'> & { name?: string; repetition_type?: SchemaElement['repetition_type'] }): SchemaTree {
  return { children: [], count: 1, element: { name: 'c', repetition_type: 'OPTIONAL', ...element }, path: [element.name ?? 'c'] };
}

describe('parquet type mapping', () => {
  const cases: [string, SchemaTree, LogicalType | null, boolean?][] = [
    ['BOOLEAN', leaf({ type: 'BOOLEAN' }), { kind: 'boolean' }, true],
    ['INT32', leaf({ type: 'INT32' }), { kind: 'integer' }, true],
    ['INT32 INT_8', leaf({ type: 'INT32', converted_type: 'INT_8' }), { kind: 'smallint' }, true],
    ['INT32 INT(16,signed)', leaf({ type: 'INT32', logical_type: { type: 'INTEGER', bitWidth: 16, isSigned: true } }), { kind: 'smallint' }, true],
    ['INT32 UINT_8', leaf({ type: 'INT32', converted_type: 'UINT_8' }), { kind: 'smallint' }, true],
    ['INT32 UINT_16', leaf({ type: 'INT32', converted_type: 'UINT_16' }), { kind: 'integer' }, true],
    ['INT32 UINT_32', leaf({ type: 'INT32', converted_type: 'UINT_32' }), { kind: 'bigint' }, true],
    ['INT64', leaf({ type: 'INT64' }), { kind: 'bigint' }, true],
    ['INT64 UINT_64', leaf({ type: 'INT64', converted_type: 'UINT_64' }), { kind: 'decimal', precision: 20, scale: 0 }, false],
    ['FLOAT', leaf({ type: 'FLOAT' }), { kind: 'real' }, true],
    ['DOUBLE', leaf({ type: 'DOUBLE' }), { kind: 'double' }, true],
    ['FLBA FLOAT16', leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 2, logical_type: { type: 'FLOAT16' } }), { kind: 'real' }, false],
    ['FLBA DECIMAL', leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 8, converted_type: 'DECIMAL', precision: 18, scale: 3 }), { kind: 'decimal', precision: 18, scale: 3 }, true],
    ['INT64 DECIMAL (logical)', leaf({ type: 'INT64', logical_type: { type: 'DECIMAL', precision: 12, scale: 2 } }), { kind: 'decimal', precision: 12, scale: 2 }, true],
    ['BYTE_ARRAY DECIMAL', leaf({ type: 'BYTE_ARRAY', converted_type: 'DECIMAL', precision: 30, scale: 3 }), { kind: 'decimal', precision: 30, scale: 3 }, false],
    ['BYTE_ARRAY STRING', leaf({ type: 'BYTE_ARRAY', logical_type: { type: 'STRING' } }), { kind: 'text' }, true],
    ['BYTE_ARRAY UTF8', leaf({ type: 'BYTE_ARRAY', converted_type: 'UTF8' }), { kind: 'text' }, true],
    ['BYTE_ARRAY ENUM', leaf({ type: 'BYTE_ARRAY', converted_type: 'ENUM' }), { kind: 'text' }, false],
    ['BYTE_ARRAY JSON', leaf({ type: 'BYTE_ARRAY', converted_type: 'JSON' }), { kind: 'json' }, true],
    ['FLBA UUID', leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' } }), { kind: 'text' }, false],
    ['BYTE_ARRAY', leaf({ type: 'BYTE_ARRAY' }), { kind: 'bytes' }, true],
    ['INT32 DATE', leaf({ type: 'INT32', converted_type: 'DATE' }), { kind: 'date' }, true],
    ['INT32 TIME_MILLIS', leaf({ type: 'INT32', converted_type: 'TIME_MILLIS' }), { kind: 'time' }, false],
    ['INT64 TIME(MICROS)', leaf({ type: 'INT64', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'MICROS' } }), { kind: 'time' }, true],
    ['INT64 TIMESTAMP(UTC)', leaf({ type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' } }), { kind: 'timestamptz' }, true],
    ['INT64 TIMESTAMP(local)', leaf({ type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' } }), { kind: 'timestamp' }, true],
    ['INT64 TIMESTAMP_MICROS', leaf({ type: 'INT64', converted_type: 'TIMESTAMP_MICROS' }), { kind: 'timestamptz' }, true],
    ['INT96', leaf({ type: 'INT96' }), { kind: 'timestamp' }, true],
    ['REPEATED INT32', leaf({ type: 'INT32', repetition_type: 'REPEATED' }), { kind: 'json' }, false],
    ['BYTE_ARRAY GEOMETRY (WKB)', leaf({ type: 'BYTE_ARRAY', logical_type: { type: 'GEOMETRY' } }), { kind: 'bytes' }, false],
    ['BYTE_ARRAY GEOGRAPHY (WKB)', leaf({ type: 'BYTE_ARRAY', logical_type: { type: 'GEOGRAPHY' } }), { kind: 'bytes' }, false],
    // A logical type from a newer spec: its physical type, as the spec tells readers.
    ['INT32 with an unknown logical type', leaf({ type: 'INT32', logical_type: { field_40: {} } as unknown as SchemaElement['logical_type'] }), { kind: 'integer' }, true],
    ['FLBA DECIMAL(40,2)', leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 17, logical_type: { type: 'DECIMAL', precision: 40, scale: 2 } }), { kind: 'text' }, false],
    ['FLBA INTERVAL', leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 12, converted_type: 'INTERVAL' }), null],
    ['BYTE_ARRAY BSON', leaf({ type: 'BYTE_ARRAY', converted_type: 'BSON' }), null],
    ['BYTE_ARRAY VARIANT', leaf({ type: 'BYTE_ARRAY', logical_type: { type: 'VARIANT' } }), null],
    ['BYTE_ARRAY DATE (inconsistent)', leaf({ type: 'BYTE_ARRAY', converted_type: 'DATE' }), null],
    ['INT32 DECIMAL without precision', leaf({ type: 'INT32', converted_type: 'DECIMAL' }), null],
  ];
  for (const [label, node, expected, hyperReads] of cases) {
    it(`${label} → ${expected ? JSON.stringify(expected) : 'unsupported'}`, () => {
      const mapped = mapParquetColumn(node);
      if (expected === null) {
        assert.equal(mapped.ok, false);
        return;
      }
      assert.ok(mapped.ok, JSON.stringify(mapped));
      assert.deepEqual(mapped.column.type, expected);
      assert.equal(mapped.column.hyperReads, hyperReads);
    });
  }

  it('maps groups (lists, maps, structs) to json', () => {
    const element = leaf({ type: 'INT32', name: 'element', repetition_type: 'REQUIRED' });
    const list: SchemaTree = {
      children: [{ children: [element], count: 2, element: { name: 'list', repetition_type: 'REPEATED', num_children: 1 }, path: ['l', 'list'] }],
      count: 3,
      element: { name: 'l', repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'LIST' },
      path: ['l'],
    };
    const mapped = mapParquetColumn(list);
    assert.ok(mapped.ok);
    assert.deepEqual(mapped.column.type, { kind: 'json' });
    assert.equal(describeParquetType(list), 'group LIST');
  });

  it('refuses nested columns whose fields would not land as they are', () => {
    const listOf = (element: SchemaTree): SchemaTree => ({
      children: [{ children: [element], count: 2, element: { name: 'list', repetition_type: 'REPEATED', num_children: 1 }, path: ['l', 'list'] }],
      count: 3,
      element: { name: 'l', repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'LIST' },
      path: ['l'],
    });
    const field = (element: Omit<SchemaElement, 'name'>): SchemaTree => ({ children: [], count: 1, element: { name: 'element', ...element }, path: ['l', 'list', 'element'] });
    const time = mapParquetColumn(listOf(field({ type: 'INT64', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'MICROS' } })));
    assert.ok(!time.ok);
    assert.match(time.reason, /"l\.list\.element" is a TIME/);
    const wide = mapParquetColumn(listOf(field({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'DECIMAL', precision: 30, scale: 2 } })));
    assert.ok(!wide.ok);
    assert.match(wide.reason, /decimal of more than 15 digits/);
    const interval = mapParquetColumn(listOf(field({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 12, converted_type: 'INTERVAL' })));
    assert.ok(!interval.ok);
    assert.match(interval.reason, /INTERVAL/);
    const narrow = mapParquetColumn(listOf(field({ type: 'INT64', logical_type: { type: 'DECIMAL', precision: 12, scale: 2 } })));
    assert.ok(narrow.ok);
    const enums = mapParquetColumn(listOf(field({ type: 'BYTE_ARRAY', converted_type: 'ENUM' })));
    assert.ok(enums.ok && enums.column.codec.kind === 'nested' && enums.column.codec.utf8, 'ENUM fields inside are read as text');
    const bytes = mapParquetColumn(listOf(field({ type: 'BYTE_ARRAY' })));
    assert.ok(bytes.ok && bytes.column.codec.kind === 'nested' && !bytes.column.codec.utf8, 'raw binary inside stays bytes');
  });

  it('describes Parquet types for messages', () => {
    assert.equal(describeParquetType(leaf({ type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } })), 'INT64 TIMESTAMP(MICROS, UTC)');
    assert.equal(describeParquetType(leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 12, converted_type: 'INTERVAL' })), 'FIXED_LEN_BYTE_ARRAY(12) INTERVAL');
  });
});

describe('parquet compatibility with existing columns', () => {
  const cases: [LogicalType, string, boolean][] = [
    [{ kind: 'integer' }, 'bigint', true],
    [{ kind: 'integer' }, 'integer', true],
    [{ kind: 'bigint' }, 'integer', false],
    [{ kind: 'smallint' }, 'numeric(5,0)', true],
    [{ kind: 'integer' }, 'numeric(18,3)', true],
    [{ kind: 'bigint' }, 'numeric(18,0)', false],
    [{ kind: 'bigint' }, 'double precision', true],
    [{ kind: 'integer' }, 'double precision', true],
    [{ kind: 'real' }, 'double precision', true],
    [{ kind: 'double' }, 'real', false],
    [{ kind: 'decimal', precision: 10, scale: 3 }, 'numeric(18,3)', true],
    [{ kind: 'decimal', precision: 10, scale: 3 }, 'numeric(18,2)', false],
    [{ kind: 'decimal', precision: 18, scale: 3 }, 'numeric(16,3)', false],
    [{ kind: 'decimal', precision: 9, scale: 0 }, 'integer', true],
    [{ kind: 'decimal', precision: 10, scale: 2 }, 'double precision', true],
    [{ kind: 'decimal', precision: 30, scale: 2 }, 'numeric', true],
    [{ kind: 'text' }, 'bigint', false],
    [{ kind: 'text' }, 'character varying(10)', true],
    [{ kind: 'text' }, 'json', true],
    [{ kind: 'bigint' }, 'text', true],
    [{ kind: 'timestamp' }, 'text', true],
    [{ kind: 'date' }, 'timestamp', true],
    [{ kind: 'date' }, 'timestamp with time zone', true],
    [{ kind: 'timestamp' }, 'timestamptz', true],
    [{ kind: 'timestamptz' }, 'timestamp(6) with time zone', true],
    [{ kind: 'time' }, 'time without time zone', true],
    [{ kind: 'bytes' }, 'bytea', true],
    [{ kind: 'json' }, 'jsonb', true],
    [{ kind: 'boolean' }, 'integer', false],
    [{ kind: 'integer' }, 'interval', false],
  ];
  for (const [type, sqlType, expected] of cases) {
    it(`${JSON.stringify(type)} into ${sqlType}: ${expected ? 'fits' : 'does not fit'}`, () => {
      assert.equal(fitsColumn(type, parseSqlType(sqlType)), expected);
    });
  }
});

describe('parquet CSV encoding (the fallback)', () => {
  it('formats dates and timestamps as ISO text, before 1970 and BC too', () => {
    assert.equal(formatDate(0), '1970-01-01');
    assert.equal(formatDate(19782), '2024-02-29');
    assert.equal(formatDate(-1), '1969-12-31');
    assert.equal(formatDate(-719162), '0001-01-01');
    assert.equal(formatDate(-719163), '0001-12-31 BC');
    assert.equal(formatTimestamp(1704164645123456n, false), '2024-01-02 03:04:05.123456');
    assert.equal(formatTimestamp(-1n, false), '1969-12-31 23:59:59.999999');
    assert.equal(formatTime(45296789, 'MILLIS'), '12:34:56.789000');
    assert.equal(formatTime(45296789012n, 'MICROS'), '12:34:56.789012');
    assert.equal(formatTime(45296789012345n, 'NANOS'), '12:34:56.789012');
  });

  it('formats decimals exactly from their unscaled integers', () => {
    assert.equal(formatDecimal(12345, 3), '12.345');
    assert.equal(formatDecimal(-5, 2), '-0.05');
    assert.equal(formatDecimal(123456789012345678n, 4), '12345678901234.5678');
    assert.equal(formatDecimal(Uint8Array.from([0xff]), 3), '-0.001');
    assert.equal(formatDecimal(Uint8Array.from([0x01, 0x00]), 0), '256');
    // 16 bytes: -1 with 38 digits of precision available
    assert.equal(formatDecimal(new Uint8Array(16).fill(0xff), 2), '-0.01');
  });

  it('quotes CSV fields that need it and spells bytes and JSON', () => {
    assert.equal(quoteCsv('plain'), 'plain');
    assert.equal(quoteCsv(''), '""');
    assert.equal(quoteCsv('a,b'), '"a,b"');
    assert.equal(quoteCsv('say "hi"'), '"say ""hi"""');
    assert.equal(quoteCsv('two\nlines\r'), '"two\nlines\r"');
    assert.equal(quoteCsv('\\.'), '"\\."');
    assert.equal(hexBytes(Uint8Array.from([0xde, 0xad, 0x00])), '\\xdead00');
    assert.equal(toJson({ a: [1n, 2.5, null], b: 'x"y', c: Uint8Array.from([1, 2]), d: true }), '{"a":[1,2.5,null],"b":"x\\"y","c":"AQI=","d":true}');
    assert.equal(toJson(12345678901234567890n), '12345678901234567890');
  });

  it('spells unsigned 32-bit values modulo 2^32, whether read as INT32 or as INT64', () => {
    const encode = encoderFor({ kind: 'uint32' });
    assert.equal(encode(4294967295), '4294967295');
    assert.equal(encode(4294967295n), '4294967295');
    assert.equal(encode(-1n), '4294967295');
    assert.equal(encode(7), '7');
    assert.equal(encode(null), '');
  });
});

describe('parquet decoder bounds', () => {
  it('refuses to hold a row group of more than 1 GiB compressed, before reading any of it', async () => {
    const bytes = miniParquet([{ name: 'n', type: 1, data: plain.i32([1, 2, 3]) }], 3);
    const { parquetMetadata } = await import('hyparquet');
    const metadata = parquetMetadata(bytes);
    const chunk = metadata.row_groups[0]!.columns[0]!;
    const huge = { ...metadata, row_groups: [{ ...metadata.row_groups[0]!, columns: [{ ...chunk, meta_data: { ...chunk.meta_data!, total_compressed_size: BigInt(MAX_GROUP_BYTES) + 1n } }] }] };
    const reads: number[] = [];
    const source = { byteLength: 1 << 40, slice: (start: number) => (reads.push(start), Promise.resolve(new ArrayBuffer(0))) };
    const file = { name: 'huge.parquet' } as OpenedFile;
    const mapped = mapParquetColumn({ children: [], count: 1, element: metadata.schema[1]!, path: ['n'] });
    assert.ok(mapped.ok);
    await assert.rejects(openGroup({ file, source, metadata: huge, columns: [mapped.column] }, 0), (error: unknown) => {
      assert.ok(isIngestFailure(error));
      assert.equal(error.error.code, 'PARQUET_TOO_LARGE');
      assert.match(error.error.message, /huge\.parquet: row group 0 is 1073741825 bytes compressed, beyond the 1073741824 bytes/);
      return true;
    });
    assert.deepEqual(reads, [], 'nothing was read');
  });
});

describe('parquet ingester: retry when hyperd refuses a column type', () => {
  it('asks for a fresh transaction, and the retry decodes the file itself', async () => {
    const dir = await tempDir();
    const path = join(dir, 'ints.parquet');
    await writeFile(path, miniParquet([{ name: 'a', type: 1, data: plain.i32([1, 2, 3]) }], 3));
    const file = await claimInto(dir, path);
    const sqls: string[] = [];
    const conn: DbConnection = {
      query: <T extends Row = Row>() => Promise.resolve([] as T[]),
      execute: (sql) => {
        sqls.push(sql);
        return Promise.reject(Object.assign(new Error('There are columns in the Parquet file that have a data type that cannot be read by Hyper'), { code: '42804' }));
      },
      copyFrom: async (sql, source) => {
        sqls.push(sql);
        let text = '';
        for await (const chunk of source) text += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk);
        assert.equal(text, '1\n2\n3\n');
        return 3;
      },
      describeTable: () => Promise.resolve<TableColumn[]>([{ name: 'a', sqlType: 'integer', nullable: true }]),
    };
    try {
      const ctx = context(LOCAL);
      const first = await parquetIngester.append(conn, file, { name: 't' }, ctx);
      assert.ok(first.isErr());
      assert.ok(first.error.retry, 'the error asks for a retry');
      assert.match(sqls[0]!, /external\(/);
      const second = await parquetIngester.append(conn, file, { name: 't' }, { ...ctx, attempt: 2 });
      assert.deepEqual(second._unsafeUnwrap(), { rows: 3 });
      assert.match(sqls[1]!, /COPY "t" \("a"\) FROM STDIN WITH \(FORMAT csv\)/);
    } finally {
      await file.close();
      await removeDir(dir);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Against a real hyperd
// ---------------------------------------------------------------------------------------------

async function claimInto(root: string, path: string): Promise<OpenedFile> {
  const staging = join(root, 'staging');
  await mkdir(staging, { recursive: true });
  const name = basename(path);
  const outcome = await claimFile(dirname(path), name, join(staging, `${randomUUID()}-${name}`), { claimId: randomUUID(), extension: extname(name).toLowerCase() });
  assert.equal(outcome.status, 'claimed');
  if (outcome.status !== 'claimed') throw new Error('not claimed');
  return outcome.file;
}

describe('parquet ingester', () => {
  const fx = useHyperFixture();
  /** Where ingest() puts the copy of a fixture it claims. */
  const inbox = (): string => join(fx.root, 'inbox');
  before(() => mkdir(inbox(), { recursive: true }));

  /** A fixture written by hyperd; `options` e.g. `CODEC 'zstd'`. */
  async function hyperParquet(name: string, select: string, options = ''): Promise<string> {
    const path = join(fx.root, 'fixtures', name);
    await mkdir(dirname(path), { recursive: true });
    await fx.pool.query(`COPY (${select}) TO '${path}' WITH (FORMAT parquet${options ? `, ${options}` : ''})`);
    return path;
  }

  /** Claims a copy of `fixture` (claiming moves it) and appends it inside a transaction, rolled back on error. */
  async function ingest(fixture: string, table: string, ctx: IngestContext = context(LOCAL), as = basename(fixture)): Promise<Result<AppendResult, IngestError>> {
    const copy = join(inbox(), as);
    await copyFile(fixture, copy);
    const file = await claimInto(fx.root, copy);
    try {
      // As the watcher does: an error that asks for a retry gets a fresh transaction at once.
      for (let attempt = 1; ; attempt++) {
        try {
          return await fx.pool.transaction(async (conn) => {
            const result = await parquetIngester.append(conn, file, { name: table }, { ...ctx, attempt });
            if (result.isErr()) throw new IngestFailure(result.error);
            return result;
          });
        } catch (error) {
          if (isIngestFailure(error) && error.error.retry && attempt < 3) continue;
          if (isIngestFailure(error)) return err(error.error);
          throw error;
        }
      }
    } finally {
      await file.close();
    }
  }

  /** Plain objects (postgres.js hands out a Result array subclass, which deepEqual tells apart). */
  async function select(sql: string): Promise<Row[]> {
    return (await fx.pool.query(sql)).map((row) => ({ ...row }));
  }

  function rows(table: string, columns: string): Promise<Row[]> {
    return select(`SELECT ${columns} FROM ${table} ORDER BY id`);
  }

  function expectError(result: Result<AppendResult, IngestError>, kind: IngestError['kind'], code: string): IngestError {
    assert.ok(result.isErr(), `expected ${code}, got ${JSON.stringify(result.isOk() ? result.value : null)}`);
    assert.equal(result.error.code, code, result.error.message);
    assert.equal(result.error.kind, kind);
    assert.ok(result.error.hint.length > 0, 'has a hint');
    return result.error;
  }

  /** Every column of the many-types source, as text, so values compare exactly. */
  const AS_TEXT = `id, si::text AS si, i::text AS i, b::text AS b, d::text AS d, n::text AS n, n18::text AS n18, bo::text AS bo, t, dt::text AS dt, tm::text AS tm, ts::text AS ts, tz::text AS tz, by::text AS by, j::text AS j`;
  let manyTypes: string;

  before(async () => {
    await createManyTypes(fx.pool, 'src');
    manyTypes = await hyperParquet('many-types.parquet', 'SELECT * FROM src ORDER BY id');
  });

  it('creates a table from a file with many types and round-trips every value (hyperd reads the file)', async () => {
    const result = await ingest(manyTypes, 'many_fast');
    assert.deepEqual(result._unsafeUnwrap(), { rows: 5 });
    assert.deepEqual(
      await columnsOf(fx.pool, 'many_fast'),
      ['id integer', 'si smallint', 'i integer', 'b bigint', 'd double precision', 'n numeric(10,3)', 'n18 numeric(18,3)', 'bo boolean', 't text', 'dt date', 'tm time', 'ts timestamp', 'tz timestamptz', 'by bytea', 'j text'],
    );
    assert.deepEqual(await rows('many_fast', AS_TEXT), await rows('src', AS_TEXT));
  });

  it('decodes the file itself when the database cannot read it, with the same rows', async () => {
    const result = await ingest(manyTypes, 'many_decoded', context(REMOTE));
    assert.deepEqual(result._unsafeUnwrap(), { rows: 5 });
    assert.deepEqual(await rows('many_decoded', AS_TEXT), await rows('src', AS_TEXT));
    assert.deepEqual(await rows('many_decoded', AS_TEXT), await rows('many_fast', AS_TEXT));
  });

  for (const codec of ['snappy', 'gzip', 'zstd', 'lz4_raw', 'uncompressed']) {
    it(`reads ${codec}-compressed files on both paths`, async () => {
      const path = await hyperParquet(`codec-${codec}.parquet`, `SELECT g AS id, 'name' || g AS name, g * 1.5 AS v FROM generate_series(1, 5000) g`, `CODEC '${codec}'`);
      for (const [ctx, table] of [
        [context(LOCAL), `codec_${codec}_fast`],
        [context(REMOTE), `codec_${codec}_decoded`],
      ] as const) {
        assert.deepEqual((await ingest(path, table, ctx))._unsafeUnwrap(), { rows: 5000 });
        const sums = await fx.pool.query<{ n: string; ids: string; v: string; names: string }>(`SELECT COUNT(*) AS n, SUM(id) AS ids, SUM(v)::text AS v, MAX(name) AS names FROM ${table}`);
        assert.deepEqual({ ...sums[0] }, { n: '5000', ids: '12502500', v: '18753750.0', names: 'name999' });
      }
    });
  }

  it('reads several row groups, and lists as JSON', async () => {
    const path = await hyperParquet('groups.parquet', `SELECT g AS id, ARRAY[g, g + 1] AS pair FROM generate_series(1, 2500) g`, 'ROWS_PER_ROW_GROUP 1000');
    // A list column is beyond hyperd's reader (for our purposes): decoded here even with local reads.
    assert.deepEqual((await ingest(path, 'groups'))._unsafeUnwrap(), { rows: 2500 });
    assert.equal(await count(fx.pool, 'groups'), 2500);
    assert.deepEqual(await select(`SELECT id, pair FROM groups WHERE id IN (1, 2500) ORDER BY id`), [
      { id: 1, pair: '[1,2]' },
      { id: 2500, pair: '[2500,2501]' },
    ]);
  });

  describe('types hyperd cannot write (a hand-written file)', () => {
    const enc = (s: string) => new TextEncoder().encode(s);
    // INT96: nanoseconds of the day (8 bytes), then the Julian day (4 bytes), little-endian.
    const int96 = (julianDay: number, nanos: bigint) => {
      const b = new Uint8Array(12);
      const v = new DataView(b.buffer);
      v.setBigUint64(0, nanos, true);
      v.setUint32(8, julianDay, true);
      return b;
    };
    const tsNanos: ThriftField[] = [{ id: 8, type: 'struct', value: [{ id: 1, type: 'bool', value: false }, { id: 2, type: 'struct', value: [{ id: 3, type: 'struct', value: [] }] }] }];
    /** Columns hyperd's reader takes: loaded by hyperd on the fast path. */
    const readable: MiniColumn[] = [
      { name: 'id', type: 1, data: plain.i32([1, 2]) },
      { name: 'i96', type: 3, data: plain.fixed([int96(2460311, 3723004005000n), int96(2440588, 0n)]) },
      { name: 'u8', type: 1, convertedType: 11, data: plain.i32([255, 0]) },
      { name: 'u32', type: 1, convertedType: 13, data: plain.i32([-1, 2]) },
      { name: 'js', type: 6, convertedType: 19, data: plain.bytes([enc('{"a": [1, 2]}'), enc('null')]) },
      // -1 ns: both paths truncate toward zero, as hyperd does.
      { name: 'tsns', type: 2, logicalType: tsNanos, data: plain.i64([1704164645123456789n, -1n]) },
      { name: 'dec32', type: 1, convertedType: 5, scale: 2, precision: 9, data: plain.i32([12345, -5]) },
      { name: 'raw', type: 6, data: plain.bytes([Uint8Array.from([0, 1, 2]), new Uint8Array(0)]) },
    ];
    /** Columns hyperd refuses (42804): a file with any of them is decoded here even with local reads. */
    const unreadable: MiniColumn[] = [
      { name: 'en', type: 6, convertedType: 4, data: plain.bytes([enc('RED'), enc('GREEN, "lime"')]) },
      { name: 'uuid', type: 7, typeLength: 16, logicalType: [{ id: 14, type: 'struct', value: [] }], data: plain.fixed([new Uint8Array(16).fill(0xab), new Uint8Array(16)]) },
      { name: 'tmms', type: 1, convertedType: 7, data: plain.i32([3723004, 0]) },
      { name: 'decba', type: 6, convertedType: 5, scale: 3, precision: 12, data: plain.bytes([Uint8Array.from([0x01, 0x00]), Uint8Array.from([0xff])]) },
    ];
    const READABLE_TYPES = ['id integer', 'i96 timestamp', 'u8 smallint', 'u32 bigint', 'js text', 'tsns timestamp', 'dec32 numeric(9,2)', 'raw bytea'];
    const READABLE_SQL = 'id, i96::text AS i96, u8, u32::text AS u32, js, tsns::text AS tsns, dec32::text AS dec32, raw::text AS raw';
    const READABLE_ROWS = [
      { id: 1, i96: '2024-01-01 01:02:03.004005', u8: 255, u32: '4294967295', js: '{"a": [1, 2]}', tsns: '2024-01-02 03:04:05.123456', dec32: '123.45', raw: '\\x000102' },
      { id: 2, i96: '1970-01-01 00:00:00', u8: 0, u32: '2', js: 'null', tsns: '1970-01-01 00:00:00', dec32: '-0.05', raw: '\\x' },
    ];

    for (const [label, ctx] of [
      ['hyperd reads the file', () => context(LOCAL)],
      ['decoded here', () => context(REMOTE)],
    ] as const) {
      it(`INT96, unsigned ints, JSON, nanosecond timestamps, INT32 decimals, raw bytes (${label})`, async () => {
        const path = join(fx.root, 'fixtures', 'readable.parquet');
        await writeFile(path, miniParquet(readable, 2));
        const table = `readable_${label.startsWith('hyperd') ? 'fast' : 'decoded'}`;
        assert.deepEqual((await ingest(path, table, ctx()))._unsafeUnwrap(), { rows: 2 });
        assert.deepEqual(
          await columnsOf(fx.pool, table),
          READABLE_TYPES,
        );
        assert.deepEqual(await rows(table, READABLE_SQL), READABLE_ROWS);
      });
    }

    it('ENUM, UUID, TIME_MILLIS, BYTE_ARRAY decimals: decoded here although hyperd could read the file', async () => {
      const path = join(fx.root, 'fixtures', 'legacy.parquet');
      await writeFile(path, miniParquet([...readable, ...unreadable], 2));
      assert.deepEqual((await ingest(path, 'legacy'))._unsafeUnwrap(), { rows: 2 });
      assert.deepEqual(
        await columnsOf(fx.pool, 'legacy'),
        [...READABLE_TYPES, 'en text', 'uuid text', 'tmms time', 'decba numeric(12,3)'],
      );
      assert.deepEqual(await rows('legacy', `${READABLE_SQL}, en, uuid, tmms::text AS tmms, decba::text AS decba`), [
        { ...READABLE_ROWS[0], en: 'RED', uuid: 'abababab-abab-abab-abab-abababababab', tmms: '01:02:03.004', decba: '0.256' },
        { ...READABLE_ROWS[1], en: 'GREEN, "lime"', uuid: '00000000-0000-0000-0000-000000000000', tmms: '00:00:00', decba: '-0.001' },
      ]);
    });
  });

  it('creates the table from a file without rows', async () => {
    const path = await hyperParquet('empty-rows.parquet', `SELECT 1 AS id, 'x'::text AS name WHERE false`);
    assert.deepEqual((await ingest(path, 'no_rows'))._unsafeUnwrap(), { rows: 0 });
    assert.equal((await fx.pool.transaction((conn) => conn.describeTable({ name: 'no_rows' })))?.length, 2);
  });

  it('appends to an existing table by column name: other order, other case, a missing nullable column, widening', async () => {
    // id is INT32 in the file (→ bigint), r is FLOAT (real → double precision), v is a decimal (→ double).
    const path = await hyperParquet('existing.parquet', `SELECT g AS id, 'n' || g AS name, g * 1.5 AS v, (g / 4.0)::real AS r FROM generate_series(1, 3) g`);
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
      assert.match(error.message, /mismatch\.parquet: column "amount" is text in the file \(Parquet BYTE_ARRAY STRING\) but bigint in table typed/);
    }
  });

  it('widens anything into text, but never cuts a value too long for varchar(n)', async () => {
    const fits = await hyperParquet('short.parquet', `SELECT g AS id, 'ab' || g AS code, DATE '2024-01-01' + g AS day FROM generate_series(1, 2) g`);
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
        assert.match(result.error.message, /long\.parquet: column "code" has a value of 4 characters \("abcd"\), too long for character varying\(3\) in table short_fast/);
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
    await writeFile(path, miniParquet([{ name: 'id', type: 1, data: plain.i32([1]) }, { name: 'span', type: 7, typeLength: 12, convertedType: 21, data: plain.fixed([new Uint8Array(12)]) }], 1));
    const error = expectError(await ingest(path, 'unsupported'), 'schema', 'PARQUET_UNSUPPORTED_TYPE');
    assert.equal(error.column, 'span');
    assert.match(error.message, /interval\.parquet: column "span" has Parquet type FIXED_LEN_BYTE_ARRAY\(12\) INTERVAL/);
    assert.equal(await fx.pool.transaction((conn) => conn.describeTable({ name: 'unsupported' })), null);
  });

  it('rejects a zero-byte file', async () => {
    const path = join(fx.root, 'fixtures', 'zero.parquet');
    await writeFile(path, '');
    const error = expectError(await ingest(path, 'zero'), 'data', 'EMPTY_FILE');
    assert.match(error.message, /zero\.parquet: the file is empty/);
  });

  it('rejects a truncated file on both paths', async () => {
    const path = join(fx.root, 'fixtures', 'truncated.parquet');
    await copyFile(manyTypes, path);
    const size = (await readFile(path)).length;
    await truncate(path, Math.floor(size / 2));
    for (const ctx of [context(LOCAL), context(REMOTE)]) {
      const error = expectError(await ingest(path, 'truncated', ctx), 'data', 'PARQUET_TRUNCATED');
      assert.match(error.message, /truncated\.parquet: the file is truncated/);
    }
    await truncate(path, 3);
    expectError(await ingest(path, 'truncated'), 'data', 'PARQUET_TRUNCATED');
  });

  it('rejects garbage that is not Parquet', async () => {
    const path = join(fx.root, 'fixtures', 'garbage.pq');
    await writeFile(path, Buffer.from('id,name\n1,not parquet at all\n'));
    const error = expectError(await ingest(path, 'garbage'), 'data', 'PARQUET_NOT_PARQUET');
    assert.match(error.message, /garbage\.pq: not a Parquet file/);
  });

  it('rejects a file whose footer is garbage', async () => {
    const good = await readFile(manyTypes);
    const bad = Buffer.from(good);
    const footerLength = bad.readUInt32LE(bad.length - 8);
    for (let i = bad.length - 8 - footerLength; i < bad.length - 8; i++) bad[i] = (i * 131) & 0xff;
    const path = join(fx.root, 'fixtures', 'bad-footer.parquet');
    await writeFile(path, bad);
    const error = expectError(await ingest(path, 'bad_footer'), 'data', 'PARQUET_CORRUPT');
    assert.match(error.message, /bad-footer\.parquet: the Parquet footer cannot be read/);
  });

  it('rejects corrupt column data with a data error on both paths', async () => {
    const path = await hyperParquet('pages.parquet', `SELECT g AS id, 'name' || g AS name FROM generate_series(1, 20000) g`);
    const bytes = await readFile(path);
    // Scramble the compressed bytes of the second column ("name"), keeping the footer intact.
    const { parquetMetadata } = await import('hyparquet');
    const meta = parquetMetadata(bytes).row_groups[0]!.columns[1]!.meta_data!;
    const start = Number(meta.data_page_offset) + 30;
    for (let i = start; i < start + 2000; i++) bytes[i] = (i * 31) & 0xff;
    const corrupt = join(fx.root, 'fixtures', 'corrupt-pages.parquet');
    await writeFile(corrupt, bytes);
    for (const ctx of [context(LOCAL), context(REMOTE)]) {
      const error = expectError(await ingest(corrupt, 'corrupt_pages', ctx), 'data', 'PARQUET_CORRUPT');
      assert.match(error.message, /corrupt-pages\.parquet/);
      assert.doesNotMatch(error.message, /staging/, 'names the file, not its staged path');
    }
    // Nothing landed. (hyperd does not roll back CREATE TABLE, so the table itself may remain.)
    assert.equal(await count(fx.pool, 'corrupt_pages'), 0);
  });

  it('loads 1M rows with an exact count on both paths', async () => {
    const select1M = `SELECT g AS id, 'name' || g AS name, g * 1.5 AS v FROM generate_series(1, 1000000) g`;
    // hyperd writes one row group by default; the decoder holds one row group at a time, so the
    // 10-group file shows the bound (run first: RSS rarely shrinks back within a process).
    const oneGroup = await hyperParquet('million.parquet', select1M);
    const tenGroups = await hyperParquet('million-10-groups.parquet', select1M, 'ROWS_PER_ROW_GROUP 100000');
    const runs = [
      ['hyperd reads the file, 1 row group', oneGroup, context(LOCAL), 'million_fast'],
      ['decoded here, CSV over COPY, 10 row groups of 100k', tenGroups, context(REMOTE), 'million_decoded_10'],
      ['decoded here, CSV over COPY, 1 row group', oneGroup, context(REMOTE), 'million_decoded'],
    ] as const;
    for (const [label, path, ctx, table] of runs) {
      let peak = process.memoryUsage().rss;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().rss);
      }, 20);
      const started = performance.now();
      const result = await ingest(path, table, ctx);
      const ms = performance.now() - started;
      clearInterval(sampler);
      peak = Math.max(peak, process.memoryUsage().rss);
      assert.deepEqual(result._unsafeUnwrap(), { rows: 1_000_000 });
      assert.equal(await count(fx.pool, table), 1_000_000);
      console.log(`parquet 1M rows (${label}): ${ms.toFixed(0)} ms, rss peak ${(peak / 2 ** 20).toFixed(0)} MiB`);
    }
    const sums = (table: string) => select(`SELECT SUM(id)::text AS ids, SUM(v)::text AS v, MAX(name) AS name FROM ${table}`);
    const expected = [{ ids: '500000500000', v: '750000750000.0', name: 'name999999' }];
    for (const [, , , table] of runs) assert.deepEqual(await sums(table), expected);
  });
});
