/**
 * Parquet conformance, malformed files: hand-made damage (a footer's lengths and counts, pages,
 * dictionaries, scrambled compressed data) refused on the three paths (hyperd reads it; decoded
 * here into hyperd; decoded here into PostgreSQL) as a data error that says what is wrong, in
 * words, not JavaScript's, landing nothing, within the bounds every case keeps. The files other
 * writers make are in conformance-parquet.test.ts.
 *
 * Prints one line per case and path: `malformed: case | path | refused CODE: message`, with the
 * time, the longest event-loop stall and memory growth.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { asReported, ensureDirOf, ingestFile, measured } from '../../helpers/conformance-parquet.ts';
import {
  BARE_JS,
  describeRefusal,
  MAX_EVENT_LOOP_STALL_MS,
  MAX_RSS_GROWTH_MIB,
  useParquetBench,
} from '../../helpers/conformance-parquet-bench.ts';
import { type Hostile, miniParquet, plain } from '../../helpers/conformance-parquet-mini.ts';
import { count } from '../../helpers/env.ts';

describe('Parquet conformance: malformed files', () => {
  const bench = useParquetBench();
  /** A refusal for damage: a data error with a code that says so, in words, not JavaScript's. */
  async function refused(name: string, bytes: Uint8Array, code: RegExp, mentions: RegExp, column?: string): Promise<void> {
    const path = join(bench.root(), 'malformed', `${name.replace(/[^a-z0-9]+/gi, '-')}.parquet`);
    await ensureDirOf(path);
    await writeFile(path, bytes);
    for (const { label, fixture, capabilities } of bench.paths) {
      const table = bench.table('bad');
      const db = fixture();
      const run = await measured(() => ingestFile(db.pool, db.root, path, table, capabilities, (t) => db.db.sqlType(t)));
      const outcome = run.value;
      const line = outcome.ok ? `LANDED ${outcome.rows} rows` : describeRefusal(outcome.error, path);
      console.log(
        `malformed: ${name} | ${label} | ${line} | ${run.ms.toFixed(0)} ms, stall ${run.maxBlockMs.toFixed(0)} ms, ` +
          `+${run.rssGrowthMiB.toFixed(0)} MiB`,
      );
      assert.ok(!outcome.ok, `${name} (${label}) must be refused`);
      assert.equal(outcome.error.kind, 'data', outcome.error.message);
      assert.match(outcome.error.code ?? '', code, outcome.error.message);
      assert.match(asReported(outcome.error.message, path), mentions);
      assert.doesNotMatch(outcome.error.message, BARE_JS);
      if (column !== undefined) assert.equal(outcome.error.column, column, outcome.error.message);
      const exists = await db.pool.transaction((conn) => conn.describeTable({ name: table }));
      if (exists) assert.equal(await count(db.pool, table), 0, 'nothing landed');
      assert.ok(run.maxBlockMs < MAX_EVENT_LOOP_STALL_MS, `${name} (${label}) stalled the event loop ${run.maxBlockMs} ms`);
      assert.ok(run.rssGrowthMiB < MAX_RSS_GROWTH_MIB, `${name} (${label}) grew memory by ${run.rssGrowthMiB} MiB`);
    }
  }

  const ints = (hostile: Hostile) =>
    miniParquet(
      [
        { name: 'n', type: 1, data: plain.i32([1, 2, 3]) },
        { name: 'm', type: 2, data: plain.i64([4n, 5n, 6n]) },
      ],
      3,
      hostile,
    );

  it('a well-formed hand-written file lands (the baseline of the cases below)', async () => {
    const path = join(bench.root(), 'malformed', 'baseline.parquet');
    await ensureDirOf(path);
    await writeFile(path, ints({}));
    for (const { fixture, capabilities } of bench.paths) {
      const db = fixture();
      const outcome = await ingestFile(db.pool, db.root, path, bench.table('base'), capabilities, (t) => db.db.sqlType(t));
      assert.ok(outcome.ok && outcome.rows === 3, JSON.stringify(outcome));
    }
  });

  it('a footer whose row total disagrees with its row groups lands the row groups, as readers take them', async () => {
    const path = join(bench.root(), 'malformed', 'wrong-total.parquet');
    await ensureDirOf(path);
    await writeFile(path, ints({ fileRows: 5 }));
    for (const { fixture, capabilities } of bench.paths) {
      const db = fixture();
      const table = bench.table('total');
      const outcome = await ingestFile(db.pool, db.root, path, table, capabilities, (t) => db.db.sqlType(t));
      assert.ok(outcome.ok && outcome.rows === 3, JSON.stringify(outcome));
      assert.deepEqual(
        (await db.pool.query<{ n: number; m: string }>(`SELECT n, m::text AS m FROM ${table} ORDER BY n`)).map((r) => [Number(r.n), r.m]),
        [
          [1, '4'],
          [2, '5'],
          [3, '6'],
        ],
      );
    }
  });

  it('INT96 timestamps far outside the usual range land as the instants they hold, or are refused', async () => {
    const int96 = (julianDay: number, nanos: bigint) => {
      const b = new Uint8Array(12);
      new DataView(b.buffer).setBigUint64(0, nanos, true);
      new DataView(b.buffer).setUint32(8, julianDay, true);
      return b;
    };
    const file = (values: Uint8Array[]) =>
      miniParquet(
        [
          { name: 'id', type: 1, data: plain.i32(values.map((_, i) => i + 1)) },
          { name: 't', type: 3, data: plain.fixed(values) },
        ],
        values.length,
      );
    // The last microsecond of 1 BC (as Spark, Arrow C++ and DuckDB read it: the day, then the
    // nanoseconds of the day cut to microseconds), the year 10000, a day and more of nanoseconds.
    const path = join(bench.root(), 'malformed', 'int96-far.parquet');
    await ensureDirOf(path);
    await writeFile(
      path,
      file([
        int96(1721425, 86_399_999_999_999n),
        int96(5373485, 0n),
        int96(100_000_000, 0n),
        int96(2440588, 86_400_000_000_000n),
        int96(2440588, 1n << 62n),
      ]),
    );
    for (const { fixture, capabilities } of bench.paths.slice(0, 2)) {
      const db = fixture();
      const table = bench.table('i96');
      const outcome = await ingestFile(db.pool, db.root, path, table, capabilities, (t) => db.db.sqlType(t));
      assert.ok(outcome.ok && outcome.rows === 5, JSON.stringify(outcome));
      assert.deepEqual(
        (await db.pool.query<{ t: string }>(`SELECT t::text AS t FROM ${table} ORDER BY id`)).map((r) => r.t),
        [
          '0001-12-31 23:59:59.999999 BC',
          '10000-01-01 00:00:00',
          '269078-08-07 00:00:00',
          '1970-01-02 00:00:00',
          '2116-02-20 23:53:38.427387',
        ],
      );
    }
    // Nanoseconds past 2^63: signed to Arrow C++ and DuckDB, unsigned to hyperd. A Julian day past
    // what the database holds: the database refuses it.
    await refused(
      'INT96 nanoseconds past 2^63',
      file([int96(2440588, 0n), int96(2440588, (1n << 64n) - 1n)]),
      /^PARQUET_VALUE_OUT_OF_RANGE$/,
      /column "t", row 2: an INT96 timestamp holds 18446744073709551615 nanoseconds of the day/,
      't',
    );
    await refused('INT96 Julian day 2^32-1', file([int96(0xffffffff, 0n)]), /^DB_22/, /timestamp/);
  });

  it('truncated file', async () => {
    const path = join(bench.root(), 'malformed', 'source.parquet');
    await ensureDirOf(path);
    await bench.duckdb().run(`COPY (SELECT i AS id, 'x' || i AS s FROM range(0, 5000) t(i)) TO '${path}' (FORMAT parquet)`);
    const whole = await readFile(path);
    await refused('truncated at 60%', whole.subarray(0, Math.floor(whole.length * 0.6)), /^PARQUET_TRUNCATED$/, /truncated/);
  });

  it('footer length out of range', async () => {
    const bytes = Buffer.from(ints({}));
    bytes.writeUInt32LE(0x7fffffff, bytes.length - 8);
    await refused(
      'footer length 2 GiB in a small file',
      bytes,
      /^PARQUET_CORRUPT$/,
      /footer length \(2147483647 bytes\) is larger than the file/,
    );
  });

  it('a footer beyond the bound', async () => {
    // 66 MiB of file whose last 65 MiB are said to be the footer: refused before it is read.
    const bytes = Buffer.alloc(66 << 20);
    bytes.write('PAR1', 0);
    bytes.writeUInt32LE(65 << 20, bytes.length - 8);
    bytes.write('PAR1', bytes.length - 4);
    await refused(
      'a 65 MiB footer',
      bytes,
      /^PARQUET_TOO_LARGE$/,
      /the footer is 68157440 bytes, beyond the 67108864 bytes this reader accepts/,
    );
  });

  it('page offset out of range', async () => {
    await refused(
      'data page offset beyond the file',
      ints({ dataPageOffset: 1n << 40n }),
      /^PARQUET_CORRUPT$/,
      /column "n" of row group 0 lies outside the file's data/,
    );
  });

  it('page value count out of range', async () => {
    await refused(
      'a page claiming 2^31-1 values',
      ints({ pageNumValues: 0x7fffffff, chunkNumValues: 0x7fffffff }),
      /^PARQUET_(CORRUPT|ROW_COUNT)$/,
      /"n"|rows/,
    );
  });

  it('page size out of range', async () => {
    await refused(
      'a snappy page claiming 2 GiB uncompressed',
      ints({ codec: 1, uncompressedPageSize: 0x7fffffff }),
      /^PARQUET_CORRUPT$/,
      /column "n" of row group 0 cannot be decoded: a page at byte 0 claims 2147483647 bytes uncompressed/,
      'n',
    );
    await refused(
      'a page longer than its column chunk',
      ints({ compressedPageSize: 1 << 20 }),
      /^PARQUET_CORRUPT$/,
      /column "n" of row group 0 cannot be decoded: a page at byte 0 claims 1048576 bytes/,
      'n',
    );
  });

  it('LZO pages: no decoder for them', async () => {
    await refused('LZO pages', ints({ codec: 3 }), /^PARQUET_UNSUPPORTED_CODEC$/, /column "n" of row group 0 is compressed with LZO/, 'n');
  });

  it('a footer the decoder cannot follow', async () => {
    // A TIME logical type without its unit: the footer's decoder fails on a missing field.
    const bytes = miniParquet([{ name: 'at', type: 2, logicalType: [{ id: 7, type: 'struct', value: [] }], data: plain.i64([1n]) }], 1);
    await refused(
      'TIME without a unit',
      bytes,
      /^PARQUET_CORRUPT$/,
      /the Parquet footer is damaged: its field schema\[1\]\.logicalType\.TIME\.\w+ \(a required field of TimeType\) is missing/,
    );
  });

  it('row counts that do not add up', async () => {
    // The row group's own count is what readers go by: its columns must hold that many values.
    await refused(
      'a row group claiming 2^40 rows',
      ints({ groupRows: 1n << 40n }),
      /^PARQUET_CORRUPT$/,
      /column "n" of row group 0 holds 3 values for the group's 1099511627776 rows/,
      'n',
    );
  });

  it('scrambled page bytes', async () => {
    const path = join(bench.root(), 'malformed', 'pages.parquet');
    await ensureDirOf(path);
    await bench
      .duckdb()
      .run(`COPY (SELECT i AS id, 'name' || i AS name FROM range(0, 20000) t(i)) TO '${path}' (FORMAT parquet, CODEC 'snappy')`);
    const bytes = await readFile(path);
    const { parquetMetadata } = await import('hyparquet');
    const meta = parquetMetadata(bytes).row_groups[0]!.columns[1]!.meta_data!;
    const start = Number(meta.dictionary_page_offset || meta.data_page_offset) + 40;
    for (let i = start; i < start + 2000 && i < bytes.length - 100; i++) bytes[i] = (i * 31) & 0xff;
    await refused('scrambled snappy pages', bytes, /^PARQUET_CORRUPT$/, /"name"|Parquet data/);
  });
});
