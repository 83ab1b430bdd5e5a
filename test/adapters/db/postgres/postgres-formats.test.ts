/**
 * Every file format through the watcher into a real PostgreSQL server (a throwaway cluster
 * started for this file): CSV `\.` lines, Parquet and Arrow through the decoding fallback with
 * exact values, JSON values exactly; and the ingester contract kit of each built-in plugin.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  Binary,
  Bool,
  DateDay,
  Dictionary,
  Field,
  Float32,
  Int16,
  Int32,
  List,
  Struct,
  Table,
  tableToIPC,
  Timestamp,
  TimeUnit,
  Uint32,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { startWatching, stopWatching } from '../../../../src/api.ts';
import { READ_CHUNK } from '../../../../src/protocol/files.ts';
import { testIngester } from '../../../../src/testing.ts';
import { builtinContracts } from '../../../helpers/contract-samples.ts';
import { drop, failedEntries, stagedEntries } from '../../../helpers/drop.ts';
import { columnsOf, count, hyperFixture, sqlTypes } from '../../../helpers/env.ts';
import { createManyTypes } from '../../../helpers/many-types.ts';
import { ROOT } from '../../../helpers/proc.ts';
import { useWatchBench } from '../../../helpers/watch-bench.ts';
import { postgresForFile } from '../../../helpers/postgres-file.ts';

// One cluster for the whole file (see postgres-file.ts).
const { db, pgFixture } = await postgresForFile();

const parquetSample = await readFile(join(ROOT, 'test', 'fixtures', 'sample.parquet'));

/** The values of sample.parquet: row i is (i, 'name-i', 1.5 * i, 2026-01-01 + i days). */
function sampleRow(i: number): string {
  const day = new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10);
  return `${i}|name-${i}|${(1.5 * i).toFixed(1)}|${day}`;
}

describe('file formats on a real PostgreSQL server', () => {
  /** The file's cluster for the suite; a fresh inbox and table per test. */
  const t = useWatchBench(pgFixture, 'w');

  it('keeps every row after a `\\.` line: PostgreSQL up to 17 would end the CSV COPY there', async () => {
    const { dir, table, opts } = await t.inbox();
    // LF: a `\.` record between rows, and one inside a quoted multi-line value (data either way).
    await drop(dir, 'a.csv', 'note\nfirst\n\\.\n"multi\n\\.\nline"\nlast\n');
    // CRLF, over 1 MiB: a `\.` record split between the file's first two read chunks, and one
    // as the last record without a line end.
    let big = 'note\r\n';
    for (let i = 0; big.length < READ_CHUNK - 20; i++) big += `row-${String(i).padStart(6, '0')}\r\n`;
    big += `${'p'.repeat(READ_CHUNK - 1 - big.length - 2)}\r\n\\.\r\nafter-1\r\nafter-2\r\n\\.`;
    assert.equal(big.indexOf('\r\n\\.\r\n'), READ_CHUNK - 3, 'the `\\` is the last byte of the first chunk');
    await drop(dir, 'b.csv', big);
    const bigRows = big.split('\r\n').length - 1;

    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 0);
    assert.equal(stats.filesIngested, 2);
    assert.equal(stats.rowsIngested, 4 + bigRows);
    assert.equal(await count(t.pool, table), 4 + bigRows);
    const kept = await t.pool.query<{ note: string }>(
      `SELECT note FROM ${table} WHERE note IN ('first', '\\.', E'multi\\n\\\\.\\nline', 'last', 'after-1', 'after-2') ORDER BY note`,
    );
    assert.deepEqual(
      kept.map((r) => r.note).sort(),
      ['\\.', '\\.', '\\.', 'after-1', 'after-2', 'first', 'last', 'multi\n\\.\nline'].sort(),
    );
    const ledger = await t.pool.query<{ file_name: string; row_count: string }>(
      `SELECT file_name, row_count FROM hyperwatch_internal.ingest_log WHERE target_table = $1 ORDER BY file_name`,
      [table],
    );
    assert.deepEqual(
      ledger.map((r) => [r.file_name, Number(r.row_count)]),
      [
        ['a.csv', 4],
        ['b.csv', bigRows],
      ],
    );
    await stopWatching(dir, { registry: t.registry });
  });

  it('fails a two-column CSV at its `\\.` line, naming the line, instead of loading the rows before it', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'cut.csv', 'id,note\n1,a\n\\.\n2,b\n');
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesIngested, 0);
    assert.equal(stats.filesFailed, 1);
    assert.deepEqual(await failedEntries(dir), ['cut.csv', 'cut.csv.error', 'cut.csv.ready']);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'cut.csv.error'), 'utf8'));
    assert.equal(report.kind, 'data');
    assert.equal(report.line, 3);
    assert.match(report.message, /^cut\.csv: missing data for column "note"/);
    // The whole transaction rolled back, the table it created included.
    assert.equal(await t.pool.transaction((c) => c.describeTable({ name: table })), null, 'nothing of the failed file');
    await stopWatching(dir, { registry: t.registry });
  });

  it('loads a Parquet file into a table of its own, decoded here and streamed (PostgreSQL does not read Parquet)', async () => {
    const pq = await t.inbox();
    await drop(pq.dir, 'sample.parquet', parquetSample);
    const pqStats = await startWatching(pq.dir, pq.table, pq.opts);
    assert.equal(pqStats.filesIngested, 1, JSON.stringify(pqStats.lastError));
    assert.equal(pqStats.rowsIngested, 25);
    assert.deepEqual(await columnsOf(t.pool, pq.table), ['id integer', 'name text', 'score numeric(12,1)', 'day date']);
    const pqRows = await t.pool.query<{ line: string }>(`SELECT concat_ws('|', id, name, score, day) AS line FROM ${pq.table} ORDER BY id`);
    assert.deepEqual(
      pqRows.map((r) => r.line),
      Array.from({ length: 25 }, (_, i) => sampleRow(i + 1)),
    );
    await stopWatching(pq.dir, { registry: t.registry });
    assert.deepEqual(await stagedEntries(pq.dir), []);
  });

  it('loads a Parquet file of many types (written by hyperd) through the decoding fallback with exact values', async () => {
    // The file comes from hyperd (PostgreSQL writes no Parquet); the expected rows from the same
    // values inserted into PostgreSQL.
    const hyper = await hyperFixture();
    let parquet: Buffer;
    try {
      await createManyTypes(hyper.pool, 'src');
      const path = join(hyper.root, 'many.parquet');
      await hyper.pool.query(`COPY (SELECT * FROM src ORDER BY id) TO '${path}' WITH (FORMAT parquet)`);
      parquet = await readFile(path);
    } finally {
      await hyper.close();
    }
    const { dir, table, opts } = await t.inbox();
    await createManyTypes(t.pool, `${table}_src`);
    await drop(dir, 'many.parquet', parquet);
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.equal(stats.rowsIngested, 5);
    assert.deepEqual(await sqlTypes(t.pool, table), [
      'integer',
      'smallint',
      'integer',
      'bigint',
      'double precision',
      'numeric(10,3)',
      'numeric(18,3)',
      'boolean',
      'text',
      'date',
      'time without time zone',
      'timestamp without time zone',
      'timestamp with time zone',
      'bytea',
      'text',
    ]);
    const asText =
      `id, si::text, i::text, b::text, d::text, n::text, n18::text, bo::text, t, dt::text, tm::text, ts::text, (tz AT TIME ` +
      `ZONE 'UTC')::text AS tz, by::text, j::text`;
    const loaded = (await t.pool.query(`SELECT ${asText} FROM ${table} ORDER BY id`)).map((r) => ({ ...r }));
    const expected = (await t.pool.query(`SELECT ${asText} FROM ${table}_src ORDER BY id`)).map((r) => ({ ...r }));
    assert.equal(loaded.length, 5);
    assert.deepEqual(loaded, expected);
    await stopWatching(dir, { registry: t.registry });
  });

  it('loads Arrow types through the CSV fallback with their exact values', async () => {
    const { dir, table, opts } = await t.inbox();
    const typed = new Table({
      i16: vectorFromArray([1, -2, null], new Int16()),
      u32: vectorFromArray([4000000000, 0, 1], new Uint32()),
      f32: vectorFromArray([1.5, -0.25, null], new Float32()),
      ok: vectorFromArray([true, false, null], new Bool()),
      txt: vectorFromArray(['a,b "c"\nd', '\\.', ''], new Utf8()),
      day: vectorFromArray([new Date(Date.UTC(2024, 1, 29)), new Date(Date.UTC(1969, 11, 31)), null], new DateDay()),
      ts: vectorFromArray([new Date(Date.UTC(2024, 1, 29, 12, 30, 45, 123)), null, new Date(0)], new Timestamp(TimeUnit.MILLISECOND)),
      tstz: vectorFromArray(
        [new Date(Date.UTC(2024, 1, 29, 12, 30, 45, 123)), null, new Date(0)],
        new Timestamp(TimeUnit.MILLISECOND, 'UTC'),
      ),
      bin: vectorFromArray([Uint8Array.from([0xde, 0xad]), null, new Uint8Array()], new Binary()),
      list: vectorFromArray([[1, 2], [], null], new List(new Field('item', new Int32(), true))),
      st: vectorFromArray(
        [{ a: 1, b: 'x' }, null, { a: null, b: 'y"' }],
        new Struct([new Field('a', new Int32(), true), new Field('b', new Utf8(), true)]),
      ),
      dict: vectorFromArray(['red', 'blue', 'red'], new Dictionary(new Utf8(), new Int32())),
    });
    await drop(dir, 'types.arrow', tableToIPC(typed, 'file'));
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.deepEqual(await sqlTypes(t.pool, table), [
      'smallint',
      'bigint',
      'real',
      'boolean',
      'text',
      'date',
      'timestamp without time zone',
      'timestamp with time zone',
      'bytea',
      'text',
      'text',
      'text',
    ]);
    const rows = await t.pool.query<Record<string, string | null>>(
      `SELECT i16::text, u32::text, f32::text, ok::text, txt, day::text, ts::text, (tstz AT TIME ZONE 'UTC')::text AS tstz, ` +
        `bin::text, list, st, dict
         FROM ${table} ORDER BY u32 DESC`,
    );
    assert.deepEqual(
      [...rows],
      [
        {
          i16: '1',
          u32: '4000000000',
          f32: '1.5',
          ok: 'true',
          txt: 'a,b "c"\nd',
          day: '2024-02-29',
          ts: '2024-02-29 12:30:45.123',
          tstz: '2024-02-29 12:30:45.123',
          bin: '\\xdead',
          list: '[1,2]',
          st: '{"a":1,"b":"x"}',
          dict: 'red',
        },
        {
          i16: null,
          u32: '1',
          f32: null,
          ok: null,
          txt: '',
          day: null,
          ts: '1970-01-01 00:00:00',
          tstz: '1970-01-01 00:00:00',
          bin: '\\x',
          list: null,
          st: '{"a":null,"b":"y\\""}',
          dict: 'red',
        },
        {
          i16: '-2',
          u32: '0',
          f32: '-0.25',
          ok: 'false',
          txt: '\\.',
          day: '1969-12-31',
          ts: null,
          tstz: null,
          bin: null,
          list: '[]',
          st: null,
          dict: 'blue',
        },
      ],
    );
    await stopWatching(dir, { registry: t.registry });
  });

  it('loads JSON values exactly: quotes, line breaks, empty strings, nested values, and a lone \\.', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(
      dir,
      'a.jsonl',
      ['{"id":1,"s":"a,b \\"c\\"\\nd","o":{"k":[1,2]},"f":1.5}', '{"id":2,"s":"\\\\.","o":[],"f":2}', '{"id":3,"s":"","o":null}'].join(
        '\n',
      ),
    );
    const first = await startWatching(dir, table, opts);
    assert.equal(first.filesIngested, 1, JSON.stringify(first.lastError));
    const rows = await t.pool.query<{ id: string; s: string | null; o: string | null; f: number | null }>(
      `SELECT id, s, o, f FROM ${table} ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.s, r.o, r.f]),
      [
        [1, 'a,b "c"\nd', '{"k":[1,2]}', 1.5],
        [2, '\\.', '[]', 2],
        [3, '', null, null],
      ],
    );
    await stopWatching(dir, { registry: t.registry });
    // One column: a record whose value is \. is a line that is just \. in the COPY text.
    const single = await t.inbox();
    await drop(single.dir, 'b.jsonl', '{"only":"first"}\n{"only":"\\\\."}\n{"only":"last"}\n');
    const stats = await startWatching(single.dir, single.table, single.opts);
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.equal(stats.rowsIngested, 3);
    const values = await t.pool.query<{ only: string }>(`SELECT "only" FROM ${single.table} ORDER BY "only"`);
    assert.deepEqual(
      values.map((r) => r.only),
      ['\\.', 'first', 'last'],
    );
    await stopWatching(single.dir, { registry: t.registry });
  });
});

// The ingester contract kit, each built-in plugin on PostgreSQL (the samples test/src/testing/contract.test.ts uses).
for (const contract of builtinContracts()) testIngester({ ...contract, db });
