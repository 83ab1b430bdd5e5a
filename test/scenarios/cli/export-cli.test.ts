/**
 * `hyperwatch export` and `--database-version` as a user runs them: an export beside a running
 * `hyperwatch watch` (files dropped during it) gives a one-table file with every committed row;
 * `--force`; the version flag on watch and export producing files of that version (read back on
 * a hyperd started as Tableau's Hyper API starts it), and a wrong one a usage error (exit 2).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import postgres from 'postgres';
import { fileRole, TABLEAU_ROLE } from '../../../adapters/db/hyper/index.ts';
import { holderPath } from '../../../adapters/db/hyper/holder.ts';
import { dropFile } from '../../../src/producer/drop.ts';
import { csv, waitFor } from '../../helpers/drop.ts';
import { suiteResource, useTempDir } from '../../helpers/env.ts';
import { cli } from '../../helpers/proc.ts';
import { startStandaloneHyperd } from '../../helpers/standalone-hyperd.ts';

/** Rows of file `f`: ids f*1000 .. f*1000+rows-1, each naming its file. */
function fileRows(f: number, rows: number): (string | number)[][] {
  return Array.from({ length: rows }, (_, i) => [f * 1000 + i, `f${f}`]);
}

describe('hyperwatch export and --database-version', () => {
  const tmp = useTempDir('hyperwatch-export-cli-');
  const tableau = suiteResource(
    () => startStandaloneHyperd({ user: TABLEAU_ROLE, logDir: tmp.path() }),
    (s) => s.stop(),
    "Tableau's hyperd",
  );

  async function onTableau<T>(database: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
    const sql = postgres({
      host: '127.0.0.1',
      port: tableau().port,
      user: TABLEAU_ROLE,
      database,
      fetch_types: false,
      max: 1,
      onnotice: () => {},
    });
    try {
      return await fn(sql);
    } finally {
      await sql.unsafe(`DETACH DATABASE "${database}"`).catch(() => {});
      await sql.end();
    }
  }
  const tablesOf = (sql: postgres.Sql) =>
    sql
      .unsafe(
        `SELECT n.nspname AS s, c.relname AS t FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace ` +
          `= n.oid WHERE c.relkind = 'r' AND c.relpersistence = 'p' AND n.nspname NOT IN ('pg_catalog', 'information_schema') ` +
          `ORDER BY 1, 2`,
      )
      .then((r) => r.map((x) => `${x.s}.${x.t}`));
  const versionOf = (sql: postgres.Sql) =>
    sql
      .unsafe('SELECT database_version AS v FROM pg_catalog.hyper_database WHERE datname = current_database()')
      .then((r) => Number(r[0]!.v));

  it('beside a running watcher, with files dropped during it: one table, every row committed, each file whole or not at all', {
    timeout: 180_000,
  }, async () => {
    const inbox = await tmp.dir('live');
    const database = tmp.path('live.hyper');
    const watch = cli(['watch', inbox, '--table', 'Sales Orders', '--database', database, '--release-idle-ms', '0']);
    let stderr = '';
    watch.child.stderr!.on('data', (d: string) => (stderr += d));
    try {
      await waitFor(() => /watching/.test(stderr) || watch.child.exitCode !== null, 'the watcher to start', 60_000);
      assert.equal(watch.child.exitCode, null, stderr);
      const holder = JSON.parse(readFileSync(holderPath(database), 'utf8')) as { pid: number };
      // Committed before the export: all of it must be there.
      for (let f = 1; f <= 20; f++) await dropFile(inbox, `a${f}.csv`, csv('id,file', fileRows(f, 50)));
      const count = async () => {
        const q = await cli(['query', '--database', database, '--json', 'SELECT COUNT(*) AS n FROM "Sales Orders"']).done;
        return q.code === 0 ? Number((JSON.parse(q.stdout) as { n: string }[])[0]!.n) : -1;
      };
      await waitFor(async () => (await count()) === 1000, 'the first 20 files', 60_000);

      // Files keep landing while the export runs.
      let dropping = true;
      let dropped = 20;
      const producer = (async () => {
        while (dropping) {
          dropped++;
          await dropFile(inbox, `b${dropped}.csv`, csv('id,file', fileRows(dropped, 50)));
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      const to = tmp.path('live-extract.hyper');
      const run = await cli(['export', '--database', database, '--table', 'Sales Orders', '--to', to, '--as', 'Extract.Extract', '--json'])
        .done;
      dropping = false;
      await producer;
      assert.equal(run.code, 0, run.stderr);
      const result = JSON.parse(run.stdout) as { rows: number; via: string; table: string; role: string };
      assert.match(result.via, new RegExp(`hyperwatch process ${holder.pid}`), 'read through the watcher');
      assert.equal(result.role, TABLEAU_ROLE);
      assert.ok(dropped > 21, `files were dropped during the export (${dropped - 20})`);

      assert.equal(fileRole(to), TABLEAU_ROLE);
      const copy = await onTableau(to, async (sql) => ({
        tables: await tablesOf(sql),
        perFile: await sql.unsafe('SELECT file, COUNT(*) AS n, COUNT(DISTINCT id) AS ids FROM "Extract"."Extract" GROUP BY file'),
        total: Number((await sql.unsafe('SELECT COUNT(*) AS n FROM "Extract"."Extract"'))[0]!.n),
      }));
      assert.deepEqual(copy.tables, ['Extract.Extract'], 'the user table alone, none of hyperwatch’s');
      assert.equal(copy.total, result.rows);
      const files = new Map(copy.perFile.map((r) => [String(r.file), Number(r.n)]));
      for (let f = 1; f <= 20; f++) assert.equal(files.get(`f${f}`), 50, `file ${f}, committed before the export`);
      for (const r of copy.perFile)
        assert.equal(Number(r.n), 50, `${String(r.file)} whole`), assert.equal(Number(r.ids), 50, `${String(r.file)} without duplicates`);

      // Every file the export holds is one the watcher committed (and kept).
      await waitFor(async () => (await count()) === dropped * 50, 'every file', 60_000);
      assert.ok(copy.total <= dropped * 50);
    } finally {
      watch.child.kill('SIGTERM');
      await watch.done;
    }
  });

  it('--force replaces an existing file, which is refused without it (exit 2)', async () => {
    const inbox = await tmp.dir('force');
    const database = tmp.path('force.hyper');
    await dropFile(inbox, 'a.csv', csv('id', [[1], [2]]));
    assert.equal((await cli(['watch', inbox, '--table', 't', '--database', database, '--once']).done).code, 0);
    const to = tmp.path('force-out.hyper');
    const first = await cli(['export', '--database', database, '--table', 't', '--to', to]).done;
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /force-out\.hyper: t, 2 rows, 1 column; database version 2, role tableau_internal_user/);
    const again = await cli(['export', '--database', database, '--table', 't', '--to', to]).done;
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /force-out\.hyper exists: give another path, or force \(--force\) to replace it/);
    await dropFile(inbox, 'b.csv', csv('id', [[3]]));
    assert.equal((await cli(['watch', inbox, '--table', 't', '--database', database, '--once']).done).code, 0);
    const forced = await cli(['export', '--database', database, '--table', 't', '--to', to, '--force']).done;
    assert.equal(forced.code, 0, forced.stderr);
    assert.deepEqual(
      await onTableau(to, async (sql) => (await sql.unsafe('SELECT id FROM t ORDER BY id')).map((r) => Number(r.id))),
      [1, 2, 3],
    );
  });

  it('--database-version makes files of that version on watch and export; the start-up log and summary name it; a wrong one \
exits 2', async () => {
    const inbox = await tmp.dir('version');
    const database = tmp.path('v3.hyper');
    await dropFile(inbox, 'a.csv', csv('id,name', [[1, 'a']]));
    const watch = await cli(['watch', inbox, '--table', 't', '--database', database, '--database-version', '3', '--once', '--json']).done;
    assert.equal(watch.code, 0, watch.stderr);
    assert.match(watch.stderr, /INFO {2}watching .*databaseVersion=3/);
    assert.equal((JSON.parse(watch.stdout) as { databaseVersion: number }).databaseVersion, 3);
    assert.deepEqual(await onTableau(database, async (sql) => [await versionOf(sql), (await sql.unsafe('SELECT name FROM t'))[0]!.name]), [
      3,
      'a',
    ]);

    // By default the source's version; else the one asked for.
    for (const [flag, version] of [
      [[], 3],
      [['--database-version', '0'], 0],
    ] as const) {
      const to = tmp.path(`version-${version}.hyper`);
      const run = await cli(['export', '--database', database, '--table', 't', '--to', to, ...flag]).done;
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`database version ${version}, role tableau_internal_user`));
      assert.equal(await onTableau(to, versionOf), version);
    }

    for (const bad of ['5', '2.5', 'two']) {
      for (const args of [
        ['watch', inbox, '--table', 't', '--database', tmp.path('bad.hyper'), '--once'],
        ['export', '--database', database, '--table', 't', '--to', tmp.path('bad.hyper')],
      ]) {
        const r = await cli([...args, `--database-version=${bad}`]).done;
        assert.equal(r.code, 2, `${args[0]} --database-version=${bad}: ${r.stderr}`);
        assert.match(r.stderr, /--database-version is 0, 1, 2, 3 or 4, got/);
      }
    }
    assert.throws(() => readFileSync(tmp.path('bad.hyper')), /ENOENT/, 'nothing made');
  });
});
