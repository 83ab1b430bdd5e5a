/**
 * A hyperd shared with other clients (`--endpoint`), with its own users and passwords, and many
 * databases on one embedded hyperd: run as a user would, on real hyperd processes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import postgres from 'postgres';
import { createHyperAdapter } from '../../../adapters/db/hyper/index.ts';
import { openWatcher } from '../../../src/api.ts';
import { dropFile } from '../../../src/producer/drop.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import { validateConfig } from '../../../src/serve/config.ts';
import { csv } from '../../helpers/drop.ts';
import { suiteResource, useTempDir } from '../../helpers/env.ts';
import { cli } from '../../helpers/proc.ts';
import { startStandaloneHyperd } from '../../helpers/standalone-hyperd.ts';

describe('a shared hyperd beside other clients', () => {
  const tmp = useTempDir('hyperwatch-shared-');
  const server = suiteResource(
    () => startStandaloneHyperd({ user: 'hyperwatch', logDir: tmp.path() }),
    (s) => s.stop(),
    'the shared hyperd',
  );

  it('10 of 10 `watch --once --endpoint` starts succeed while another client polls the same database', async () => {
    const { port } = server();
    const database = tmp.path('polled.hyper');
    const created = postgres({ host: '127.0.0.1', port, user: 'hyperwatch', database: '', fetch_types: false, max: 1, onnotice: () => {} });
    await created.unsafe(`CREATE DATABASE IF NOT EXISTS "${database}"`);
    await created.end();
    // The other client: a new session per COUNT(*), so the database is attached and unloaded all the time.
    let polling = true;
    let polls = 0;
    const poller = (async () => {
      while (polling) {
        const sql = postgres({ host: '127.0.0.1', port, user: 'hyperwatch', database, fetch_types: false, max: 1, onnotice: () => {} });
        await sql.unsafe('SELECT COUNT(*) FROM pg_catalog.pg_class').catch(() => {});
        await sql.end();
        polls++;
      }
    })();
    const runs = [];
    try {
      for (let i = 0; i < 10; i++) {
        const inbox = await tmp.dir(`polled-${i}`);
        await dropFile(inbox, 'a.csv', csv('id', [[i]]));
        runs.push(
          await cli([
            'watch',
            inbox,
            '--table',
            't',
            '--database',
            database,
            '--endpoint',
            `127.0.0.1:${port}`,
            '--once',
            '--json',
            '--quiet',
          ]).done,
        );
      }
    } finally {
      polling = false;
      await poller;
    }
    assert.equal(server().exitedEarly(), undefined, 'the shared hyperd kept running');
    assert.ok(polls > 10, `the other client polled (${polls} times)`);
    const failed = runs.filter((r) => r.code !== 0).map((r) => r.stderr);
    assert.deepEqual(failed, [], 'every start succeeded');
    assert.equal(
      runs.reduce((n, r) => n + (JSON.parse(r.stdout) as { stats: { filesIngested: number } }).stats.filesIngested, 0),
      10,
    );
    const rows = await cli(['query', '--database', database, '--endpoint', `127.0.0.1:${port}`, '--json', 'SELECT COUNT(*) AS n FROM t'])
      .done;
    assert.deepEqual(JSON.parse(rows.stdout), [{ n: '10' }]);
  });
});

describe('an endpoint with its own user', () => {
  const tmp = useTempDir('hyperwatch-user-');
  const server = suiteResource(
    () => startStandaloneHyperd({ user: 'tableau_internal_user', logDir: tmp.path() }),
    (s) => s.stop(),
    'the hyperd',
  );

  it('connects as user@host:port from the CLI and the API; without the user the error names it', async () => {
    const { port } = server();
    const inbox = await tmp.dir('in');
    await dropFile(inbox, 'a.csv', csv('id', [[1], [2]]));
    const database = tmp.path('users.hyper');
    const wrong = await cli(['watch', inbox, '--table', 't', '--database', database, '--endpoint', `127.0.0.1:${port}`, '--once']).done;
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /unable to connect as 'hyperwatch'/);
    const run = await cli([
      'watch',
      inbox,
      '--table',
      't',
      '--database',
      database,
      '--endpoint',
      `tableau_internal_user@127.0.0.1:${port}`,
      '--once',
      '--json',
    ]).done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal((JSON.parse(run.stdout) as { stats: { filesIngested: number } }).stats.filesIngested, 1);
    assert.match(run.stderr, /tableau_internal_user@127\.0\.0\.1/);

    const db = createHyperAdapter({ database, endpoint: `tableau_internal_user@127.0.0.1:${port}` });
    try {
      const pool = await db.openPool({ maxConnections: 1 });
      assert.deepEqual([...(await pool.query('SELECT COUNT(*) AS n FROM t'))], [{ n: '2' }]);
    } finally {
      await db.close();
    }
  });

  it('a serve config takes user@host:port', async () => {
    const config = await validateConfig(
      { watchers: [{ dir: tmp.path(), table: 't', endpoint: 'tableau_internal_user@127.0.0.1:7483' }] },
      'test.json',
      { baseDir: tmp.path() },
    );
    assert.equal(config.watchers[0]!.endpoint, 'tableau_internal_user@127.0.0.1:7483');
  });

  it('a serve config with a password in its endpoint is refused without echoing it', async () => {
    await assert.rejects(
      validateConfig({ watchers: [{ dir: tmp.path(), table: 't', endpoint: 'bob:hunter2@127.0.0.1:7483' }] }, 'test.json', {
        baseDir: tmp.path(),
      }),
      (error: Error) =>
        /watchers\[0\]\.endpoint/.test(error.message) && /bob:\*\*\*@/.test(error.message) && !error.message.includes('hunter2'),
    );
  });

  it('refuses a password written into the endpoint, without echoing it', async () => {
    const run = await cli(['query', '--endpoint', 'bob:hunter2@127.0.0.1:7483', 'SELECT 1']).done;
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /a password does not go in the endpoint.*HYPERWATCH_ENDPOINT_PASSWORD/);
    assert.doesNotMatch(run.stderr + run.stdout, /hunter2/);
  });
});

describe('an endpoint with a password', () => {
  const tmp = useTempDir('hyperwatch-password-');
  const secret = 'pw-7f3a-secret';
  const server = suiteResource(
    () => startStandaloneHyperd({ user: 'bob', password: secret, logDir: tmp.path() }),
    (s) => s.stop(),
    'the hyperd',
  );

  it('takes the password from HYPERWATCH_ENDPOINT_PASSWORD, and never prints it', async () => {
    const { port } = server();
    const inbox = await tmp.dir('in');
    await dropFile(inbox, 'a.csv', csv('id', [[1]]));
    const database = tmp.path('secret.hyper');
    const endpoint = `bob@127.0.0.1:${port}`;
    const bad = await cli(
      ['watch', inbox, '--table', 't', '--database', database, '--endpoint', endpoint, '--once', '--log-format', 'json'],
      {
        env: { HYPERWATCH_ENDPOINT_PASSWORD: `${secret}-wrong` },
      },
    ).done;
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /unable to connect as 'bob'/);
    assert.doesNotMatch(bad.stderr + bad.stdout, /pw-7f3a/);
    const good = await cli(['watch', inbox, '--table', 't', '--database', database, '--endpoint', endpoint, '--once', '--json'], {
      env: { HYPERWATCH_ENDPOINT_PASSWORD: secret },
    }).done;
    assert.equal(good.code, 0, good.stderr);
    assert.doesNotMatch(good.stderr + good.stdout, /pw-7f3a/);
    const rows = await cli(['query', '--database', database, '--endpoint', endpoint, '--json', 'SELECT COUNT(*) AS n FROM t'], {
      env: { HYPERWATCH_ENDPOINT_PASSWORD: secret },
    }).done;
    assert.deepEqual(JSON.parse(rows.stdout), [{ n: '1' }]);
  });
});

describe('many databases on one embedded hyperd', () => {
  const tmp = useTempDir('hyperwatch-many-');

  it('50 watchers on 50 databases, opened and closed in turn in one process, all start', async () => {
    // Keeps the embedded hyperd up between watchers, as serve or a long-lived program does.
    const keeper = createHyperAdapter({ database: tmp.path('keeper.hyper') });
    const registry = new WatcherRegistry();
    const failures: string[] = [];
    const pids = new Set<number | undefined>();
    try {
      await (await keeper.openPool({ maxConnections: 1 })).query('SELECT 1');
      pids.add(keeper.hyperdPid);
      for (let i = 0; i < 50; i++) {
        const inbox = await tmp.dir(`in-${i}`);
        await dropFile(inbox, 'a.csv', csv('id', [[i]]));
        const db = createHyperAdapter({ database: tmp.path(`db-${i}.hyper`) });
        try {
          const handle = await openWatcher(inbox, 't', { db, registry });
          const summary = await handle.stop();
          if (summary.stats.filesIngested !== 1) failures.push(`${i}: ${JSON.stringify(summary.stats.lastError)}`);
          pids.add(db.hyperdPid ?? keeper.hyperdPid);
        } catch (error) {
          failures.push(`${i}: ${String(error)}`);
        } finally {
          await db.close();
        }
      }
    } finally {
      await keeper.close();
    }
    assert.deepEqual(failures, []);
    assert.equal(pids.size, 1, 'one embedded hyperd served them all');
  });
});
