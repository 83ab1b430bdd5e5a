/**
 * `readyWhen: 'marker'` across crashes, on a real hyperd and on a real PostgreSQL: the watcher's process is SIGKILLed at
 * random moments, 10 times or more, while 20 Spark-like job folders (Parquet parts in Hive
 * folders written by DuckDB, a CSV part, `_SUCCESS` last) arrive. At the end every row is in the
 * table once, and every folder is in whole, by one commit, or not at all: never half.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import { createHyperAdapter } from '../../../adapters/db/hyper/index.ts';
import { openWhenUnlocked, startWatchChild } from '../../helpers/child.ts';
import { leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { removeDir, tempDir, useHyperFixture } from '../../helpers/env.ts';
import { type Member, startMember, stopAll } from '../../helpers/fleet.ts';
import { sparkJob } from '../../helpers/marker-cases.ts';
import { type PostgresServer, startPostgres } from '../../helpers/postgres.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('marker folders, crash safety', () => {
  const fx = useHyperFixture();

  it('SIGKILL at random moments, 10+ times, while 20 job folders come in: every row once, no folder half in', async () => {
    const dir = join(fx.root, 'kill-marker');
    await mkdir(dir);
    const database = join(fx.root, 'kill-marker.hyper');
    const options = { readyWhen: 'marker', partitionColumns: true, sourceColumns: { file: '_file', claim: '_claim' } };
    const jobs = 20;
    const perJob = 60;
    const csvRows = 4;
    const parts = new Map<string, string[]>();
    let produced = 0;
    const producer = (async () => {
      for (let j = 0; j < jobs; j++) {
        const job = `job-${String(j).padStart(2, '0')}`;
        parts.set(job, await sparkJob(dir, job, j * (perJob + csvRows), perJob, csvRows));
        produced++;
        await sleep(100);
      }
    })();
    let kills = 0;
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    while (kills < 10 || produced < jobs) {
      const run = startWatchChild(dir, 'events', database, options);
      const during = random() < 0.3;
      if (!during) await run.started;
      await sleep(Math.floor(random() * (during ? 400 : 1200)));
      run.child.kill('SIGKILL');
      await run.exited;
      kills++;
    }
    await producer;
    const last = startWatchChild(dir, 'events', database, options);
    await last.started;
    await waitFor(
      async () => (await leftovers(dir)).length === 0 && (await stagedEntries(dir)).length === 0,
      'inbox and staging to empty',
      120000,
    );
    last.child.kill('SIGTERM');
    await last.exited;

    const check = createHyperAdapter({ database });
    const pool = await openWhenUnlocked(check);
    try {
      const total = jobs * (perJob + csvRows);
      const [stats] = await pool.query<{ n: string; d: string }>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
      console.log(`# ${kills} kills; rows ${stats!.n}, distinct ids ${stats!.d}`);
      assert.ok(kills >= 10);
      assert.equal(Number(stats!.d), total, 'every id present');
      assert.equal(Number(stats!.n), total, 'no id twice');
      // Each folder whole, from one claim: its rows all carry one claim id, its ledger rows are its data files under that id.
      const byJob = await pool.query<{ job: string; n: string; claims: string }>(
        `SELECT split_part(_file, '/', 1) AS job, COUNT(*) AS n, COUNT(DISTINCT _claim) AS claims FROM events GROUP BY 1 ORDER BY 1`,
      );
      assert.equal(byJob.length, jobs);
      for (const r of byJob) {
        assert.equal(Number(r.n), perJob + csvRows, `${r.job}: every row`);
        assert.equal(Number(r.claims), 1, `${r.job}: one claim`);
      }
      const ledger = await pool.query<{ file_name: string; claim_id: string }>(
        'SELECT file_name, claim_id FROM hyperwatch_internal.ingest_log ORDER BY file_name',
      );
      for (const [job, files] of parts) {
        const rows = ledger.filter((l) => l.file_name.startsWith(`${job}/`));
        assert.deepEqual(
          rows.map((l) => l.file_name),
          files.map((f) => `${job}/${f}`),
          `${job}: one ledger row per data file`,
        );
        assert.equal(new Set(rows.map((l) => l.claim_id)).size, 1, `${job}: one commit`);
      }
      assert.deepEqual(await readdir(join(dir, 'failed')).catch(() => []), [], 'nothing failed');
    } finally {
      await pool.close();
      await check.close();
    }
  });
});

describe('marker folders, crash safety, on PostgreSQL (hyperwatch watch, as a user runs it)', { timeout: 240_000 }, () => {
  let pg: PostgresServer;
  let root: string;
  let sql: postgres.Sql;
  before(async () => {
    pg = await startPostgres();
    root = await tempDir('hyperwatch-marker-kill-');
    sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await pg?.stop();
    await removeDir(root);
  });

  it('SIGKILL at random moments, 10+ times, while 20 job folders come in: every row once, no folder half in', async () => {
    const dir = join(root, 'kill');
    await mkdir(dir);
    const flags = ['--adapter', 'postgres', '--url', pg.url, '--ready', 'marker', '--partition-columns'];
    const jobs = 20;
    const perJob = 60;
    const csvRows = 4;
    const parts = new Map<string, string[]>();
    let produced = 0;
    const producer = (async () => {
      for (let j = 0; j < jobs; j++) {
        const job = `job-${String(j).padStart(2, '0')}`;
        parts.set(job, await sparkJob(dir, job, j * (perJob + csvRows), perJob, csvRows));
        produced++;
        await sleep(100);
      }
    })();
    let kills = 0;
    let seed = 5;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const members: Member[] = [];
    try {
      while (kills < 10 || produced < jobs) {
        const m = startMember(`p${kills}`, dir, 'events', 3000, flags);
        members.push(m);
        if (random() >= 0.3) await waitFor(() => m.owner() !== undefined || m.exited, 'the process to start', 30_000);
        await sleep(Math.floor(random() * 1200));
        m.child.kill('SIGKILL');
        await m.done.catch(() => {});
        kills++;
      }
      await producer;
      const last = startMember('last', dir, 'events', 3000, flags);
      members.push(last);
      await waitFor(
        async () => (await leftovers(dir)).length === 0 && (await stagedEntries(dir)).length === 0,
        'inbox and staging to empty',
        120_000,
      );
    } finally {
      await stopAll(members);
    }
    const adopted = members.flatMap((m) => m.lines.filter((l) => l.message === 'took over').map((l) => Number(l.fields.files)));
    const recovered = members.flatMap((m) => m.lines.filter((l) => String(l.message).startsWith('recovered')));
    console.log(`# claims taken over from killed processes: ${adopted.reduce((a, b) => a + b, 0)}; folders recovered: ${recovered.length}`);
    const total = jobs * (perJob + csvRows);
    const [stats] = await sql.unsafe<{ n: string; d: string }[]>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
    console.log(`# ${kills} kills; rows ${stats!.n}, distinct ids ${stats!.d}`);
    assert.equal(Number(stats!.d), total, 'every id present');
    assert.equal(Number(stats!.n), total, 'no id twice');
    const ledger = await sql.unsafe<{ file_name: string; claim_id: string }[]>(
      'SELECT file_name, claim_id FROM hyperwatch_internal.ingest_log ORDER BY file_name',
    );
    for (const [job, files] of parts) {
      const rows = ledger.filter((l) => l.file_name.startsWith(`${job}/`));
      assert.deepEqual(
        rows.map((l) => l.file_name),
        files.map((f) => `${job}/${f}`),
        `${job}: one ledger row per data file`,
      );
      assert.equal(new Set(rows.map((l) => l.claim_id)).size, 1, `${job}: one commit`);
    }
    assert.deepEqual(await readdir(join(dir, 'failed')).catch(() => []), [], 'nothing failed');
  });
});
