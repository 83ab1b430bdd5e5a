/**
 * `--ready marker` with two `hyperwatch watch` processes on one inbox, into a real PostgreSQL (a
 * throwaway cluster for this file): the folder's one rename into a process's staging decides who
 * owns it, so the two share the folders without taking one twice; then one is SIGKILLed while
 * folders keep coming, and the other takes over what it had claimed, whole.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import { csv, failedEntries, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { type Member, startMember, stopAll } from '../../helpers/fleet.ts';
import { sparkJob } from '../../helpers/marker-cases.ts';
import { type PostgresServer, startPostgres } from '../../helpers/postgres.ts';

const LEASE_MS = 3000;

describe('two processes on one inbox, --ready marker (PostgreSQL)', { timeout: 180_000 }, () => {
  let pg: PostgresServer;
  let root: string;
  let sql: postgres.Sql;
  before(async () => {
    pg = await startPostgres();
    root = await tempDir('hyperwatch-marker-multi-');
    sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await pg?.stop();
    await removeDir(root);
  });

  it('two processes share 40 job folders without duplicates; one SIGKILLed, its claimed folders are taken over whole', async () => {
    const dir = join(root, 'marker');
    await mkdir(dir);
    const flags = ['--adapter', 'postgres', '--url', pg.url, '--ready', 'marker', '--partition-columns', '--max-concurrent', '2'];
    const members: Member[] = ['a', 'b'].map((n) => startMember(n, dir, 'events', LEASE_MS, flags));
    const jobs = 40;
    const perJob = 30;
    const files = new Map<string, number>();
    try {
      await waitFor(() => members.every((m) => m.owner() !== undefined), 'both processes to take their leases', 30_000);
      const build = join(root, 'build');
      await mkdir(build);
      let killed = false;
      for (let j = 0; j < jobs; j++) {
        const job = `job-${String(j).padStart(2, '0')}`;
        if (j % 2 === 0) {
          // Written in place, _SUCCESS last, as Spark does: Parquet parts (DuckDB) and a CSV part.
          files.set(job, (await sparkJob(dir, job, j * perJob, perJob - 5, 5)).length);
        } else {
          // Built elsewhere and moved in with its marker in one rename.
          await mkdir(join(build, job, 'date=2026-12-05', 'region=xx'), { recursive: true });
          const ids = Array.from({ length: perJob }, (_, i) => [j * perJob + i, `c${i}`]);
          await writeFile(join(build, job, 'date=2026-12-05', 'region=xx', 'a.csv'), csv('id,label', ids.slice(0, 10)));
          await writeFile(join(build, job, 'date=2026-12-05', 'region=xx', 'b.csv'), csv('id,label', ids.slice(10)));
          await writeFile(join(build, job, '_SUCCESS'), '');
          await rename(join(build, job), join(dir, job));
          files.set(job, 2);
        }
        if (j === 24) {
          await waitFor(() => members[1]!.lines.some((l) => l.message === 'ingested'), 'b to ingest something', 20_000);
          members[1]!.child.kill('SIGKILL');
          killed = true;
        }
      }
      assert.ok(killed);
      await waitFor(
        async () => (await leftovers(dir)).length === 0 && (await stagedEntries(dir)).length === 0,
        'the inbox and staging to empty (a takeover of the killed process included)',
        40_000,
      ).catch(async (error: unknown) => {
        const said = members.map(
          (m) =>
            `${m.name}: ${m.lines
              .slice(-8)
              .map((l) => `${l.message} ${JSON.stringify(l.fields)}`)
              .join('\n  ')}`,
        );
        throw new Error(
          `${String(error)}; inbox ${(await leftovers(dir)).join(', ')}; ` +
            `staged ${(await stagedEntries(dir)).join(', ')}\n${said.join('\n')}`,
        );
      });
      const failedNow = await failedEntries(dir).catch(() => []);
      if (failedNow.length > 0) {
        const { readFile } = await import('node:fs/promises');
        const first = failedNow.find((f) => f.endsWith('.error'));
        assert.fail(`failed: ${failedNow.join(', ')}; ${first ? await readFile(join(dir, 'failed', first), 'utf8') : ''}`);
      }
      const [stats] = await sql.unsafe<{ n: string; d: string }[]>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
      assert.equal(Number(stats!.d), jobs * perJob, 'every id present');
      assert.equal(Number(stats!.n), jobs * perJob, 'no id twice');
      const ledger = await sql.unsafe<{ job: string; n: string; claims: string; owners: string }[]>(
        `SELECT split_part(file_name, '/', 1) AS job, COUNT(*) AS n, COUNT(DISTINCT claim_id) AS claims, COUNT(DISTINCT owner) AS owners
           FROM hyperwatch_internal.ingest_log WHERE target_table = 'events' GROUP BY 1 ORDER BY 1`,
      );
      assert.equal(ledger.length, jobs);
      for (const r of ledger) {
        assert.equal(Number(r.n), files.get(r.job), `${r.job}: one ledger row per data file`);
        assert.equal(Number(r.claims), 1, `${r.job}: one claim, one commit`);
        assert.equal(Number(r.owners), 1, `${r.job}: committed by one process`);
      }
      const [owners] = await sql.unsafe<{ n: string }[]>(`SELECT COUNT(DISTINCT owner) AS n FROM hyperwatch_internal.ingest_log`);
      assert.equal(Number(owners!.n), 2, 'both processes committed folders');
      assert.deepEqual(await failedEntries(dir), [], 'nothing in failed/');
      const took = members[0]!.lines.filter((l) => l.message === 'took over');
      console.log(`# a took over: ${JSON.stringify(took.map((l) => l.fields.files))}`);
    } finally {
      await stopAll(members);
    }
    const folders = await readdir(join(dir, '.hyperwatch', 'staging'));
    assert.ok(folders.length <= 1, `only the killed process’s folder may stay: ${folders.join(', ')}`);
  });
});
