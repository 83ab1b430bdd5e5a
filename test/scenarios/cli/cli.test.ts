/** The `hyperwatch` command, run as a user would, against a real embedded hyperd. */
import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { csv, drop, waitFor } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { cli, hyperdChildrenOf, isRunning, usageError } from '../../helpers/proc.ts';

describe('hyperwatch CLI', () => {
  const tmp = useTempDir('hyperwatch-cli-');

  it('watch --once --json ingests what is ready, exits 1 when a file failed, and query reads the rows', async () => {
    const inbox = await tmp.dir('once');
    await drop(
      inbox,
      'a.csv',
      csv('id,name', [
        [1, 'a'],
        [2, 'b'],
      ]),
    );
    await drop(inbox, 'b.csv', csv('id,name', [[3, 'c']]));
    await drop(inbox, 'c.csv', 'id,name\nxx,d\n');
    const db = tmp.path('once.hyper');
    const run = await cli(['watch', inbox, '--table', 'people', '--database', db, '--once', '--json', '--quiet']).done;
    assert.equal(run.code, 1, run.stderr);
    const summary = JSON.parse(run.stdout);
    assert.equal(summary.stats.filesIngested, 2);
    assert.equal(summary.stats.filesFailed, 1);
    assert.equal(summary.stats.rowsIngested, 3);
    assert.deepEqual((await readdir(join(inbox, 'failed'))).sort(), ['c.csv', 'c.csv.error', 'c.csv.ready']);
    const query = await cli(['query', '--database', db, '--json', 'SELECT id, name FROM people ORDER BY id']).done;
    assert.equal(query.code, 0, query.stderr);
    assert.deepEqual(JSON.parse(query.stdout), [
      { id: '1', name: 'a' },
      { id: '2', name: 'b' },
      { id: '3', name: 'c' },
    ]);
    const text = await cli(['query', '--database', db, 'SELECT COUNT(*) AS n FROM people']).done;
    assert.match(text.stdout, /^n\s*\n-+\n3\s*\n\(1 row\)/m);
  });

  it('watch --schema-evolution add-columns --source-column: adds the new column, and every row names its file', async () => {
    const inbox = await tmp.dir('evolve');
    const db = tmp.path('evolve.hyper');
    const flags = [
      '--table',
      'ev',
      '--database',
      db,
      '--once',
      '--json',
      '--quiet',
      '--schema-evolution',
      'add-columns',
      '--source-column',
      'file=_src',
      '--source-column',
      'claim=_claim',
    ];
    await drop(inbox, 'a.csv', csv('id', [[1]]));
    assert.equal((await cli(['watch', inbox, ...flags]).done).code, 0);
    await drop(inbox, 'b.csv', csv('id,extra', [[2, 'x']]));
    const run = await cli(['watch', inbox, ...flags]).done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).stats.columnsAdded, 1);
    const query = await cli(['query', '--database', db, '--json', 'SELECT id, extra, _src FROM ev ORDER BY id']).done;
    assert.deepEqual(JSON.parse(query.stdout), [
      { id: '1', extra: null, _src: 'a.csv' },
      { id: '2', extra: 'x', _src: 'b.csv' },
    ]);
  });

  it('exits 0 for --once when everything landed', async () => {
    const inbox = await tmp.dir('clean');
    await drop(inbox, 'ok.csv', csv('id', [[1]]));
    const run = await cli(['watch', inbox, '--table', 't', '--database', tmp.path('clean.hyper'), '--once']).done;
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /files ingested: 1/);
    assert.match(run.stderr, /ingested file=ok\.csv rows=1/);
  });

  for (const [label, args, message] of [
    ['an unknown flag', ['watch', '.', '--table', 't', '--bogus'], /Unknown option '--bogus'/],
    ['a missing directory', ['watch', '/nonexistent/inbox', '--table', 't'], /does not exist/],
    ['an invalid table name', ['watch', '.', '--table', 'a.b.c'], /invalid table name/],
    ['a missing --table', ['watch', '.'], /needs --table/],
    ['a bad --max-concurrent', ['watch', '.', '--table', 't', '--max-concurrent', 'many'], /whole number/],
    ['an unknown command', ['frobnicate'], /unknown command/],
    [
      'a bad --schema-evolution',
      ['watch', '.', '--table', 't', '--schema-evolution', 'add'],
      /--schema-evolution is fail or add-columns, got "add"/,
    ],
    [
      'a bad --source-column',
      ['watch', '.', '--table', 't', '--source-column', 'path=_p'],
      /--source-column: "path=_p" is not KEY=COLUMN with KEY one of file, claim, committed/,
    ],
    ['an unknown --adapter', ['watch', '.', '--table', 't', '--adapter', 'mysql'], /--adapter is "mysql", not a known adapter/],
    [
      'a Hyper flag with --adapter postgres',
      ['query', '--adapter', 'postgres', '--url', 'postgres://h/d', '--database', 'x.hyper', 'SELECT 1'],
      /--database applies to the hyper adapter only/,
    ],
    [
      '--url without --adapter postgres',
      ['history', '--url', 'postgres://h/d'],
      /--url applies to the postgres adapter only\. Add --adapter postgres/,
    ],
    ['a bad --since', ['history', '--since', 'yesterday'], /--since expects an ISO date/],
    ['drop of a missing file', ['drop', '/nonexistent/x.csv', '.'], /is not a readable file/],
  ] as const) {
    it(`exits 2 with a one-line error for ${label}`, async () => {
      const run = await usageError(args, message);
      assert.doesNotMatch(run.stderr, /\n\s+at /);
    });
  }

  it('prints help for each command', async () => {
    for (const args of [['--help'], ['watch', '--help'], ['query', '--help']]) {
      const run = await cli(args).done;
      assert.equal(run.code, 0);
      assert.match(run.stdout, /Usage/);
    }
  });

  it('stops cleanly on SIGTERM: summary printed, exit 0, its hyperd gone', async () => {
    const inbox = await tmp.dir('term');
    const { child, done } = cli(['watch', inbox, '--table', 't', '--database', tmp.path('term.hyper'), '--json']);
    let hyperd: number[] = [];
    await waitFor(() => (hyperd = hyperdChildrenOf(child.pid!)).length === 1, 'hyperd to start', 30000);
    await drop(inbox, 'x.csv', csv('id', [[1], [2]]));
    await waitFor(async () => (await readdir(inbox)).filter((n) => n.startsWith('x.csv')).length === 0, 'x.csv consumed', 30000);
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGTERM');
    const run = await done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).stats.filesIngested, 1);
    await waitFor(() => !isRunning(hyperd[0]!), 'hyperd to exit', 15000);
  });

  it('a SIGTERM during the start-up sweep of a backlog stops cleanly: exit 0, no staging folder or lease left, the next start \
lands the rest once', async () => {
    const inbox = await tmp.dir('term-start');
    const db = tmp.path('term-start.hyper');
    const files = 1500;
    for (let f = 0; f < files; f++) await drop(inbox, `f${f}.csv`, csv('id', [[f]]));
    const { child, done } = cli(['watch', inbox, '--table', 't', '--database', db, '--json', '--log-format', 'json']);
    let stderr = '';
    child.stderr!.on('data', (d: string) => (stderr += d));
    await waitFor(() => stderr.includes('"lease taken"'), 'the lease to be taken', 30000);
    child.kill('SIGTERM');
    const run = await done;
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!run.stderr.includes('"message":"watching"'), 'it stopped before its start-up sweep ended');
    const ingested = JSON.parse(run.stdout).stats.filesIngested as number;
    assert.ok(ingested < files, `stopped with ${ingested} of ${files} in`);
    assert.deepEqual(await readdir(join(inbox, '.hyperwatch', 'staging')), [], 'its staging folder is removed');
    const leases = await cli(['query', '--database', db, '--json', 'SELECT COUNT(*) AS n FROM hyperwatch_internal.leases']).done;
    assert.deepEqual(JSON.parse(leases.stdout), [{ n: '0' }], 'its lease is removed');
    const rest = await cli(['watch', inbox, '--table', 't', '--database', db, '--once', '--json', '--quiet']).done;
    assert.equal(rest.code, 0, rest.stderr);
    assert.equal(JSON.parse(rest.stdout).stats.filesIngested, files - ingested);
    const count = await cli(['query', '--database', db, '--json', 'SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM t']).done;
    assert.deepEqual(JSON.parse(count.stdout), [{ n: String(files), d: String(files) }]);
  });

  it('serve: a SIGTERM while its watchers run their start-up sweeps stops them cleanly (exit 0, no staging folder left), the \
next start lands the rest once', async () => {
    const root = await tmp.dir('serve-term');
    const inboxes = ['a', 'b'].map((n) => join(root, n));
    const files = 800;
    for (const inbox of inboxes) {
      await mkdir(inbox);
      for (let f = 0; f < files; f++) await drop(inbox, `f${f}.csv`, csv('id', [[f]]));
    }
    const config = {
      http: { host: '127.0.0.1', port: 0 },
      watchers: inboxes.map((dir, i) => ({ dir, table: `t${i}`, database: join(root, `${i}.hyper`) })),
    };
    await writeFile(join(root, 'hyperwatch.json'), JSON.stringify(config));
    const serve = cli(['serve', '--config', join(root, 'hyperwatch.json'), '--log-format', 'json'], {
      env: { XDG_STATE_HOME: join(root, 'state') },
    });
    let stderr = '';
    serve.child.stderr!.on('data', (d: string) => (stderr += d));
    await waitFor(() => stderr.includes('"lease taken"'), 'the first watcher to take its lease', 30000);
    serve.child.kill('SIGTERM');
    const run = await serve.done;
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!run.stderr.includes('"message":"serving"'), 'it stopped before the start-up sweeps ended');
    for (const [i, inbox] of inboxes.entries()) {
      assert.deepEqual(await readdir(join(inbox, '.hyperwatch', 'staging')).catch(() => []), [], `${inbox}: no staging folder left`);
      const rest = await cli(['watch', inbox, '--table', `t${i}`, '--database', join(root, `${i}.hyper`), '--once', '--json', '--quiet'])
        .done;
      assert.equal(rest.code, 0, rest.stderr);
      const count = await cli([
        'query',
        '--database',
        join(root, `${i}.hyper`),
        '--json',
        `SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM t${i}`,
      ]).done;
      assert.deepEqual(JSON.parse(count.stdout), [{ n: String(files), d: String(files) }], `${inbox}: every file once`);
    }
  });

  for (const command of ['watch', 'serve'] as const) {
    it(`${command}: a second SIGTERM while a big file is still loading exits at once (143); the next start lands the \
file once`, async () => {
      const inbox = await tmp.dir(`term-twice-${command}`);
      const db = tmp.path(`term-twice-${command}.hyper`);
      const rows = 4_000_000;
      await drop(inbox, 'big.csv', `id\n${Array.from({ length: rows }, (_, i) => i).join('\n')}\n`);
      const config = tmp.path(`term-twice-${command}.json`);
      await writeFile(
        config,
        JSON.stringify({ http: { host: '127.0.0.1', port: 0 }, watchers: [{ dir: inbox, table: 'big', database: db }] }),
      );
      const args = command === 'watch' ? ['watch', inbox, '--table', 'big', '--database', db] : ['serve', '--config', config];
      const { child, done } = cli([...args, '--log-format', 'json'], { env: { XDG_STATE_HOME: tmp.path(`state-${command}`) } });
      let stderr = '';
      child.stderr!.on('data', (d: string) => (stderr += d));
      await waitFor(() => stderr.includes('"lease taken"'), 'the lease to be taken', 30000);
      await waitFor(async () => !(await readdir(inbox)).includes('big.csv'), 'big.csv to be claimed', 30000);
      child.kill('SIGTERM');
      await waitFor(() => stderr.includes('SIGTERM: stopping'), 'the first SIGTERM to be seen', 10000);
      const second = Date.now();
      child.kill('SIGTERM');
      const run = await done;
      assert.equal(run.code, 143, run.stderr);
      assert.match(run.stderr, /SIGTERM again: exiting now/);
      console.log(`# ${command} exited ${Date.now() - second} ms after the second SIGTERM`);
      const again = await cli(['watch', inbox, '--table', 'big', '--database', db, '--once', '--json', '--quiet']).done;
      assert.equal(again.code, 0, again.stderr);
      const count = await cli(['query', '--database', db, '--json', 'SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM big']).done;
      assert.deepEqual(JSON.parse(count.stdout), [{ n: String(rows), d: String(rows) }]);
    });
  }

  it('leaves no hyperd behind when the watcher process is killed with SIGKILL', async () => {
    const inbox = await tmp.dir('kill');
    const { child, done } = cli(['watch', inbox, '--table', 't', '--database', tmp.path('kill.hyper')]);
    let hyperd: number[] = [];
    await waitFor(() => (hyperd = hyperdChildrenOf(child.pid!)).length === 1, 'hyperd to start', 30000);
    assert.ok(isRunning(hyperd[0]!));
    child.kill('SIGKILL');
    const run = await done;
    assert.equal(run.signal, 'SIGKILL');
    await waitFor(() => !isRunning(hyperd[0]!), 'the orphaned hyperd to exit (callback connection closed)', 15000);
  });
});
