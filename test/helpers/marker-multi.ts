/**
 * `--ready marker` with two `hyperwatch watch` processes on one inbox, one SIGKILLed while job
 * folders keep coming (test/scenarios/multi-process/marker-multi.test.ts, on PostgreSQL and on
 * one shared hyperd): the folder's one rename into a process's staging decides who owns it, so
 * the two share the folders without taking one twice, and the survivor takes over what the
 * killed one had claimed, whole.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { csv, failedEntries, leftovers, stagedEntries, waitFor } from './drop.ts';
import { type Member, startMember, stopAll } from './fleet.ts';
import { sparkJob } from './marker-cases.ts';

export const MARKER_MULTI_LEASE_MS = 3000;

export interface MarkerMultiTarget {
  /** A folder of the test's own: the inbox and the folders built elsewhere go in it. */
  readonly root: string;
  /** The database flags of `hyperwatch watch` (`--adapter postgres --url ...`, `--endpoint ... --database ...`). */
  readonly db: readonly string[];
  /** Runs a statement on that database (as the test's own client) and returns its rows. */
  query(sql: string): Promise<readonly Record<string, unknown>[]>;
  /** What the database says of where it stood, for a failed run's message. */
  explain?(): string;
}

/**
 * 40 job folders (half written in place, Spark-like, half moved in whole with their marker) for
 * two processes, the second SIGKILLed after the 25th: every id lands once, each folder by one
 * claim and one process, nothing fails, and only the killed process's staging folder may stay.
 */
export async function markerMultiScenario(t: MarkerMultiTarget): Promise<void> {
  const dir = join(t.root, 'marker');
  await mkdir(dir);
  const flags = [...t.db, '--ready', 'marker', '--partition-columns', '--max-concurrent', '2'];
  const members: Member[] = ['a', 'b'].map((n) => startMember(n, dir, 'events', MARKER_MULTI_LEASE_MS, flags));
  const jobs = 40;
  const perJob = 30;
  const files = new Map<string, number>();
  const rows = async <T>(sql: string) => (await t.query(sql)) as readonly T[];
  try {
    await waitFor(() => members.every((m) => m.owner() !== undefined), 'both processes to take their leases', 30_000);
    const build = join(t.root, 'build');
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
          `staged ${(await stagedEntries(dir)).join(', ')}\n${said.join('\n')}${t.explain ? `\n${t.explain()}` : ''}`,
      );
    });
    const failedNow = await failedEntries(dir).catch(() => []);
    if (failedNow.length > 0) {
      const first = failedNow.find((f) => f.endsWith('.error'));
      assert.fail(`failed: ${failedNow.join(', ')}; ${first ? await readFile(join(dir, 'failed', first), 'utf8') : ''}`);
    }
    const [stats] = await rows<{ n: unknown; d: unknown }>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
    assert.equal(Number(stats!.d), jobs * perJob, 'every id present');
    assert.equal(Number(stats!.n), jobs * perJob, 'no id twice');
    const ledger = await rows<{ job: string; n: unknown; claims: unknown; owners: unknown }>(
      `SELECT split_part(file_name, '/', 1) AS job, COUNT(*) AS n, COUNT(DISTINCT claim_id) AS claims, COUNT(DISTINCT owner) AS owners
         FROM hyperwatch_internal.ingest_log WHERE target_table = 'events' GROUP BY 1 ORDER BY 1`,
    );
    assert.equal(ledger.length, jobs);
    for (const r of ledger) {
      assert.equal(Number(r.n), files.get(r.job), `${r.job}: one ledger row per data file`);
      assert.equal(Number(r.claims), 1, `${r.job}: one claim, one commit`);
      assert.equal(Number(r.owners), 1, `${r.job}: committed by one process`);
    }
    const [owners] = await rows<{ n: unknown }>('SELECT COUNT(DISTINCT owner) AS n FROM hyperwatch_internal.ingest_log');
    assert.equal(Number(owners!.n), 2, 'both processes committed folders');
    assert.deepEqual(await failedEntries(dir), [], 'nothing in failed/');
    const took = members[0]!.lines.filter((l) => l.message === 'took over');
    console.log(`# a took over: ${JSON.stringify(took.map((l) => l.fields.files))}`);
  } finally {
    await stopAll(members);
  }
  const folders = await readdir(join(dir, '.hyperwatch', 'staging'));
  assert.ok(folders.length <= 1, `only the killed process’s folder may stay: ${folders.join(', ')}`);
}
