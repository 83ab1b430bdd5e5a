/**
 * Several `hyperwatch watch` processes on one inbox, into a real PostgreSQL (a throwaway cluster
 * for this file): they share the work, take over from each other when one is SIGKILLed, and a
 * process stopped past its lease (SIGSTOP) commits nothing another took over.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import { createPostgresAdapter } from '../../../adapters/db/postgres/index.ts';
import { openWatcher } from '../../../src/api.ts';
import { fromDbError } from '../../../src/errors.ts';
import { readHistory } from '../../../src/store/history.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import { renderMetrics } from '../../../src/serve/metrics.ts';
import { otherMountProblem } from '../../../src/watcher/mount.ts';
import { drop, failedEntries, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { cleanStops, killScenario, produce, startMember, stopAll, takeoverOf } from '../../helpers/fleet.ts';
import { type PostgresServer, startPostgres } from '../../helpers/postgres.ts';

const LEASE_MS = 3000;
/** Takeover within the lease plus this (a heartbeat period, a scan, a loaded machine). */
const TAKEOVER_SLACK_MS = 5000;

describe('several processes on one inbox (PostgreSQL)', { timeout: 300_000 }, () => {
  let pg: PostgresServer;
  let root: string;
  let sql: postgres.Sql;
  before(async () => {
    pg = await startPostgres();
    root = await tempDir('hyperwatch-multi-');
    sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await pg?.stop();
    await removeDir(root);
  });

  const dbFlags = () => ['--adapter', 'postgres', '--url', pg.url];

  async function exactlyOnce(table: string, ids: number, files: number, dir: string): Promise<void> {
    const [stats] = await sql.unsafe<{ n: string; d: string }[]>(`SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM ${table}`);
    console.log(`# ${table}: rows ${stats!.n}, distinct ids ${stats!.d} (of ${ids})`);
    assert.equal(Number(stats!.d), ids, 'every id present');
    assert.equal(Number(stats!.n), ids, 'no id twice');
    const [ledger] = await sql.unsafe<{ n: string }[]>(
      `SELECT COUNT(*) AS n FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}'`,
    );
    assert.equal(Number(ledger!.n), files, 'one ledger row per file');
    assert.deepEqual(await failedEntries(dir), [], 'nothing in failed/');
  }

  it('3 processes, 2,000 files, SIGKILLs at random moments (never all at once), some restarted: every id exactly once', async () => {
    const dir = join(root, 'kill');
    await mkdir(dir);
    const files = 2000;
    const perFile = 2;
    const { members, kills, processes, takeoverMs } = await killScenario({
      dir,
      table: 'events',
      leaseMs: LEASE_MS,
      slackMs: TAKEOVER_SLACK_MS,
      db: dbFlags(),
      files,
      perFile,
      seed: 7,
      minKills: 6,
      withinMs: 120_000,
    });
    console.log(`# ${kills} kills, ${processes} processes; takeover ms: ${takeoverMs.join(' ')}`);
    assert.ok(kills >= 3, `only ${kills} kills`);
    assert.ok(takeoverMs.length >= 3, `only ${takeoverMs.length} takeovers measured`);
    for (const t of takeoverMs) assert.ok(t <= LEASE_MS + TAKEOVER_SLACK_MS, `takeover took ${t} ms`);
    // On this host a killed process's pid is gone: taken over at once, not after its lease.
    const reasons = members.flatMap((m) =>
      m.lines.filter((l) => l.message === 'took over' && /process \S+-\d+-/.test(String(l.fields.from))).map((l) => String(l.fields.from)),
    );
    assert.ok(
      reasons.some((r) => /its process \(pid \d+\) is gone/.test(r)),
      `reasons: ${reasons.join('; ')}`,
    );
    await stopAll(members);
    await exactlyOnce('events', files * perFile, files, dir);
    // Who committed what: every ledger row names the process that committed it.
    const owners = await sql.unsafe<{ owner: string | null }[]>(
      `SELECT DISTINCT owner FROM hyperwatch_internal.ingest_log WHERE target_table = 'events'`,
    );
    assert.ok(owners.length >= 2 && owners.every((o) => o.owner !== null), `owners ${JSON.stringify(owners)}`);
    // A process SIGTERMed while still starting (one restarted just before the end) stops cleanly too.
    assert.deepEqual(await readdir(join(dir, '.hyperwatch', 'staging')), [], 'no folder left behind after clean stops');
    // A SIGKILLed process's lease stays until it expires (or a takeover drops it); every process
    // stopped with SIGTERM removes its own, also one still starting.
    const stopped = await cleanStops(members);
    const live = await sql.unsafe<{ owner: string }[]>(
      `SELECT owner FROM hyperwatch_internal.leases WHERE directory = '${dir}' AND taken_by IS NULL AND expires_at > now()`,
    );
    assert.ok(stopped.size >= 1, 'at least one clean stop');
    assert.deepEqual(
      live.filter((l) => stopped.has(l.owner)),
      [],
      'clean stops remove their leases',
    );
  });

  it('a process stopped (SIGSTOP) past its lease and resumed commits nothing another took over', async () => {
    const dir = join(root, 'stop');
    await mkdir(dir);
    const files = 300;
    const perFile = 2000;
    // Debug lines: if the takeover does not come, they say why (renewals held up, checks late).
    const a = startMember('a', dir, 'frozen', LEASE_MS, [...dbFlags(), '--log-level', 'debug']);
    await waitFor(() => a.owner() !== undefined, 'a to take its lease', 30_000);
    const b = startMember('b', dir, 'frozen', LEASE_MS, [...dbFlags(), '--log-level', 'debug']);
    await waitFor(() => b.owner() !== undefined, 'b to take its lease', 30_000);
    let dropped = 0;
    const producer = produce(dir, files, perFile, (n) => (dropped = n), 5);
    // Freeze a while it holds claims (its folder has files in it).
    const aFolder = join(dir, '.hyperwatch', 'staging', a.owner()!);
    await waitFor(async () => (await readdir(aFolder).catch(() => [])).length > 0 && dropped > 20, 'a to hold claims', 30_000);
    a.child.kill('SIGSTOP');
    const stoppedAt = Date.now();
    const held = (await readdir(aFolder).catch(() => [])).length;
    await waitFor(() => takeoverOf([b], a.owner()!) !== undefined, 'b to take a over', LEASE_MS + TAKEOVER_SLACK_MS + 5000).catch(
      (error: unknown) => {
        // What b said (its last 40 lines, from 3 s before the SIGSTOP): why it had not taken a over.
        const said = b.lines
          .filter((l) => l.at >= stoppedAt - 3000)
          .map((l) => `${l.at - stoppedAt} ms: ${l.message} ${JSON.stringify(l.fields)}`);
        throw new Error(`${String(error)}; b said:\n${said.slice(-40).join('\n')}`);
      },
    );
    const takeover = takeoverOf([b], a.owner()!)!;
    console.log(`# a held ${held} staged entries; taken over ${takeover.at - stoppedAt} ms after SIGSTOP (${takeover.from})`);
    assert.ok(takeover.at - stoppedAt <= LEASE_MS + TAKEOVER_SLACK_MS, `takeover took ${takeover.at - stoppedAt} ms`);
    assert.match(takeover.from, /lease expired/);
    a.child.kill('SIGCONT');
    const aRun = await a.done;
    assert.equal(aRun.code, 1, 'the resumed process stops, saying it lost its lease');
    assert.ok(
      a.lines.some((l) => l.message.startsWith('lease lost')),
      'it says why',
    );
    await producer;
    await waitFor(
      async () => (await leftovers(dir)).length === 0 && (await stagedEntries(dir)).length === 0,
      'inbox and staging to empty',
      90_000,
    );
    await stopAll([a, b]);
    await exactlyOnce('frozen', files * perFile, files, dir);
    // Nothing of a's committed after b took it over (one clock: both ran on this host).
    const late = await sql.unsafe<{ n: string }[]>(
      `SELECT COUNT(*) AS n FROM hyperwatch_internal.ingest_log WHERE owner = '${a.owner()}' AND committed_at > ` +
        `to_timestamp(${takeover.at / 1000})`,
    );
    assert.equal(Number(late[0]!.n), 0, 'a committed nothing after the takeover');
  });

  it('status and /metrics show every live process of a directory; history names the process that committed each file; an old \
ledger gains the owner column', async () => {
    const dir = join(root, 'status');
    await mkdir(dir);
    // A ledger from before owners: the column is added when a watcher starts.
    const db = createPostgresAdapter({ url: pg.url });
    const pool = await db.openPool({ maxConnections: 1 });
    try {
      await pool.query('ALTER TABLE hyperwatch_internal.ingest_log DROP COLUMN IF EXISTS owner').catch(() => {});
      const one = await openWatcher(dir, 'shared', { db, registry: new WatcherRegistry(), leaseMs: 900 });
      const two = await openWatcher(dir, 'shared', { db, registry: new WatcherRegistry(), leaseMs: 900 });
      await waitFor(() => one.processes().length === 2 && two.processes().length === 2, 'both to see each other', 10_000);
      assert.equal(one.processes().filter((p) => p.self).length, 1);
      const metrics = renderMetrics([
        { directory: dir, table: 'shared', stats: one.stats, oldestQueuedAt: undefined, processes: one.processes().length },
      ]);
      assert.match(metrics, /hyperwatch_taken_over_total\{dir="[^"]+",table="shared"\} 0/);
      assert.match(metrics, /hyperwatch_processes\{dir="[^"]+",table="shared"\} 2/);
      await drop(dir, 'a.csv', 'id\n1\n');
      await waitFor(async () => (await readHistory(pool, { table: 'shared' })).length === 1, 'a.csv to be committed', 10_000);
      const [entry] = await readHistory(pool, { table: 'shared' });
      const owners = new Set(
        [one, two].flatMap((w) =>
          w
            .processes()
            .filter((p) => p.self)
            .map((p) => p.owner),
        ),
      );
      assert.ok(entry!.owner !== null && owners.has(entry!.owner), `history names a live owner: ${entry!.owner}`);
      await two.stop();
      await waitFor(() => one.processes().length === 1, 'a stopped process to leave the list', 10_000);
      await one.stop();
    } finally {
      await pool.close();
      await db.close();
    }
  });

  it('refuses a staging folder on another filesystem than the inbox, saying why', () => {
    assert.equal(otherMountProblem('/in', '/in/.hyperwatch/staging', 5, 5), undefined);
    assert.match(otherMountProblem('/in', '/in/.hyperwatch/staging', 5, 7)!, /another filesystem.*atomic rename/);
  });

  it('two directories creating one table at the same moment: the race is retried, no file fails', async () => {
    const db = createPostgresAdapter({ url: pg.url });
    try {
      for (let round = 0; round < 8; round++) {
        const table = `raced_${round}`;
        const dirs = [join(root, `race-${round}-a`), join(root, `race-${round}-b`)];
        for (const d of dirs) await mkdir(d);
        // Each directory gets a file before its watcher starts: both start-up sweeps create the table.
        for (const [i, d] of dirs.entries()) await drop(d, 'x.csv', `id\n${i}\n`);
        const watchers = await Promise.all(dirs.map((d) => openWatcher(d, table, { db, registry: new WatcherRegistry() })));
        await Promise.all(watchers.map((w) => w.stop()));
        for (const d of dirs) {
          const failed = await failedEntries(d);
          const reports = await Promise.all(failed.filter((n) => n.endsWith('.error')).map((n) => readFile(join(d, 'failed', n), 'utf8')));
          assert.deepEqual(failed, [], `round ${round}: nothing failed; ${reports.join(' ')}`);
        }
        const [n] = await sql.unsafe<{ n: string }[]>(`SELECT COUNT(*) AS n FROM ${table}`);
        assert.equal(Number(n!.n), 2, `round ${round}: both rows`);
      }
    } finally {
      await db.close();
    }
  });

  it("PostgreSQL's 23505 on its type catalog while creating a table is transient, other 23505s are data errors", () => {
    const race = Object.assign(new Error('duplicate key value violates unique constraint "pg_type_typname_nsp_index"'), {
      code: '23505',
      constraint_name: 'pg_type_typname_nsp_index',
    });
    assert.equal(fromDbError(race).kind, 'transient');
    const real = Object.assign(new Error('duplicate key value violates unique constraint "events_pkey"'), {
      code: '23505',
      constraint_name: 'events_pkey',
    });
    assert.equal(fromDbError(real).kind, 'data');
    const typeRace = Object.assign(new Error('type "events" already exists'), { code: '42710' });
    assert.equal(fromDbError(typeRace).kind, 'transient');
  });
});
