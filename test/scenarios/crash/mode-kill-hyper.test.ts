/**
 * Upserts under SIGKILL on Hyper: `hyperwatch watch --mode upsert --key id` processes on one inbox
 * and one shared hyperd (reached by endpoint), killed at random moments while 200 files arrive
 * (test/helpers/fleet.ts). On Hyper each file is staged in a transaction of its own before the
 * file's transaction: a kill between the two must neither lose the file nor apply it twice, nor
 * leave its staging table behind.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DbPool } from '../../../src/types.ts';
import { failedEntries } from '../../helpers/drop.ts';
import { killScenario, stopAll } from '../../helpers/fleet.ts';
import { hyperdStanding } from '../../helpers/hyperd-log.ts';
import { cli } from '../../helpers/proc.ts';
import { type SharedHyperd, startSharedHyperd } from '../../helpers/shared-hyperd.ts';

const LEASE_MS = 3000;
// A kill in the middle of a COPY FROM STDIN holds its table until hyperd ends that COPY, 10 s on
// (see test/scenarios/multi-process/multi-process-hyper.test.ts).
const TAKEOVER_SLACK_MS = 15_000;

describe('upserts under SIGKILL (hyperd by endpoint)', { timeout: 300_000 }, () => {
  let shared: SharedHyperd;
  let root: string;
  let endpoint: string;
  let database: string;
  let check: SharedHyperd['check'];
  let pool: DbPool;
  let logDir: string;
  before(async () => {
    shared = await startSharedHyperd('hyperwatch-mode-kill-hyper-');
    ({ root, endpoint, database, check, logDir } = shared);
  });
  after(async () => {
    await pool?.close();
    await shared?.stop();
  });

  it('3 processes, 200 upsert files, 10+ SIGKILLs: every file applied once, one row per key, no staging table left', async () => {
    const dir = join(root, 'inbox');
    await mkdir(dir);
    const files = 200;
    const perFile = 5;
    // The database and hyperwatch's own tables are made first, by one run on an empty inbox: the
    // shared hyperd crashed (its log: child-processes-soft-stop-after-crash-begin) in 2 of about 20
    // runs when the three processes first opened the new database at the same moment. The target
    // table is still made by whichever process loads a file first, under the kills.
    const empty = join(root, 'empty');
    await mkdir(empty);
    const made = await cli(['watch', empty, '--table', 'customers', '--endpoint', endpoint, '--database', database, '--once']).done;
    assert.equal(made.code, 0, made.stderr);
    const { members, kills } = await killScenario({
      dir,
      table: 'customers',
      leaseMs: LEASE_MS,
      slackMs: TAKEOVER_SLACK_MS,
      db: ['--endpoint', endpoint, '--database', database, '--mode', 'upsert', '--key', 'id'],
      files,
      perFile,
      seed: 5,
      minKills: 10,
      withinMs: 250_000,
      explain: () => hyperdStanding(logDir),
    });
    console.log(`# ${kills} kills`);
    assert.ok(kills >= 10, `only ${kills} kills`);
    await stopAll(members);
    pool = await check.openPool({ maxConnections: 1 });
    // File f brings ids f * perFile .. f * perFile + perFile - 1, each with batch = f.
    const [stats] = await pool.query<Record<string, string | number>>(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d, SUM(CASE WHEN batch <> id / ${perFile} THEN 1 ELSE 0 END) AS wrong FROM customers`,
    );
    // What a shortfall means: the files failed (their .error) or missing from the ledger.
    const failed = await failedEntries(dir).catch(() => []);
    const errors = failed
      .filter((n) => n.endsWith('.error'))
      .map((n) => readFileSync(join(dir, 'failed', n), 'utf8'))
      .join('\n');
    const missing = await pool.query<{ id: string }>(
      `SELECT DISTINCT CAST(g.i / ${perFile} AS BIGINT) AS id FROM generate_series(0, ${files * perFile - 1}) AS g(i)
        WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.id = g.i) ORDER BY 1`,
    );
    // What each process logged of those files: who claimed, staged, failed them, and when.
    const lost = missing.map((r) => `f-${String(r.id).padStart(5, '0')}.csv`);
    const told = members.flatMap((m) =>
      m.lines
        .filter((l) => lost.some((n) => l.message.includes(n) || JSON.stringify(l.fields).includes(n)))
        .map((l) => `${m.name} ${new Date(l.at).toISOString()} ${l.message} ${JSON.stringify(l.fields)}`),
    );
    assert.deepEqual(
      [Number(stats!.n), Number(stats!.d), Number(stats!.wrong)],
      [files * perFile, files * perFile, 0],
      `files without their rows: ${missing.map((r) => r.id).join(', ')}; failed/: ${failed.join(', ')}\n${errors}\n${told.join('\n')}`,
    );
    const [ledger] = await pool.query<Record<string, string | number>>(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT file_name) AS files FROM hyperwatch_internal.ingest_log WHERE target_table = 'customers'`,
    );
    assert.deepEqual([Number(ledger!.n), Number(ledger!.files)], [files, files], 'one ledger row per file');
    const own = await pool.query<{ relname: string }>(
      `SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
        WHERE n.nspname = 'hyperwatch_internal' AND c.relkind = 'r'`,
    );
    const names = own.map((x) => x.relname);
    assert.ok(names.includes('ingest_log'), names.join(', '));
    assert.deepEqual(
      names.filter((n) => n.startsWith('stage')),
      [],
      'no staging table left behind',
    );
    assert.deepEqual(await failedEntries(dir).catch(() => []), [], 'nothing in failed/');
  });
});
