/**
 * `exportExtract`: one table of a `.hyper` file, alone, in a new file that a hyperd started as
 * Tableau's Hyper API starts it opens, with every row and the exact column types; from a file of
 * the old role `hyperwatch` too; the version asked for; an existing file replaced only when forced.
 * Checked on standalone hyperds of both roles, as Tableau's tools and earlier hyperwatch ran them.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type postgres from 'postgres';
import { createHyperAdapter, fileRole, LEGACY_ROLE, TABLEAU_ROLE } from '../../../adapters/db/hyper/index.ts';
import { copyTo } from '../../../adapters/db/postgres-js/copy-to.ts';
import { openWatcher } from '../../../src/api.ts';
import { dropFile } from '../../../src/producer/drop.ts';
import { exportExtract, ExportRefused } from '../../../src/export/extract.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import { csv, waitFor } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { useRoleServers } from '../../helpers/role-servers.ts';

/** Every column type a Tableau extract commonly holds, each with NULLs, edges and fractions. */
const MANY_TYPES = `CREATE TABLE public.t (
  id BIGINT NOT NULL, amount NUMERIC(18,3) NOT NULL, big NUMERIC(38,10), name TEXT, code VARCHAR(10), flag CHAR(3),
  day DATE, at TIME, ts TIMESTAMP, tz TIMESTAMPTZ, ok BOOLEAN NOT NULL, n INTEGER, s SMALLINT, x DOUBLE PRECISION,
  r REAL, span INTERVAL, raw BYTEA, doc JSON, place GEOGRAPHY, ci TEXT COLLATE "en_US_CI")`;
const MANY_ROWS = [
  `(1, 1.5, 12345678901234567890.0123456789, 'héllo', 'abc', 'x', DATE '2018-01-28', TIME '23:59:59.999999', TIMESTAMP ` +
    `'2018-01-28 23:59:59.999999', TIMESTAMPTZ '2018-01-28 00:00:00.5+05', true, 42, 7, 1.0000000000000002, 1.5, INTERVAL '1 ` +
    `day 2 hours', '\\xdeadbeef', '{"a":1}', 'POINT(1 2)', 'Abc')`,
  `(2, -2.25, NULL, NULL, NULL, NULL, DATE '0044-03-15 BC', TIME '00:00:00', TIMESTAMP '1900-01-01 00:00:00', NULL, false, ` +
    `NULL, NULL, 'NaN', NULL, NULL, NULL, NULL, NULL, NULL)`,
  `(3, 0, -99999999999999999999.9999999999, '', '', '', DATE '9999-12-31', NULL, NULL, TIMESTAMPTZ '1969-12-31 ` +
    `23:59:59.999999+00', true, -2147483648, -32768, -0.0, -3.4e38, INTERVAL '-1 month', '\\x', '[]', NULL, 'zz')`,
];

const COLUMNS_SQL =
  `SELECT n.nspname AS schema, c.relname AS "table", a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, ` +
  `a.attnotnull AS not_null, co.collname AS collation
  FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON a.attrelid = c.oid JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
  LEFT JOIN pg_catalog.pg_collation co ON co.oid = a.attcollation
  WHERE c.relkind = 'r' AND c.relpersistence = 'p' AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND a.attnum ` +
  `> 0 ORDER BY 1, 2, a.attnum`;

describe('export: one table in a file Tableau opens', () => {
  const tmp = useTempDir('hyperwatch-export-');
  const { legacy, on } = useRoleServers(() => tmp.path());

  const versionOf = (sql: postgres.Sql) =>
    sql
      .unsafe('SELECT database_version AS v FROM pg_catalog.hyper_database WHERE datname = current_database()')
      .then((r) => Number(r[0]!.v));
  /** The table's rows as hyperd's own Arrow stream: equal bytes, equal values and types. */
  async function arrowOf(sql: postgres.Sql, table: string): Promise<Buffer> {
    const chunks: Uint8Array[] = [];
    for await (const chunk of copyTo(sql, `COPY (SELECT * FROM ${table} ORDER BY 1) TO STDOUT WITH (FORMAT arrowstream)`))
      chunks.push(chunk);
    return Buffer.concat(chunks);
  }
  const columns = (sql: postgres.Sql) => sql.unsafe(COLUMNS_SQL).then((rows) => rows.map((r) => ({ ...r })));

  /** A file made as earlier hyperwatch releases made every file (role hyperwatch), with their tables beside the user's. */
  async function legacyFile(name: string, version: number, ddl: string, rows: readonly string[]): Promise<string> {
    const database = tmp.path(name);
    await on('legacy', '', (sql) => sql.unsafe(`CREATE DATABASE "${database}" WITH VERSION ${version}`));
    await on('legacy', database, async (sql) => {
      await sql.unsafe(ddl);
      for (const row of rows) await sql.unsafe(`INSERT INTO public.t VALUES ${row}`);
      await sql.unsafe('CREATE TABLE public.hyperwatch_ingest_log (claim_id TEXT)');
      await sql.unsafe(`INSERT INTO public.hyperwatch_ingest_log VALUES ('c1')`);
      await sql.unsafe('CREATE SCHEMA hyperwatch');
      await sql.unsafe('CREATE TABLE hyperwatch.leases (owner TEXT)');
      await sql.unsafe('CREATE TABLE public.other (id INTEGER)');
    });
    assert.equal(fileRole(database), LEGACY_ROLE);
    return database;
  }

  it("a file of the old role exports into one Tableau's hyperd opens: that table alone, every row, the exact column types", async () => {
    const database = await legacyFile('old.hyper', 4, MANY_TYPES, MANY_ROWS);
    const to = tmp.path('old-extract.hyper');
    const result = await exportExtract({ database, table: 't', to, as: 'Extract.Extract' });
    assert.deepEqual(
      { ...result, seconds: 0 },
      {
        to,
        table: 'Extract.Extract',
        rows: 3,
        columns: 20,
        databaseVersion: 4,
        role: TABLEAU_ROLE,
        via: `an embedded hyperd as ${LEGACY_ROLE}`,
        seconds: 0,
      },
    );
    assert.equal(fileRole(to), TABLEAU_ROLE);
    await assert.rejects(
      on('legacy', to, (sql) => sql.unsafe('SELECT 1')),
      /access denied/,
    );

    const source = await on('legacy', database, async (sql) => ({ columns: await columns(sql), arrow: await arrowOf(sql, 'public.t') }));
    const copy = await on('tableau', to, async (sql) => ({
      columns: await columns(sql),
      arrow: await arrowOf(sql, '"Extract"."Extract"'),
      version: await versionOf(sql),
    }));
    // Only the user's table, under its new name, with every column as it was.
    const sourceT = source.columns.filter((c) => c.schema === 'public' && c.table === 't');
    assert.deepEqual(
      copy.columns,
      sourceT.map((c) => ({ ...c, schema: 'Extract', table: 'Extract' })),
    );
    assert.deepEqual(new Set(copy.columns.map((c) => `${c.schema}.${c.table}`)), new Set(['Extract.Extract']));
    assert.ok(
      sourceT.some((c) => c.type === 'real') &&
        sourceT.some((c) => c.type === 'numeric(38,10)') &&
        sourceT.some((c) => c.collation === 'en_US_CI'),
      'the source has the types checked',
    );
    // Byte for byte the same rows, as hyperd itself writes them (values, NULLs and types alike).
    assert.ok(source.arrow.length > 1000);
    assert.ok(copy.arrow.equals(source.arrow), 'the rows differ');
    assert.equal(copy.version, 4, "by default, the source's version");
  });

  it('a file hyperwatch made exports without its bookkeeping, also with the watcher stopped in between', async () => {
    const inbox = await tmp.dir('made');
    const database = tmp.path('made.hyper');
    await dropFile(
      inbox,
      'a.csv',
      csv('id,name', [
        [1, 'a'],
        [2, 'b'],
      ]),
    );
    await dropFile(inbox, 'b.csv', csv('id,name', [[3, 'c']]));
    const handle = await openWatcher(inbox, 'sales.orders', { database, registry: new WatcherRegistry() });
    await waitFor(() => handle.stats.filesIngested === 2, 'both files');
    await handle.stop();
    const to = tmp.path('made-extract.hyper');
    const result = await exportExtract({ database, table: 'sales.orders', to });
    assert.equal(result.rows, 3);
    assert.equal(result.table, 'sales.orders');
    assert.equal(result.databaseVersion, 2);
    const copy = await on('tableau', to, async (sql) => ({
      tables: [...new Set((await columns(sql)).map((c) => `${c.schema}.${c.table}`))],
      rows: await sql.unsafe('SELECT id, name FROM sales.orders ORDER BY id'),
    }));
    assert.deepEqual(copy.tables, ['sales.orders']);
    assert.deepEqual(
      copy.rows.map((r) => [Number(r.id), r.name]),
      [
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
      ],
    );
  });

  it("a large table of a file of Tableau's role: read and written by two hyperds, as within one the stream stalls", {
    timeout: 180_000,
  }, async () => {
    // Source and copy both of Tableau's role: one shared hyperd would serve both sessions, and a
    // stream of this size from one into the other never ends there (seen: 1M rows stall, 300k pass).
    const database = tmp.path('large.hyper');
    const db = createHyperAdapter({ database, announce: false });
    try {
      const pool = await db.openPool({ maxConnections: 1 });
      await pool.query('CREATE TABLE t (id BIGINT NOT NULL, name TEXT)');
      await pool.query(`INSERT INTO t SELECT g, 'name-' || g::text FROM generate_series(1, 1000000) g`);
      await pool.close();
    } finally {
      await db.close();
    }
    const to = tmp.path('large-out.hyper');
    const result = await exportExtract({ database, table: 't', to });
    assert.equal(result.rows, 1_000_000);
    const sums = await on('tableau', to, async (sql) =>
      [...(await sql.unsafe('SELECT COUNT(*) AS n, SUM(id) AS s, MAX(name) AS m FROM t'))].map((r) => ({ ...r })),
    );
    assert.deepEqual(sums, [{ n: '1000000', s: '500000500000', m: 'name-999999' }]);
  });

  it('writes the version asked for; refuses one that cannot hold a column, naming it and the version it needs', async () => {
    const database = await legacyFile('plain.hyper', 2, 'CREATE TABLE public.t (id BIGINT NOT NULL, v NUMERIC(18,2), d DATE)', [
      `(1, 1.25, DATE '2020-02-29')`,
    ]);
    for (const version of [0, 1, 2, 3, 4]) {
      const to = tmp.path(`plain-v${version}.hyper`);
      const result = await exportExtract({ database, table: 't', to, databaseVersion: version });
      assert.equal(result.databaseVersion, version);
      const back = await on('tableau', to, async (sql) => ({
        version: await versionOf(sql),
        rows: (await sql.unsafe(`SELECT id, v, d FROM t`)).map((r) => [Number(r.id), r.v, r.d]),
      }));
      assert.deepEqual(back, { version, rows: [[1, '1.25', new Date('2020-02-29T00:00:00Z')]] });
    }
    const wide = await legacyFile('wide.hyper', 4, MANY_TYPES, MANY_ROWS.slice(0, 1));
    const to = tmp.path('wide-v2.hyper');
    await assert.rejects(exportExtract({ database: wide, table: 't', to, databaseVersion: 2 }), (error: Error) => {
      assert.ok(error instanceof ExportRefused);
      assert.match(
        error.message,
        /version 2 cannot hold the columns big \(numeric\(38,10\), version 3\), r \(real, version 4\): use --database-version 4/,
      );
      return true;
    });
    assert.deepEqual(
      readdirSync(tmp.path()).filter((n) => n.startsWith('wide-v2')),
      [],
      'nothing left behind',
    );
    await assert.rejects(
      exportExtract({ database: wide, table: 't', to, databaseVersion: 5 }),
      /databaseVersion is 5, not a Hyper database version/,
    );
  });

  it('refuses an existing file unless forced, and then replaces it whole, by rename; temp files of dead exports are removed', async () => {
    const database = await legacyFile('force.hyper', 2, 'CREATE TABLE public.t (id BIGINT)', ['(1)', '(2)']);
    const to = tmp.path('force-out.hyper');
    writeFileSync(to, 'not yet an extract');
    // A temp file an export killed mid-way left (its pid is no process).
    const stale = `${to}.export-2147483646.tmp`;
    writeFileSync(stale, 'half a file');
    await assert.rejects(exportExtract({ database, table: 't', to }), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'EXPORT_REFUSED');
      assert.match(error.message, /force-out\.hyper exists: give another path, or force \(--force\) to replace it/);
      return true;
    });
    assert.equal(readFileSync(to, 'utf8'), 'not yet an extract');
    const before = statSync(to).ino;
    const result = await exportExtract({ database, table: 't', to, force: true });
    assert.equal(result.rows, 2);
    assert.notEqual(statSync(to).ino, before, 'a new file renamed over the old one');
    assert.deepEqual(
      await on('tableau', to, async (sql) => (await sql.unsafe('SELECT id FROM t ORDER BY id')).map((r) => Number(r.id))),
      [1, 2],
    );
    assert.deepEqual(
      readdirSync(tmp.path()).filter((n) => n.startsWith('force-out.hyper.')),
      [],
      'no temp file left, the stale one removed',
    );
  });

  it('refusals name what is wrong: a missing table (with the tables there), a missing database, the copy over its source', async () => {
    const database = await legacyFile('refuse.hyper', 2, 'CREATE TABLE public.t (id BIGINT)', ['(1)']);
    await assert.rejects(
      exportExtract({ database, table: 'missing', to: tmp.path('r1.hyper') }),
      /no table missing in the database; its tables: other, t$/,
    );
    await assert.rejects(
      exportExtract({ database: tmp.path('nothing.hyper'), table: 't', to: tmp.path('r2.hyper') }),
      /nothing\.hyper does not exist: check --database/,
    );
    await assert.rejects(exportExtract({ database, table: 't', to: database, force: true }), /the copy cannot replace its source/);
    await assert.rejects(exportExtract({ database, table: 't', to: tmp.path('no-dir', 'r3.hyper') }), /no-dir is not a directory/);
    await assert.rejects(exportExtract({ database, table: 'a.b.c', to: tmp.path('r4.hyper') }), /table: invalid table name "a\.b\.c"/);
    assert.deepEqual(
      readdirSync(tmp.path()).filter((n) => /^r\d/.test(n)),
      [],
      'no file made by a refused export',
    );
  });

  it('reads through a running hyperd given as the endpoint, and never creates a missing database there', async () => {
    const database = await legacyFile('endpoint.hyper', 3, 'CREATE TABLE public.t (id BIGINT, v NUMERIC(30,2))', [
      '(1, 12345678901234567890.12)',
    ]);
    const to = tmp.path('endpoint-out.hyper');
    const result = await exportExtract({ database, table: 't', to, endpoint: `${LEGACY_ROLE}@127.0.0.1:${legacy().port}` });
    assert.equal(result.via, `the hyperd at ${LEGACY_ROLE}@127.0.0.1:${legacy().port}`);
    assert.equal(result.databaseVersion, 3);
    assert.deepEqual(await on('tableau', to, async (sql) => (await sql.unsafe('SELECT v FROM t')).map((r) => r.v)), [
      '12345678901234567890.12',
    ]);
    const missing = tmp.path('not-there.hyper');
    await assert.rejects(
      exportExtract({ database: missing, table: 't', to: tmp.path('r5.hyper'), endpoint: `${LEGACY_ROLE}@127.0.0.1:${legacy().port}` }),
      /does not exist \(hyperd: no such database\)/,
    );
    assert.throws(() => statSync(missing), /ENOENT/, 'the endpoint did not create it');
  });

  it('the adapter reports the version of the file it opened, and warns when another was asked for', async () => {
    const database = tmp.path('v3.hyper');
    const made = createHyperAdapter({ database, databaseVersion: 3 });
    try {
      await (await made.openPool({ maxConnections: 1 })).close();
      assert.equal(made.databaseVersion(), 3);
    } finally {
      await made.close();
    }
    const warnings: string[] = [];
    const logger = { debug() {}, info() {}, warn: (m: string) => void warnings.push(m), error() {} };
    const again = createHyperAdapter({ database, databaseVersion: 1, logger });
    try {
      await (await again.openPool({ maxConnections: 1 })).close();
      assert.equal(again.databaseVersion(), 3, 'an existing file keeps its version');
      // And its types: a version 3 file takes 38-digit numerics, where version 2 would make them TEXT.
      assert.equal(again.sqlType({ kind: 'decimal', precision: 30, scale: 2 }), 'NUMERIC(30,2)');
    } finally {
      await again.close();
    }
    assert.equal(warnings.length, 1);
    assert.match(
      warnings[0]!,
      new RegExp(
        /exists with database version 3; the version asked for \(1\) applies to new files only.*/.source +
          /hyperwatch export --database .*v3\.hyper --table <table> --to <copy\.hyper> --database-version 1/.source,
      ),
    );
  });
});
