/**
 * Upserts under SIGKILL: `hyperwatch watch --mode upsert --key id` processes on one inbox
 * (PostgreSQL), killed at random moments while 200 files arrive (test/helpers/fleet.ts). Every
 * file has one ledger row, and the table is what applying every file once gives: one row per key.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import { failedEntries } from './helpers/drop.ts';
import { removeDir, tempDir } from './helpers/env.ts';
import { killScenario, stopAll } from './helpers/fleet.ts';
import { type PostgresServer, startPostgres } from './helpers/postgres.ts';

const LEASE_MS = 3000;
const TAKEOVER_SLACK_MS = 5000;

describe('upserts under SIGKILL (PostgreSQL)', { timeout: 300_000 }, () => {
  let pg: PostgresServer;
  let root: string;
  let sql: postgres.Sql;
  before(async () => {
    pg = await startPostgres();
    root = await tempDir('hyperwatch-mode-kill-');
    sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await pg?.stop();
    await removeDir(root);
  });

  it('3 processes, 200 upsert files, 10+ SIGKILLs: every file applied once, one row per key', async () => {
    const dir = join(root, 'inbox');
    await mkdir(dir);
    const files = 200;
    const perFile = 5;
    const { members, kills } = await killScenario({
      dir,
      table: 'customers',
      leaseMs: LEASE_MS,
      slackMs: TAKEOVER_SLACK_MS,
      db: ['--adapter', 'postgres', '--url', pg.url, '--mode', 'upsert', '--key', 'id'],
      files,
      perFile,
      seed: 11,
      minKills: 10,
      withinMs: 200_000,
    });
    console.log(`# ${kills} kills`);
    assert.ok(kills >= 10, `only ${kills} kills`);
    await stopAll(members);
    // File f brings ids f * perFile .. f * perFile + perFile - 1, each with batch = f.
    const [stats] = await sql.unsafe<{ n: string; d: string; wrong: string }[]>(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d, COUNT(*) FILTER (WHERE batch <> id / ${perFile}) AS wrong FROM customers`,
    );
    assert.deepEqual([Number(stats!.n), Number(stats!.d), Number(stats!.wrong)], [files * perFile, files * perFile, 0]);
    const [ledger] = await sql.unsafe<{ n: string; files: string }[]>(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT file_name) AS files FROM hyperwatch_internal.ingest_log WHERE target_table = 'customers'`,
    );
    assert.deepEqual([Number(ledger!.n), Number(ledger!.files)], [files, files], 'one ledger row per file');
    assert.deepEqual(await failedEntries(dir).catch(() => []), [], 'nothing in failed/');
  });
});
