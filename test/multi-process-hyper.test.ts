/**
 * Several `hyperwatch watch` processes on one inbox writing one Hyper database through one shared
 * hyperd (`--endpoint`), the way a `.hyper` file can have several writers: SIGKILLs at random,
 * every id exactly once. Also: a second embedded writer on the same `.hyper` file is refused.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHyperAdapter } from '../adapters/db/hyper/index.ts';
import { Hyperd } from '../adapters/db/hyper/hyperd.ts';
import { locateHyperd } from '../adapters/db/hyper/locate.ts';
import { silentLogger } from '../src/log.ts';
import type { DbPool } from '../src/types.ts';
import { failedEntries, waitFor } from './helpers/drop.ts';
import { removeDir, tempDir } from './helpers/env.ts';
import { killScenario, startMember, stopAll } from './helpers/fleet.ts';
import { cli } from './helpers/proc.ts';

const LEASE_MS = 3000;
const TAKEOVER_SLACK_MS = 5000;

describe('several processes on one inbox (one shared hyperd, --endpoint)', { timeout: 240_000 }, () => {
  let hyperd: Hyperd;
  let endpoint: string;
  let root: string;
  let database: string;
  let check: ReturnType<typeof createHyperAdapter>;
  let pool: DbPool;
  before(async () => {
    const located = locateHyperd();
    if (!located.ok) throw new Error(located.message);
    hyperd = new Hyperd({ binary: located.path, logger: silentLogger });
    const { host, port } = await hyperd.endpoint();
    endpoint = `${host}:${port}`;
    root = await tempDir('hyperwatch-multi-hyper-');
    database = join(root, 'shared.hyper');
    check = createHyperAdapter({ endpoint, database });
    pool = await check.openPool({ maxConnections: 1 });
  });
  after(async () => {
    await pool?.close();
    await check?.close();
    await hyperd?.stop();
    await removeDir(root);
  });

  // hyperd 9.1.0 (the one this package installs) hangs when a client is SIGKILLed in the middle of
  // `COPY ... FROM STDIN` while other sessions write the same database: every later statement on
  // that database waits for ever (reproduced without hyperwatch: three clients looping COPY +
  // INSERT transactions, one killed; a COUNT(*) then never returns). This test therefore times
  // out; it runs, and is reported as a todo, until that is solved (server-side COPY from the
  // shared filesystem, or a newer hyperd).
  it('3 processes, 2,000 files, SIGKILLs at random moments, some restarted: every id exactly once', { todo: 'hyperd hangs when a client is killed mid-COPY FROM STDIN', timeout: 120_000 }, async () => {
    const dir = join(root, 'kill');
    await mkdir(dir);
    const files = 2000;
    const perFile = 2;
    const { members, kills, processes, takeoverMs } = await killScenario({
      dir,
      table: 'events',
      leaseMs: LEASE_MS,
      slackMs: TAKEOVER_SLACK_MS,
      db: ['--endpoint', endpoint, '--database', database],
      files,
      perFile,
      seed: 11,
      minKills: 6,
    });
    console.log(`# ${kills} kills, ${processes} processes; takeover ms: ${takeoverMs.join(' ')}`);
    assert.ok(kills >= 3, `only ${kills} kills`);
    for (const t of takeoverMs) assert.ok(t <= LEASE_MS + TAKEOVER_SLACK_MS, `takeover took ${t} ms`);
    await stopAll(members);
    const [stats] = await pool.query<{ n: string; d: string }>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
    console.log(`# rows ${stats!.n}, distinct ids ${stats!.d} (of ${files * perFile})`);
    assert.equal(Number(stats!.d), files * perFile, 'every id present');
    assert.equal(Number(stats!.n), files * perFile, 'no id twice');
    const [ledger] = await pool.query<{ n: string }>(`SELECT COUNT(*) AS n FROM hyperwatch_ingest_log WHERE target_table = 'events'`);
    assert.equal(Number(ledger!.n), files);
    assert.deepEqual(await failedEntries(dir), [], 'nothing in failed/');
    assert.deepEqual(await readdir(join(dir, '.hyperwatch', 'staging')), [], 'no folder left behind after clean stops');
  });

  it('a second embedded writer on one .hyper file is refused, naming serve and --endpoint', async () => {
    const file = join(root, 'embedded.hyper');
    const [a, b] = [join(root, 'emb-a'), join(root, 'emb-b')];
    await mkdir(a);
    await mkdir(b);
    const first = startMember('first', a, 'one', LEASE_MS, ['--database', file]);
    try {
      await waitFor(() => first.owner() !== undefined, 'the first writer to start', 30_000);
      const second = cli(['watch', b, '--table', 'two', '--database', file]);
      const run = await second.done;
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /one writing process at a time/);
      assert.match(run.stderr, /hyperwatch serve/);
      assert.match(run.stderr, /--endpoint host:port/);
    } finally {
      await stopAll([first]);
    }
  });
});
