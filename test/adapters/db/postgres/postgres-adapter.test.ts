/**
 * The PostgreSQL adapter on its own, on a real PostgreSQL server (a throwaway cluster started for
 * this file; without the PostgreSQL binaries it fails, saying what to install, and never skips):
 * what it declares, URLs and sockets, COPY errors, TCP_NODELAY, closing, and the adapter contract
 * kit every adapter must pass.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { copyColumns, createPostgresAdapter, POSTGRES_URL_MISSING_MESSAGE, resolveUrl } from '../../../../adapters/db/postgres/index.ts';
import { fromDbError } from '../../../../src/errors.ts';
import { testDbAdapter } from '../../../../src/testing.ts';
import type { DbPool } from '../../../../src/types.ts';
import { waitFor } from '../../../helpers/drop.ts';
import { count } from '../../../helpers/env.ts';
import { postgresForFile } from '../../../helpers/postgres-file.ts';

// One cluster for the whole file (see postgres-file.ts).
const { pg, db } = await postgresForFile();

async function* chunks(...texts: string[]): AsyncIterable<string> {
  yield* texts;
}

describe('PostgreSQL adapter', () => {
  let pool: DbPool;
  before(async () => {
    pool = await db.openPool({ maxConnections: 2 });
  });
  after(() => pool.close());

  it('declares what PostgreSQL can do: plain COPY, durable commits, no local files, rows in load order', () => {
    assert.equal(db.name, 'postgres');
    assert.deepEqual(db.capabilities, {
      readsLocalFiles: false,
      arrowStream: false,
      parquet: false,
      durableCommit: true,
      rowsInLoadOrder: true,
    });
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
    const local = createPostgresAdapter({
      url: `postgres://hyperwatch@/${pg.database}?host=${encodeURIComponent(sockets)}&port=${pg.port}`,
    });
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
      const error = await pool
        .transaction((conn) => conn.copyFrom(copy, chunks(data)))
        .then(
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
      assert.equal(
        await pool.transaction((conn) => conn.copyFrom('COPY nodelay (id, name) FROM STDIN WITH (FORMAT csv)', chunks(rows))),
        100,
      );
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const median = times[7]!;
    console.log(`# 100-row COPY FROM STDIN in a transaction: median ${median.toFixed(2)} ms`);
    assert.ok(median < 30, `median ${median.toFixed(1)} ms: Nagle's algorithm is on`);
  });

  it('close ends its pools: their connections leave the server', async () => {
    const backends = async () =>
      Number(
        (
          await pool.query<{ n: string }>(
            `SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`,
          )
        )[0]!.n,
      );
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

// What every adapter must do, on this one: transactions, COPY, describing tables, the ledger, quoting.
testDbAdapter({ name: 'postgres', db });
