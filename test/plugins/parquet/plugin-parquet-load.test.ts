/**
 * The Parquet ingester loading files into a real hyperd, on both paths (hyperd reads the file; the
 * file is decoded here and streamed as CSV): many types, every codec, several row groups, types
 * hyperd cannot write (a hand-written file), a file without rows, and 1M rows.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { columnsOf, count } from '../../helpers/env.ts';
import { type MiniColumn, miniParquet, plain, type ThriftField } from '../../helpers/conformance-parquet-mini.ts';
import { AS_TEXT, context, LOCAL, REMOTE, useParquetBench } from '../../helpers/parquet-bench.ts';

describe('parquet ingester', () => {
  const { fx, hyperParquet, ingest, select, rows, manyTypesFile } = useParquetBench();
  let manyTypes: string;

  before(async () => {
    manyTypes = await manyTypesFile();
  });

  it('creates a table from a file with many types and round-trips every value (hyperd reads the file)', async () => {
    const result = await ingest(manyTypes, 'many_fast');
    assert.deepEqual(result._unsafeUnwrap(), { rows: 5 });
    assert.deepEqual(await columnsOf(fx.pool, 'many_fast'), [
      'id integer',
      'si smallint',
      'i integer',
      'b bigint',
      'd double precision',
      'n numeric(10,3)',
      'n18 numeric(18,3)',
      'bo boolean',
      't text',
      'dt date',
      'tm time',
      'ts timestamp',
      'tz timestamptz',
      'by bytea',
      'j text',
    ]);
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
      const path = await hyperParquet(
        `codec-${codec}.parquet`,
        `SELECT g AS id, 'name' || g AS name, g * 1.5 AS v FROM generate_series(1, 5000) g`,
        `CODEC '${codec}'`,
      );
      for (const [ctx, table] of [
        [context(LOCAL), `codec_${codec}_fast`],
        [context(REMOTE), `codec_${codec}_decoded`],
      ] as const) {
        assert.deepEqual((await ingest(path, table, ctx))._unsafeUnwrap(), { rows: 5000 });
        const sums = await fx.pool.query<{ n: string; ids: string; v: string; names: string }>(
          `SELECT COUNT(*) AS n, SUM(id) AS ids, SUM(v)::text AS v, MAX(name) AS names FROM ${table}`,
        );
        assert.deepEqual({ ...sums[0] }, { n: '5000', ids: '12502500', v: '18753750.0', names: 'name999' });
      }
    });
  }

  it('reads several row groups, and lists as JSON', async () => {
    const path = await hyperParquet(
      'groups.parquet',
      `SELECT g AS id, ARRAY[g, g + 1] AS pair FROM generate_series(1, 2500) g`,
      'ROWS_PER_ROW_GROUP 1000',
    );
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
    const tsNanos: ThriftField[] = [
      {
        id: 8,
        type: 'struct',
        value: [
          { id: 1, type: 'bool', value: false },
          { id: 2, type: 'struct', value: [{ id: 3, type: 'struct', value: [] }] },
        ],
      },
    ];
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
      {
        name: 'uuid',
        type: 7,
        typeLength: 16,
        logicalType: [{ id: 14, type: 'struct', value: [] }],
        data: plain.fixed([new Uint8Array(16).fill(0xab), new Uint8Array(16)]),
      },
      { name: 'tmms', type: 1, convertedType: 7, data: plain.i32([3723004, 0]) },
      {
        name: 'decba',
        type: 6,
        convertedType: 5,
        scale: 3,
        precision: 12,
        data: plain.bytes([Uint8Array.from([0x01, 0x00]), Uint8Array.from([0xff])]),
      },
    ];
    const READABLE_TYPES = [
      'id integer',
      'i96 timestamp',
      'u8 smallint',
      'u32 bigint',
      'js text',
      'tsns timestamp',
      'dec32 numeric(9,2)',
      'raw bytea',
    ];
    const READABLE_SQL = 'id, i96::text AS i96, u8, u32::text AS u32, js, tsns::text AS tsns, dec32::text AS dec32, raw::text AS raw';
    const READABLE_ROWS = [
      {
        id: 1,
        i96: '2024-01-01 01:02:03.004005',
        u8: 255,
        u32: '4294967295',
        js: '{"a": [1, 2]}',
        tsns: '2024-01-02 03:04:05.123456',
        dec32: '123.45',
        raw: '\\x000102',
      },
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
        assert.deepEqual(await columnsOf(fx.pool, table), READABLE_TYPES);
        assert.deepEqual(await rows(table, READABLE_SQL), READABLE_ROWS);
      });
    }

    it('ENUM, UUID, TIME_MILLIS, BYTE_ARRAY decimals: decoded here although hyperd could read the file', async () => {
      const path = join(fx.root, 'fixtures', 'legacy.parquet');
      await writeFile(path, miniParquet([...readable, ...unreadable], 2));
      assert.deepEqual((await ingest(path, 'legacy'))._unsafeUnwrap(), { rows: 2 });
      assert.deepEqual(await columnsOf(fx.pool, 'legacy'), [...READABLE_TYPES, 'en text', 'uuid text', 'tmms time', 'decba numeric(12,3)']);
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
