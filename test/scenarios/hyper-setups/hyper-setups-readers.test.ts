/**
 * Reading a database while `hyperwatch watch` fills it, as a user would: `query` and `history`
 * from other processes (idle and busy), psql through the endpoint the watcher publishes, a second
 * writer told what works, stale entries of dead processes, a reader's session never costing a
 * committed file when the watcher is killed, nor stopping a second watcher of the database from starting.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import postgres from 'postgres';
import { holderPath } from '../../../adapters/db/hyper/holder.ts';
import { dropFile } from '../../../src/producer/drop.ts';
import { silentLogger } from '../../../src/log.ts';
import { ServeInstance } from '../../../src/serve/server.ts';
import { csv, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { cli, isRunning, ROOT } from '../../helpers/proc.ts';

interface Holder {
  pid: number;
  endpoint: string;
  user: string;
  database: string;
}

/** `hyperwatch watch` in the background; resolves once it watches, with its published endpoint. */
async function startWatch(inbox: string, database: string, extra: string[] = []) {
  const run = cli(['watch', inbox, '--table', 't', '--database', database, ...extra]);
  let stderr = '';
  run.child.stderr!.on('data', (d: string) => (stderr += d));
  await waitFor(() => /watching/.test(stderr) || run.child.exitCode !== null, 'the watcher to start', 60000);
  assert.equal(run.child.exitCode, null, stderr);
  const holder = JSON.parse(readFileSync(holderPath(database), 'utf8')) as Holder;
  return { run, holder, stderr: () => stderr };
}

async function count(database: string): Promise<number> {
  const q = await cli(['query', '--database', database, '--json', 'SELECT COUNT(*) AS n FROM t']).done;
  assert.equal(q.code, 0, q.stderr);
  return Number((JSON.parse(q.stdout) as { n: string }[])[0]!.n);
}

describe('reading while a watcher runs', () => {
  const tmp = useTempDir('hyperwatch-readers-');

  it('query, history and psql go through the running watcher, idle and busy; a second writer is told what works', async () => {
    const inbox = await tmp.dir('in');
    const home = await tmp.dir('live');
    const database = join(home, 'events.hyper');
    const { run, holder, stderr } = await startWatch(inbox, database);
    try {
      // Published next to the database, and said at start.
      assert.equal(holder.pid, run.child.pid);
      assert.match(holder.endpoint, /^127\.0\.0\.1:\d+$/);
      assert.match(stderr(), new RegExp(`readers connect through this hyperd .*endpoint=${holder.endpoint.replaceAll('.', '\\.')}`));

      // Idle, after files landed and a checkpoint ran.
      await dropFile(inbox, 'a.csv', csv('id', [[1], [2]]));
      await waitFor(async () => (await stagedEntries(inbox)).length === 0, 'the checkpoint', 30000);
      assert.equal(await count(database), 2);
      const history = await cli(['history', '--database', database, '--json']).done;
      assert.equal(history.code, 0, history.stderr);
      assert.deepEqual(
        (JSON.parse(history.stdout) as { file: string }[]).map((e) => e.file),
        ['a.csv'],
      );

      // psql, with the README's command as written, run where events.hyper is.
      const command = readFileSync(join(ROOT, 'README.md'), 'utf8')
        .split('\n')
        .find((l) => l.startsWith('psql "host=127.0.0.1 port=$(jq'));
      assert.ok(command, 'the README shows a psql command');
      const psql = spawnSync('sh', ['-c', `${command} -tAc 'SELECT COUNT(*) FROM t'`], {
        cwd: home,
        encoding: 'utf8',
        env: { ...process.env, PWD: home },
      });
      assert.equal(psql.status, 0, psql.stderr);
      assert.equal(psql.stdout.trim(), '2');

      // Busy: files keep landing while other processes read.
      let dropping = true;
      const producer = (async () => {
        for (let i = 0; dropping; i++) {
          await dropFile(inbox, `busy-${i}.csv`, csv('id', [[i]]));
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      const seen: number[] = [];
      try {
        for (let i = 0; i < 5; i++) {
          seen.push(await count(database));
          const h = await cli(['history', '--database', database, '--since', '1h']).done;
          assert.equal(h.code, 0, h.stderr);
        }
      } finally {
        dropping = false;
        await producer;
      }
      assert.ok(
        seen.every((n, i) => n >= 2 && (i === 0 || n >= seen[i - 1]!)),
        `counts only grow: ${seen.join(', ')}`,
      );

      // A second writer on the same file.
      const other = await tmp.dir('other');
      const second = await cli(['watch', other, '--table', 't', '--database', database, '--once']).done;
      assert.equal(second.code, 2);
      assert.match(
        second.stderr,
        new RegExp(`is held by hyperwatch process ${run.child.pid} \\(its hyperd listens at ${holder.endpoint.replaceAll('.', '\\.')}`),
      );
      assert.match(second.stderr, /hyperwatch serve with one watcher per directory/);
      assert.match(second.stderr, /--endpoint host:port/);
      assert.equal(JSON.parse(readFileSync(holderPath(database), 'utf8')).pid, run.child.pid, "the entry stays the holder's");
    } finally {
      run.child.kill('SIGTERM');
      await run.done;
    }
    assert.equal(existsSync(holderPath(database)), false, 'the entry goes with the watcher');
    // Every busy file landed once: a.csv has 2 rows, each busy file 1.
    assert.deepEqual(
      (await readdir(inbox)).filter((n) => n.endsWith('.csv')),
      [],
    );
    const entries = JSON.parse((await cli(['history', '--database', database, '--json']).done).stdout) as unknown[];
    assert.ok(entries.length > 1);
    assert.equal(await count(database), entries.length + 1);
  });

  it('a stale entry of a dead process is ignored by query and replaced by the next watcher', async () => {
    const inbox = await tmp.dir('stale');
    const database = tmp.path('stale.hyper');
    await dropFile(inbox, 'a.csv', csv('id', [[1]]));
    assert.equal((await cli(['watch', inbox, '--table', 't', '--database', database, '--once']).done).code, 0);
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout);
    assert.equal(isRunning(deadPid), false);
    writeFileSync(
      holderPath(database),
      JSON.stringify({ pid: deadPid, endpoint: '127.0.0.1:9', user: 'hyperwatch', database, since: '2026-01-01T00:00:00Z' }),
    );
    assert.equal(await count(database), 1);
    const { run, holder } = await startWatch(inbox, database);
    try {
      assert.equal(holder.pid, run.child.pid);
    } finally {
      run.child.kill('SIGTERM');
      await run.done;
    }
  });

  it('a reader session left open does not cost a committed file when the watcher is killed', async () => {
    const inbox = await tmp.dir('kill');
    const database = tmp.path('kill.hyper');
    const first = await startWatch(inbox, database);
    const [host, port] = first.holder.endpoint.split(':');
    // A BI tool's session, attached to the database and left open.
    const reader = postgres({
      host,
      port: Number(port),
      user: 'tableau_internal_user',
      database,
      fetch_types: false,
      max: 1,
      onnotice: () => {},
    });
    try {
      await reader.unsafe('SELECT 1');
      await dropFile(inbox, 'a.csv', csv('id', [[1], [2], [3]]));
      await waitFor(
        async () => Number((await reader.unsafe('SELECT COUNT(*) AS n FROM t').catch(() => [{ n: 0 }]))[0]!.n) === 3,
        'the rows to be committed',
        30000,
      );
      // Past the checkpoint delay: the checkpoint cannot write the file while the reader holds it.
      await waitFor(() => /was not written to disk at this checkpoint/.test(first.stderr()), 'the checkpoint to notice the reader', 30000);
      assert.ok((await stagedEntries(inbox)).length > 0, 'the committed file stays staged');
      first.run.child.kill('SIGKILL');
      await first.run.done;
    } finally {
      await reader.end({ timeout: 1 }).catch(() => {});
    }
    const again = await cli(['watch', inbox, '--table', 't', '--database', database, '--once', '--json']).done;
    assert.equal(again.code, 0, again.stderr);
    assert.equal(await count(database), 3, 'the rows are there exactly once');
    assert.deepEqual(await stagedEntries(inbox), []);
  });

  it('a second watcher of the same database (serve) starts while a reader session holds it attached, and its files land', async () => {
    const one = await tmp.dir('serve-one');
    const two = await tmp.dir('serve-two');
    const database = tmp.path('served.hyper');
    const serve = new ServeInstance({ logger: silentLogger, baseDir: tmp.path() });
    try {
      await dropFile(one, 'a.csv', csv('id', [[1]]));
      const first = await serve.add({ dir: one, table: 'one', database });
      assert.equal(first.stats.filesIngested, 1);
      const [host, port] = (JSON.parse(readFileSync(holderPath(database), 'utf8')) as Holder).endpoint.split(':');
      const reader = postgres({
        host,
        port: Number(port),
        user: 'tableau_internal_user',
        database,
        fetch_types: false,
        max: 1,
        onnotice: () => {},
      });
      try {
        assert.equal(Number((await reader.unsafe('SELECT COUNT(*) AS n FROM one'))[0]!.n), 1);
        await dropFile(two, 'b.csv', csv('id', [[2], [3]]));
        // Its start-up checkpoint cannot write the file while the reader holds it: it starts anyway.
        const second = await serve.add({ dir: two, table: 'two', database });
        assert.equal(second.stats.filesIngested, 1);
        assert.equal(Number((await reader.unsafe('SELECT COUNT(*) AS n FROM two'))[0]!.n), 2);
      } finally {
        await reader.end({ timeout: 1 }).catch(() => {});
      }
      // Once the reader is gone, a checkpoint writes the file and the staged files go.
      await waitFor(async () => (await stagedEntries(two)).length === 0, 'the checkpoint after the reader left', 30000);
    } finally {
      await serve.stopAll();
    }
  });
});
