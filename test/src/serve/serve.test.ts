/**
 * `hyperwatch serve` run as a user would: one process, two directories into two databases (an
 * embedded Hyper file and a real PostgreSQL server), the HTTP API driven over real HTTP, /metrics
 * parsed and checked against what the test dropped, `status` and `history` against the results.
 * The API behind a token: serve-token.test.ts; the metrics text on its own: serve-metrics.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import { dropFile } from '../../../src/producer/drop.ts';
import { csv, waitFor } from '../../helpers/drop.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { startPostgres, type PostgresServer } from '../../helpers/postgres.ts';
import { cli, hyperdChildrenOf, isRunning, jsonLogLines, type Run } from '../../helpers/proc.ts';
import { metric, parseMetrics } from '../../helpers/prometheus-text.ts';

describe('hyperwatch serve', () => {
  let root: string;
  let pg: PostgresServer;
  let serve: ReturnType<typeof cli> | undefined;
  let hyperDir: string;
  let pgDir: string;
  let extraDir: string;
  let api: string;
  let token: string;
  let stderrLines: () => string[];

  before(async () => {
    [root, pg] = await Promise.all([tempDir('hyperwatch-serve-'), startPostgres()]);
    hyperDir = join(root, 'hyper-inbox');
    pgDir = join(root, 'pg-inbox');
    extraDir = join(root, 'extra-inbox');
    await Promise.all([mkdir(hyperDir), mkdir(pgDir), mkdir(extraDir)]);
    const config = {
      $schema: '../schema/hyperwatch.config.schema.json',
      http: { host: '127.0.0.1', port: 0 },
      watchers: [
        { dir: 'hyper-inbox', table: 'events', database: 'events.hyper', maxConcurrent: 2, checkpointDelayMs: 50, databaseVersion: 3 },
        { dir: 'pg-inbox', table: 'orders', adapter: 'postgres', url: pg.url },
      ],
    };
    await writeFile(join(root, 'hyperwatch.json'), JSON.stringify(config, null, 2));
    // serve makes its token in this state folder (changing requests need it).
    serve = cli(['serve', '--config', join(root, 'hyperwatch.json'), '--log-format', 'json'], {
      env: { XDG_STATE_HOME: join(root, 'state') },
    });
    let stderr = '';
    serve.child.stderr!.on('data', (d: string) => (stderr += d));
    stderrLines = () => stderr.split('\n').filter(Boolean);
    await waitFor(() => stderrLines().some((l) => l.includes('"serving"')), 'serve to start both watchers', 60000);
    const listening = jsonLogLines(stderr).find((l) => l.message === 'listening');
    api = listening!.url!;
    token = (await readFile(join(root, 'state', 'hyperwatch', 'serve.token'), 'utf8')).trim();
  });

  after(async () => {
    if (serve && serve.child.exitCode === null) serve.child.kill('SIGKILL');
    await pg?.stop();
    await removeDir(root);
  });

  const get = async (path: string) => {
    const res = await fetch(`${api}${path}`);
    return { status: res.status, text: await res.text() };
  };
  const watchers = async () =>
    (
      JSON.parse((await get('/watchers')).text) as {
        watchers: { directory: string; table: string; stats: { filesIngested: number; filesFailed: number } }[];
      }
    ).watchers;
  const statsOf = async (dir: string) => (await watchers()).find((w) => w.directory === dir)?.stats;

  it('ingests two directories into two databases, and /metrics counts exactly what happened', async () => {
    for (const [i, rows] of [
      [
        [1, 'a'],
        [2, 'b'],
      ],
      [[3, 'c']],
      [
        [4, 'd'],
        [5, 'e'],
        [6, 'f'],
      ],
    ].entries()) {
      await dropFile(hyperDir, `good-${i}.csv`, csv('id,name', rows as (string | number)[][]));
    }
    await dropFile(hyperDir, 'bad.csv', 'id,name\n7,g,unexpected\n');
    await dropFile(
      pgDir,
      'o1.csv',
      csv('order_id,amount', [
        [1, '9.50'],
        [2, '3.25'],
      ]),
    );
    await dropFile(pgDir, 'o2.csv', csv('order_id,amount', [[3, '1.00']]));
    await waitFor(
      async () => {
        const h = await statsOf(hyperDir);
        const p = await statsOf(pgDir);
        return h?.filesIngested === 3 && h.filesFailed === 1 && p?.filesIngested === 2;
      },
      'all drops to be processed',
      30000,
    );

    const response = await fetch(`${api}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const samples = parseMetrics(await response.text());
    const h = { dir: hyperDir, table: 'events' };
    const p = { dir: pgDir, table: 'orders' };
    assert.equal(metric(samples, 'hyperwatch_watchers', {}), 2);
    assert.equal(metric(samples, 'hyperwatch_files_ingested_total', h), 3);
    assert.equal(metric(samples, 'hyperwatch_files_failed_total', h), 1);
    assert.equal(metric(samples, 'hyperwatch_rows_ingested_total', h), 6);
    assert.equal(metric(samples, 'hyperwatch_files_ingested_total', p), 2);
    assert.equal(metric(samples, 'hyperwatch_files_failed_total', p), 0);
    assert.equal(metric(samples, 'hyperwatch_rows_ingested_total', p), 3);
    const bytes =
      Buffer.byteLength(
        csv('order_id,amount', [
          [1, '9.50'],
          [2, '3.25'],
        ]),
      ) + Buffer.byteLength(csv('order_id,amount', [[3, '1.00']]));
    assert.equal(metric(samples, 'hyperwatch_bytes_ingested_total', p), bytes);
    for (const labels of [h, p]) {
      assert.equal(metric(samples, 'hyperwatch_files_in_flight', labels), 0);
      assert.equal(metric(samples, 'hyperwatch_backlog_files', labels), 0);
      assert.equal(metric(samples, 'hyperwatch_backlog_oldest_age_seconds', labels), 0);
      assert.equal(metric(samples, 'hyperwatch_retries_total', labels), 0);
      assert.equal(metric(samples, 'hyperwatch_lost_events_total', labels), 0);
      assert.ok(metric(samples, 'hyperwatch_rescans_total', labels) >= 1);
    }
    // The histogram observed each ingested file once; its buckets are cumulative.
    assert.equal(metric(samples, 'hyperwatch_ingest_duration_seconds_count', h), 3);
    assert.equal(metric(samples, 'hyperwatch_ingest_duration_seconds_bucket', { ...h, le: '+Inf' }), 3);
    assert.ok(metric(samples, 'hyperwatch_ingest_duration_seconds_sum', h) > 0);
    const buckets = samples
      .filter((s) => s.name === 'hyperwatch_ingest_duration_seconds_bucket' && s.labels.dir === hyperDir)
      .map((s) => s.value);
    assert.deepEqual(
      buckets,
      [...buckets].sort((a, b) => a - b),
    );
    assert.equal(metric(samples, 'hyperwatch_ingest_duration_seconds_count', p), 2);

    // The rows are in each database: PostgreSQL read directly.
    const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<{ n: string }[]>`SELECT COUNT(*)::text AS n FROM orders`;
      assert.equal(rows[0]!.n, '3');
    } finally {
      await sql.end();
    }
    assert.deepEqual((await readdir(join(hyperDir, 'failed'))).sort(), ['bad.csv', 'bad.csv.error', 'bad.csv.ready']);
  });

  it('adds and removes a watcher over HTTP', async () => {
    const added = await fetch(`${api}/watchers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ dir: extraDir, table: 'extra', database: join(root, 'extra.hyper'), checkpointDelayMs: 50 }),
    });
    assert.equal(added.status, 201, await added.clone().text());
    assert.equal(((await added.json()) as { watcher: { directory: string } }).watcher.directory, extraDir);
    assert.equal((await watchers()).length, 3);
    await dropFile(extraDir, 'x.csv', csv('id', [[1], [2]]));
    await waitFor(async () => (await statsOf(extraDir))?.filesIngested === 1, 'the added watcher to ingest', 30000);

    const auth = { authorization: `Bearer ${token}` };
    const duplicate = await fetch(`${api}/watchers`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ dir: extraDir, table: 'other', database: join(root, 'other.hyper') }),
    });
    assert.equal(duplicate.status, 409);
    const invalid = await fetch(`${api}/watchers`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ dir: extraDir, table: 'x', maxConcurrent: 0, adapter: 'mysql' }),
    });
    assert.equal(invalid.status, 400);
    const issues = ((await invalid.json()) as { issues: { path: string; fix: string }[] }).issues;
    assert.deepEqual(issues.map((i) => i.path).sort(), ['adapter', 'maxConcurrent']);
    assert.ok(issues.every((i) => i.fix.length > 0));

    const removed = await fetch(`${api}/watchers/${encodeURIComponent(extraDir)}`, { method: 'DELETE', headers: auth });
    assert.equal(removed.status, 200);
    const summary = (
      (await removed.json()) as { stopped: { directory: string; stoppedAt: string | null; stats: { filesIngested: number } } }
    ).stopped;
    assert.equal(summary.directory, extraDir);
    assert.ok(summary.stoppedAt);
    assert.equal(summary.stats.filesIngested, 1);
    assert.deepEqual((await watchers()).map((w) => w.directory).sort(), [hyperDir, pgDir].sort());
    assert.equal((await fetch(`${api}/watchers/${encodeURIComponent(extraDir)}`, { method: 'DELETE', headers: auth })).status, 404);
    // No longer watched: a new drop stays where it is.
    await dropFile(extraDir, 'y.csv', csv('id', [[3]]));
    await new Promise((r) => setTimeout(r, 300));
    assert.ok((await readdir(extraDir)).includes('y.csv.ready'));
    assert.equal(parseMetrics((await get('/metrics')).text).filter((s) => s.labels.dir === extraDir).length, 0);
  });

  it('adds a PostgreSQL watcher over HTTP on the server the config uses, and refuses another', async () => {
    const auth = { authorization: `Bearer ${token}` };
    const dir = join(root, 'pg-extra');
    await mkdir(dir);
    const other = pg.url.replace(/\/[^/?]*(\?|$)/, '/elsewhere$1');
    const refused = await fetch(`${api}/watchers`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ dir, table: 'extra_pg', adapter: 'postgres', url: other }),
    });
    assert.equal(refused.status, 403);
    assert.match(((await refused.json()) as { error: string }).error, /is not a server the config uses or lists/);
    const added = await fetch(`${api}/watchers`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ dir, table: 'extra_pg', adapter: 'postgres', url: pg.url }),
    });
    assert.equal(added.status, 201, await added.clone().text());
    assert.equal((await watchers()).length, 3);
    const removed = await fetch(`${api}/watchers/${encodeURIComponent(dir)}`, { method: 'DELETE', headers: auth });
    assert.equal(removed.status, 200);
  });

  it('refuses requests from web pages when no token is set', async () => {
    const res = await fetch(`${api}/watchers`, { headers: { origin: 'http://example.com' } });
    assert.equal(res.status, 403);
    assert.equal((await get('/nope')).status, 404);
  });

  it('hyperwatch status prints the running watchers', async () => {
    const env = { XDG_STATE_HOME: join(root, 'state') };
    const run = await cli(['status', '--url', api], { env }).done;
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, new RegExp(`${hyperDir.replaceAll('/', '\\/')} → events`));
    assert.match(run.stdout, /ingested: 3 files, 6 rows/);
    assert.match(run.stdout, /failed: 1/);
    assert.match(run.stdout, /last error .*bad\.csv/);
    assert.match(run.stdout, /→ orders \(postgres /);
    // The file's version, as configured (databaseVersion 3), in the text and in GET /watchers.
    assert.match(run.stdout, /→ events \(hyper .*events\.hyper \(embedded hyperd\), database version 3\)/);
    const listed = JSON.parse((await get('/watchers')).text) as { watchers: { table: string; databaseVersion?: number }[] };
    assert.deepEqual(listed.watchers.map((w) => [w.table, w.databaseVersion]).sort(), [
      ['events', 3],
      ['orders', undefined],
    ]);
    // Where a reader connects while serve runs: the Hyper watcher's hyperd; it answers there.
    const readers =
      /readers connect at 127\.0\.0\.1:(\d+): psql "host=127\.0\.0\.1 port=\d+ user=tableau_internal_user dbname=(.*events\.hyper)"/.exec(
        run.stdout,
      );
    assert.ok(readers, run.stdout);
    assert.equal(run.stdout.match(/readers connect at/g)?.length, 1, 'none for the PostgreSQL watcher');
    const reader = postgres({
      host: '127.0.0.1',
      port: Number(readers[1]),
      user: 'tableau_internal_user',
      database: readers[2],
      fetch_types: false,
      max: 1,
      onnotice: () => {},
    });
    try {
      assert.deepEqual([...(await reader.unsafe('SELECT COUNT(*)::int AS n FROM events'))], [{ n: 6 }]);
      await reader.unsafe(`DETACH DATABASE "${readers[2]}"`);
    } finally {
      await reader.end();
    }
    const json = await cli(['status', '--url', api, '--json'], { env }).done;
    assert.equal((JSON.parse(json.stdout) as unknown[]).length, 2);
    const nobody = await cli(['status', '--url', 'http://127.0.0.1:1']).done;
    assert.equal(nobody.code, 1);
    assert.match(nobody.stderr, /no hyperwatch serve answers at http:\/\/127\.0\.0\.1:1/);
  });

  it('stops on SIGTERM with exit 0, logs only JSON lines, and leaves no hyperd', async () => {
    const hyperd = hyperdChildrenOf(serve!.child.pid!);
    assert.equal(hyperd.length, 1, 'one embedded hyperd serves both Hyper databases');
    serve!.child.kill('SIGTERM');
    const run: Run = await serve!.done;
    assert.equal(run.code, 0, run.stderr);
    for (const line of stderrLines()) assert.doesNotThrow(() => JSON.parse(line), `not a JSON log line: ${line}`);
    const failed = stderrLines()
      .map((l) => JSON.parse(l) as { level: string; message: string; file?: string })
      .find((l) => l.message === 'failed');
    assert.equal(failed?.level, 'error');
    assert.equal(failed?.file, 'bad.csv');
    await waitFor(() => !isRunning(hyperd[0]!), 'hyperd to exit', 15000);
  });

  it('history prints the ledger of each database', async () => {
    const hyper = await cli(['history', '--database', join(root, 'events.hyper'), '--json']).done;
    assert.equal(hyper.code, 0, hyper.stderr);
    const entries = JSON.parse(hyper.stdout) as { file: string; table: string; rows: number; committedAt: string }[];
    assert.deepEqual(entries.map((e) => e.file).sort(), ['good-0.csv', 'good-1.csv', 'good-2.csv']);
    assert.deepEqual(entries.map((e) => e.rows).sort(), [1, 2, 3]);
    assert.ok(entries.every((e) => e.table === 'events' && Date.now() - Date.parse(e.committedAt) < 10 * 60_000));

    const text = await cli(['history', '--adapter', 'postgres', '--url', pg.url, '--since', '1h']).done;
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^committed_at\s+\| file\s+\| table\s+\| rows/);
    assert.match(text.stdout, /\| o1\.csv \| orders \| 2 /);
    assert.match(text.stdout, /\| o2\.csv \| orders \| 1 /);
    assert.match(text.stdout, /\(2 rows\)/);
    const future = await cli(['history', '--adapter', 'postgres', '--url', pg.url, '--since', '2999-01-01']).done;
    assert.match(future.stdout, /\(0 rows\)/);
    const otherTable = await cli(['history', '--adapter', 'postgres', '--table', 'nope'], { env: { DATABASE_URL: pg.url } }).done;
    assert.equal(otherTable.code, 0, otherTable.stderr);
    assert.match(otherTable.stdout, /\(0 rows\)/);
  });

  it('watch --adapter postgres ingests into PostgreSQL (URL from --url or DATABASE_URL)', async () => {
    const inbox = join(root, 'cli-pg');
    await mkdir(inbox);
    await dropFile(
      inbox,
      'p.csv',
      csv('k,v', [
        [1, 'x'],
        [2, 'y'],
      ]),
    );
    const run = await cli(['watch', inbox, '--table', 'cli_pg', '--adapter', 'postgres', '--once', '--json'], {
      env: { DATABASE_URL: pg.url },
    }).done;
    assert.equal(run.code, 0, run.stderr);
    const summary = JSON.parse(run.stdout) as { database: string; stats: { rowsIngested: number } };
    assert.match(summary.database, /^postgres /);
    assert.equal(summary.stats.rowsIngested, 2);
    const query = await cli(['query', '--adapter', 'postgres', '--url', pg.url, '--json', 'SELECT k, v FROM cli_pg ORDER BY k']).done;
    assert.equal(query.code, 0, query.stderr);
    assert.deepEqual(JSON.parse(query.stdout), [
      { k: '1', v: 'x' },
      { k: '2', v: 'y' },
    ]);
  });
});
