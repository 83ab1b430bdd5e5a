/**
 * Exactly once when the embedded hyperd dies under the watcher: killed mid-stream (plain and
 * gzip files, deleted or archived), while a checkpoint waits on its connections, and again while
 * it starts up. The watcher starts it again with its next connection and every file lands once.
 * Marker folders under the same kills: crash-hyperd-marker.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createHyperAdapter } from '../../../adapters/db/hyper/index.ts';
import { openWatcher } from '../../../src/api.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import { gzip } from '../../helpers/compression-suite.ts';
import { csv, drop, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { useHyperFixture } from '../../helpers/env.ts';
import { killHyperd } from '../../helpers/hyperd-kill.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('crash safety: hyperd killed', () => {
  const fx = useHyperFixture();

  /** The hyperd-kill test again with files dropped gzip-compressed and archived instead of deleted. */
  const variants = [
    { label: '', name: 'kill', ext: '.csv', options: {} },
    { label: ' (.csv.gz files, onSuccess archive)', name: 'kill-archive', ext: '.csv.gz', options: { onSuccess: 'archive' } },
  ] as const;

  // This caught a postgres.js instance reconnecting after it was ended: its idle session kept the
  // database attached, so no later checkpoint wrote anything, and the next kill lost those files.
  for (const variant of variants)
    it(`hyperd killed mid-stream: all files land exactly once, none in failed/${variant.label}`, async () => {
      const dir = join(fx.root, `hyperd-${variant.name}`);
      await mkdir(dir);
      const db = createHyperAdapter({ database: join(fx.root, `hyperd-${variant.name}.hyper`) });
      const registry = new WatcherRegistry();
      const handle = await openWatcher(dir, 'events', { db, registry, retryDelayMs: { initial: 20, max: 500 }, ...variant.options });
      const files = 300;
      // Paced, so that the stream is still going at each kill: small files ready at once are
      // committed in groups and a burst would be done before the first kill.
      const producer = (async () => {
        for (let f = 0; f < files; f++) {
          await drop(dir, `f${f}${variant.ext}`, variant.ext === '.csv' ? csv('id', [[f]]) : await gzip(csv('id', [[f]])));
          await sleep(10);
        }
      })();
      for (let k = 0; k < 3; k++) {
        await waitFor(() => handle.stats.filesIngested >= (k + 1) * 40, 'progress before the kill', 60000);
        await killHyperd(db, handle);
      }
      await producer;
      await waitFor(() => handle.stats.filesIngested === files, `all ${files} files`, 120000);
      const summary = await handle.stop();
      // A file re-ingested after a crash may still wait in staging for its durability checkpoint
      // when the watcher stops; the next start settles it. Exactly once is judged after that.
      const again = await openWatcher(dir, 'events', { db, registry, ...variant.options });
      await again.stop();
      assert.deepEqual(await stagedEntries(dir), []);
      if ('onSuccess' in variant.options)
        assert.equal((await readdir(join(dir, 'archive'))).filter((n) => !n.endsWith('.ready')).length, files, 'every file archived once');
      const pool = await db.openPool({ maxConnections: 1 });
      try {
        const [row] = await pool.query<{ n: string; d: string }>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
        assert.equal(Number(row!.n), files);
        assert.equal(Number(row!.d), files);
      } finally {
        await pool.close();
      }
      assert.equal(summary.stats.filesFailed, 0);
      assert.ok(summary.stats.retries > 0, 'the outages were retried');
      assert.deepEqual(await readdir(join(dir, 'failed')), []);
      await db.close();
    });

  // SIGSTOP first: the checkpoint's statements are then surely out, unanswered, when hyperd dies.
  it('hyperd killed while a checkpoint waits on its connections: the checkpoint fails within 5 s, and the next statement \
starts hyperd again', async () => {
    const db = createHyperAdapter({ database: join(fx.root, 'checkpoint-kill.hyper'), releaseIdleMs: 0 });
    const pool = await db.openPool({ maxConnections: 3 });
    try {
      await pool.query('CREATE TABLE t (id INT)');
      await db.checkpoint!();
      const run = db.epoch!();
      // Three transactions at once, each waiting for the others: every connection of the pool is open.
      let arrived = 0;
      let allThere!: () => void;
      const together = new Promise<void>((resolve) => (allThere = resolve));
      await Promise.all(
        [1, 2, 3].map((id) =>
          pool.transaction(async (conn) => {
            await conn.execute(`INSERT INTO t VALUES (${id})`);
            if (++arrived === 3) allThere();
            await together;
          }),
        ),
      );
      const pid = db.hyperdPid;
      assert.ok(pid);
      process.kill(pid, 'SIGSTOP');
      const checkpoint = db.checkpoint!().then(
        () => undefined,
        (error: unknown) => error,
      );
      const before = await Promise.race([checkpoint.then(() => 'settled'), sleep(300).then(() => 'waiting')]);
      assert.equal(db.epoch!(), run, 'the connections are all on the stopped hyperd (none started since)');
      assert.equal(before, 'waiting', 'the checkpoint waits on the stopped server');
      process.kill(pid, 'SIGKILL');
      const killedAt = Date.now();
      const outcome = await Promise.race([checkpoint, sleep(20000).then(() => 'still waiting')]);
      const settledMs = Date.now() - killedAt;
      assert.notEqual(outcome, 'still waiting', 'the checkpoint settled');
      assert.ok(outcome instanceof Error, 'a checkpoint cut off by the kill fails');
      assert.ok(settledMs < 5000, `the checkpoint failed ${settledMs} ms after the kill`);
      // Its commits died with hyperd: the table is back as last written out (created, empty), and
      // the pool works again on a new hyperd.
      // Right after the kill a connection may still be sent to the dead server's port: retried.
      let row: { n: string } | undefined;
      await waitFor(
        async () => {
          [row] = await pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM t').catch(() => [undefined]);
          return row !== undefined;
        },
        'a statement on the new hyperd',
        10000,
      );
      assert.ok(db.hyperdPid !== undefined && db.hyperdPid !== pid, 'hyperd was started again');
      assert.ok(Date.now() - killedAt < 10000, `the next statement ran ${Date.now() - killedAt} ms after the kill`);
      assert.ok(Number(row!.n) === 0 || Number(row!.n) === 3, `all three rows or none, got ${row!.n}`);
    } finally {
      await pool.close();
      await db.close();
    }
  });

  it('hyperd killed again while it starts up: the statement that started it fails as the database being away, and the next one \
starts hyperd again', async () => {
    const db = createHyperAdapter({ database: join(fx.root, 'startup-kill.hyper'), releaseIdleMs: 0 });
    const pool = await db.openPool({ maxConnections: 1 });
    try {
      // The hyperd shared with the tests before may still be going down from their kills.
      await waitFor(
        () =>
          pool.query('SELECT 1').then(
            () => true,
            () => false,
          ),
        'a running hyperd',
        10000,
      );
      const first = db.hyperdPid;
      assert.ok(first);
      process.kill(first, 'SIGKILL');
      await waitFor(() => db.hyperdPid === undefined, 'the death of hyperd to be seen', 10000);
      // The next statement starts hyperd again; killed as soon as it is spawned, it never reports.
      const asking = pool.query('SELECT 1').then(
        () => undefined,
        (error: unknown) => error as { code?: string; message?: string },
      );
      const deadline = Date.now() + 10000;
      while (db.hyperdPid === undefined && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
      const second = db.hyperdPid;
      assert.ok(second, 'hyperd was started again');
      process.kill(second, 'SIGKILL');
      const error = await asking;
      assert.equal(error?.code, 'HYPERD_RESTARTING', `a connection error, retried by the watcher (got ${error?.message})`);
      assert.match(String(error?.message), /hyperd exited during start-up/);
      // The pool's one connection is usable again: a third hyperd answers.
      const answered = await Promise.race([pool.query<{ one: number }>('SELECT 1 AS one'), sleep(15000).then(() => 'no answer' as const)]);
      assert.notEqual(answered, 'no answer', 'the pool answers again');
      assert.ok(db.hyperdPid !== undefined && db.hyperdPid !== first && db.hyperdPid !== second);
    } finally {
      await pool.close();
      await db.close();
    }
  });

  it('hyperd killed while the watcher checkpoints: it is started again at once and every file lands once', async () => {
    const dir = join(fx.root, 'checkpoint-watcher');
    await mkdir(dir);
    // No heartbeat nor idle release in the window: the checkpoint alone holds the connections.
    const db = createHyperAdapter({ database: join(fx.root, 'checkpoint-watcher.hyper'), releaseIdleMs: 0 });
    const registry = new WatcherRegistry();
    const options = { db, registry, checkpointDelayMs: 300, leaseMs: 60000, retryDelayMs: { initial: 20, max: 500 } };
    const handle = await openWatcher(dir, 'events', options);
    try {
      await drop(dir, 'a.csv', csv('id', [[1]]));
      await waitFor(() => handle.stats.filesIngested === 1, 'the first file', 20000);
      const pid = db.hyperdPid;
      assert.ok(pid);
      process.kill(pid, 'SIGSTOP');
      // The checkpoint is due 300 ms after the commit and runs within 300 ms more: by now its
      // DETACHes wait on the stopped server.
      await sleep(1500);
      assert.equal(handle.stats.checkpoints, 0, 'the checkpoint had not finished at the kill');
      process.kill(pid, 'SIGKILL');
      await waitFor(() => db.hyperdPid !== undefined && db.hyperdPid !== pid, 'hyperd restarted', 10000);
      await drop(dir, 'b.csv', csv('id', [[2]]));
      await waitFor(async () => (await leftovers(dir)).length === 0 && handle.stats.filesIngested >= 2, 'the second file', 20000);
    } finally {
      await handle.stop();
    }
    // The first commit may have died with hyperd; the next start settles what it left in staging.
    const again = await openWatcher(dir, 'events', { db, registry });
    await again.stop();
    assert.deepEqual(await stagedEntries(dir), []);
    const pool = await db.openPool({ maxConnections: 1 });
    try {
      const rows = await pool.query<{ id: string }>('SELECT id FROM events ORDER BY id');
      assert.deepEqual(
        rows.map((r) => Number(r.id)),
        [1, 2],
      );
    } finally {
      await pool.close();
      await db.close();
    }
    assert.deepEqual(await readdir(join(dir, 'failed')), []);
  });
});
