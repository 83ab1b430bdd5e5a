/**
 * The PostgreSQL adapter, the watcher protocol and every built-in ingester on a real PostgreSQL
 * server: a throwaway cluster started for this file (test/helpers/postgres.ts). Without the
 * PostgreSQL binaries this file fails, saying what to install; it never skips.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
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
import { copyColumns, createPostgresAdapter, POSTGRES_URL_MISSING_MESSAGE, type PostgresAdapter, resolveUrl } from '../adapters/db/postgres/index.ts';
import { openWatcher, startWatching, stopWatching } from '../src/api.ts';
import { fromDbError } from '../src/errors.ts';
import { READ_CHUNK } from '../src/files.ts';
import { testDbAdapter, testIngester } from '../src/testing.ts';
import type { DbPool } from '../src/types.ts';
import { builtinContracts } from './helpers/contract-samples.ts';
import { csv, drop, failedEntries, leftovers, stagedEntries, waitFor } from './helpers/drop.ts';
import { columnsOf, count, type DbFixture, dbFixture, hyperFixture, sqlTypes, tempDir } from './helpers/env.ts';
import { createManyTypes } from './helpers/many-types.ts';
import { startPostgres } from './helpers/postgres.ts';
import { ROOT } from './helpers/proc.ts';
import { protocolCases } from './helpers/protocol-suite.ts';
import { useWatchBench } from './helpers/watch-bench.ts';

// One cluster for the whole file, started before any test is registered (the contract kit takes
// its `db` when it is registered). The helper also stops it at process exit, whatever happens.
const pg = await startPostgres();
const db: PostgresAdapter = createPostgresAdapter({ url: pg.url });
after(async () => {
  await db.close();
  await pg.stop();
});

const parquetSample = await readFile(join(ROOT, 'test', 'fixtures', 'sample.parquet'));

/** The values of sample.parquet: row i is (i, 'name-i', 1.5 * i, 2026-01-01 + i days). */
function sampleRow(i: number): string {
  const day = new Date(Date.UTC(2026, 0, 1 + i)).toISOString().slice(0, 10);
  return `${i}|name-${i}|${(1.5 * i).toFixed(1)}|${day}`;
}

async function* chunks(...texts: string[]): AsyncIterable<string> {
  yield* texts;
}

/** A temp directory for inboxes and a pool of its own on the file's cluster; the adapter stays open for the other suites. */
async function pgFixture(): Promise<DbFixture> {
  return dbFixture(await tempDir('hyperwatch-pgtest-'), db, { ownsDb: false });
}

describe('PostgreSQL adapter', () => {
  let pool: DbPool;
  before(async () => {
    pool = await db.openPool({ maxConnections: 2 });
  });
  after(() => pool.close());

  it('declares what PostgreSQL can do: plain COPY, durable commits, no local files', () => {
    assert.equal(db.name, 'postgres');
    assert.deepEqual(db.capabilities, { readsLocalFiles: false, arrowStream: false, parquet: false, durableCommit: true });
    assert.equal(db.checkpoint, undefined, 'durable commits need no checkpoint');
    assert.equal(db.epoch, undefined);
    assert.equal(db.sqlType({ kind: 'json' }), 'TEXT');
    assert.equal(db.sqlType({ kind: 'decimal', precision: 38, scale: 4 }), 'NUMERIC(38,4)');
    assert.equal(db.sqlType({ kind: 'real' }), 'REAL');
    assert.equal(db.sqlType({ kind: 'timestamptz' }), 'TIMESTAMPTZ');
  });

  it('describes itself as host, port and database, never with the password', () => {
    assert.equal(db.describe(), `postgres 127.0.0.1:${pg.port}/${pg.database}`);
    assert.ok(!db.describe().includes(pg.password));
    assert.ok(pg.url.includes(pg.password), 'the URL does carry a password');
  });

  it('takes DATABASE_URL when no url is given, and says what to do when there is none', async () => {
    const saved = process.env.DATABASE_URL;
    try {
      delete process.env.DATABASE_URL;
      assert.throws(() => createPostgresAdapter(), { message: POSTGRES_URL_MISSING_MESSAGE });
      process.env.DATABASE_URL = pg.url;
      const fromEnv = createPostgresAdapter();
      const envPool = await fromEnv.openPool({ maxConnections: 1 });
      const [row] = await envPool.query<{ db: string }>('SELECT current_database() AS db');
      assert.equal(row!.db, pg.database);
      await fromEnv.close();
    } finally {
      if (saved === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = saved;
    }
  });

  it('connects through the unix socket with a libpq-style ?host= URL', async () => {
    const sockets = join(pg.root, 'sockets');
    const local = createPostgresAdapter({ url: `postgres://hyperwatch@/${pg.database}?host=${encodeURIComponent(sockets)}&port=${pg.port}` });
    assert.equal(local.describe(), `postgres ${sockets}:${pg.port}/${pg.database}`);
    const localPool = await local.openPool({ maxConnections: 1 });
    const [row] = await localPool.query<{ addr: string | null; db: string }>('SELECT inet_server_addr() AS addr, current_database() AS db');
    assert.equal(row!.addr, null, 'a unix socket has no server address');
    assert.equal(row!.db, pg.database);
    await local.close();
  });

  it('reports a missing unix socket (server down) as transient, to be retried', async () => {
    const down = createPostgresAdapter({ url: `postgres://hyperwatch@/x?host=${encodeURIComponent(join(pg.root, 'no-such-dir'))}&port=1` });
    const downPool = await down.openPool({ maxConnections: 1 });
    const error = await downPool.query('SELECT 1').then(
      () => assert.fail('connected to nothing'),
      (e: unknown) => e,
    );
    const report = fromDbError(error);
    assert.equal(report.kind, 'transient', `${report.code}: ${report.message}`);
    await down.close();
  });

  it('resolves URL forms postgres.js does not read itself', () => {
    assert.deepEqual(resolveUrl('postgres://u@/db?host=/run/pg&port=5433&sslmode=disable'), {
      url: 'postgres://u@localhost/db?sslmode=disable',
      host: ['/run/pg'],
      port: [5433],
      path: '/run/pg/.s.PGSQL.5433',
    });
    assert.deepEqual(resolveUrl('postgres://u:p@[::1]:6000/db'), { url: 'postgres://u:p@[::1]:6000/db', host: ['::1'], port: [6000] });
    assert.equal(resolveUrl('postgres://u:p@h1:5432,h2:5433/db').url, 'postgres://u:p@h1:5432,h2:5433/db');
    assert.equal(createPostgresAdapter({ url: 'postgres://u:secret@[::1]:6000/db' }).describe(), 'postgres [::1]:6000/db');
  });

  it('reads the column list of a COPY statement, quoted names included', () => {
    assert.deepEqual(copyColumns('COPY "s"."t" ("id", "a""b", "x,y") FROM STDIN WITH (FORMAT csv)'), ['id', 'a"b', 'x,y']);
    assert.deepEqual(copyColumns('copy t (Id, name) from stdin'), ['id', 'name']);
    assert.equal(copyColumns('COPY t FROM STDIN'), undefined);
  });

  it('names the line and column of a bad COPY value, as Hyper does', async () => {
    await pool.query('CREATE TABLE copy_errors (id BIGINT, "Amount, EUR" DOUBLE PRECISION NOT NULL)');
    const copy = 'COPY "copy_errors" ("id", "Amount, EUR") FROM STDIN WITH (FORMAT csv, HEADER true)';
    const failure = async (data: string) => {
      const error = await pool.transaction((conn) => conn.copyFrom(copy, chunks(data))).then(
        () => assert.fail('COPY accepted bad data'),
        (e: unknown) => e,
      );
      return fromDbError(error, 'f.csv');
    };
    const bad = await failure('id,"Amount, EUR"\n1,2\n3,abc\n');
    assert.deepEqual([bad.code, bad.kind, bad.line, bad.column], ['DB_22P02', 'data', 3, 2]);
    assert.match(bad.message, /^f\.csv: invalid input syntax for type double precision: "abc" \(line 3, column 2\)$/);
    const missing = await failure('id,"Amount, EUR"\n1,\n');
    assert.deepEqual([missing.code, missing.line, missing.column], ['DB_23502', 2, 2]);
    const ragged = await failure('id,"Amount, EUR"\n1,2,3\n');
    assert.deepEqual([ragged.code, ragged.line, ragged.column], ['DB_22P04', 2, undefined]);
    assert.equal(await count(pool, 'copy_errors'), 0);
  });

  it('opens its sockets with TCP_NODELAY: a small COPY takes milliseconds, not a delayed ACK (~40-90 ms)', async () => {
    await pool.query('CREATE TABLE nodelay (id BIGINT, name TEXT)');
    const rows = Array.from({ length: 100 }, (_, i) => `${i},name-${i}\n`).join('');
    const times: number[] = [];
    for (let i = 0; i < 15; i++) {
      const started = performance.now();
      assert.equal(await pool.transaction((conn) => conn.copyFrom('COPY nodelay (id, name) FROM STDIN WITH (FORMAT csv)', chunks(rows))), 100);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const median = times[7]!;
    console.log(`# 100-row COPY FROM STDIN in a transaction: median ${median.toFixed(2)} ms`);
    assert.ok(median < 30, `median ${median.toFixed(1)} ms: Nagle's algorithm is on`);
  });

  it('close ends its pools: their connections leave the server', async () => {
    const backends = async () =>
      Number((await pool.query<{ n: string }>(`SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`))[0]!.n);
    const before = await backends();
    const other = createPostgresAdapter({ url: pg.url });
    const otherPool = await other.openPool({ maxConnections: 3 });
    await Promise.all([1, 2, 3].map(() => otherPool.query('SELECT pg_sleep(0.05)')));
    assert.equal(await backends(), before + 3);
    await other.close();
    await waitFor(async () => (await backends()) === before, 'connections to close', 5000);
    await assert.rejects(otherPool.query('SELECT 1'));
    await assert.rejects(other.openPool({ maxConnections: 1 }), /closed/);
  });
});

describe('watcher on a real PostgreSQL server', () => {
  /** The file's cluster for the suite; a fresh inbox and table per test. */
  const t = useWatchBench(pgFixture, 'w');

  protocolCases(t, {
    description: () => `postgres 127.0.0.1:${pg.port}/${pg.database}`,
    durableCommit: true,
    fillsDefaults: true,
    badNumberMessage: /^bad\.csv: invalid input syntax for type bigint: "not-a-number" \(line 3, column 2 "amount"\)$/,
  });

  // PostgreSQL only, from here on.
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
    const kept = await t.pool.query<{ note: string }>(`SELECT note FROM ${table} WHERE note IN ('first', '\\.', E'multi\\n\\\\.\\nline', 'last', 'after-1', 'after-2') ORDER BY note`);
    assert.deepEqual(kept.map((r) => r.note).sort(), ['\\.', '\\.', '\\.', 'after-1', 'after-2', 'first', 'last', 'multi\n\\.\nline'].sort());
    const ledger = await t.pool.query<{ file_name: string; row_count: string }>(`SELECT file_name, row_count FROM hyperwatch_ingest_log WHERE target_table = $1 ORDER BY file_name`, [table]);
    assert.deepEqual(ledger.map((r) => [r.file_name, Number(r.row_count)]), [['a.csv', 4], ['b.csv', bigRows]]);
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
    const asText = `id, si::text, i::text, b::text, d::text, n::text, n18::text, bo::text, t, dt::text, tm::text, ts::text, (tz AT TIME ZONE 'UTC')::text AS tz, by::text, j::text`;
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
      tstz: vectorFromArray([new Date(Date.UTC(2024, 1, 29, 12, 30, 45, 123)), null, new Date(0)], new Timestamp(TimeUnit.MILLISECOND, 'UTC')),
      bin: vectorFromArray([Uint8Array.from([0xde, 0xad]), null, new Uint8Array()], new Binary()),
      list: vectorFromArray([[1, 2], [], null], new List(new Field('item', new Int32(), true))),
      st: vectorFromArray([{ a: 1, b: 'x' }, null, { a: null, b: 'y"' }], new Struct([new Field('a', new Int32(), true), new Field('b', new Utf8(), true)])),
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
      `SELECT i16::text, u32::text, f32::text, ok::text, txt, day::text, ts::text, (tstz AT TIME ZONE 'UTC')::text AS tstz, bin::text, list, st, dict
         FROM ${table} ORDER BY u32 DESC`,
    );
    assert.deepEqual([...rows], [
      { i16: '1', u32: '4000000000', f32: '1.5', ok: 'true', txt: 'a,b "c"\nd', day: '2024-02-29', ts: '2024-02-29 12:30:45.123', tstz: '2024-02-29 12:30:45.123', bin: '\\xdead', list: '[1,2]', st: '{"a":1,"b":"x"}', dict: 'red' },
      { i16: null, u32: '1', f32: null, ok: null, txt: '', day: null, ts: '1970-01-01 00:00:00', tstz: '1970-01-01 00:00:00', bin: '\\x', list: null, st: '{"a":null,"b":"y\\""}', dict: 'red' },
      { i16: '-2', u32: '0', f32: '-0.25', ok: 'false', txt: '\\.', day: '1969-12-31', ts: null, tstz: null, bin: null, list: '[]', st: null, dict: 'blue' },
    ]);
    await stopWatching(dir, { registry: t.registry });
  });

  it('loads JSON values exactly: quotes, line breaks, empty strings, nested values, and a lone \\.', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(
      dir,
      'a.jsonl',
      [
        '{"id":1,"s":"a,b \\"c\\"\\nd","o":{"k":[1,2]},"f":1.5}',
        '{"id":2,"s":"\\\\.","o":[],"f":2}',
        '{"id":3,"s":"","o":null}',
      ].join('\n'),
    );
    const first = await startWatching(dir, table, opts);
    assert.equal(first.filesIngested, 1, JSON.stringify(first.lastError));
    const rows = await t.pool.query<{ id: string; s: string | null; o: string | null; f: number | null }>(`SELECT id, s, o, f FROM ${table} ORDER BY id`);
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
    assert.deepEqual(values.map((r) => r.only), ['\\.', 'first', 'last']);
    await stopWatching(single.dir, { registry: t.registry });
  });

  it('loses nothing and fails nothing when PostgreSQL restarts in the middle of a stream of files', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, maxConcurrent: 2, retryDelayMs: { initial: 20, max: 250 } });
    const total = 60;
    let restarted: Promise<void> | undefined;
    for (let i = 0; i < total; i++) {
      await drop(dir, `s${String(i).padStart(2, '0')}.csv`, csv('id,part', [[i * 3, i], [i * 3 + 1, i], [i * 3 + 2, i]]));
      // The restart begins once files are flowing, and more files keep coming while it runs.
      if (i === 20) restarted = pg.restart();
      await new Promise((r) => setTimeout(r, 15));
    }
    await restarted;
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === total, `${total} files after the restart`, 60000);
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.equal(handle.stats.filesIngested, total);
    assert.ok(handle.stats.retries > 0, 'files met the restart and were retried');
    console.log(`# PostgreSQL restart mid-stream: ${handle.stats.retries} retries, ${total} files, none failed`);
    assert.equal(await count(t.pool, table), total * 3);
    const [distinct] = await t.pool.query<{ ids: string }>(`SELECT COUNT(DISTINCT id) AS ids FROM ${table}`);
    assert.equal(Number(distinct!.ids), total * 3, 'no row twice');
    const [ledger] = await t.pool.query<{ n: string; files: string }>(`SELECT COUNT(*) AS n, COUNT(DISTINCT file_name) AS files FROM hyperwatch_ingest_log WHERE target_table = $1`, [table]);
    assert.deepEqual([Number(ledger!.n), Number(ledger!.files)], [total, total]);
    assert.deepEqual(await leftovers(dir), []);
    assert.deepEqual(await failedEntries(dir), []);
    await handle.stop();
    assert.deepEqual(await stagedEntries(dir), []);
  });
});

// The ingester contract kit, each built-in plugin on PostgreSQL (the samples contract.test.ts uses).
for (const contract of builtinContracts()) testIngester({ ...contract, db });

// What every adapter must do, on this one: transactions, COPY, describing tables, the ledger, quoting.
testDbAdapter({ name: 'postgres', db });
