/**
 * Upserts under SIGKILL: `hyperwatch watch --mode upsert --key id --order name` processes on one
 * inbox (PostgreSQL), killed at random moments while 200 files arrive (test/helpers/fleet.ts),
 * each file bringing keys earlier files brought too. Every file has one ledger row, and the table
 * is what applying every file once, in name order, gives: for each key, the last file's row. A
 * file applied twice, lost, or applied out of order (a later file overtaking one a killed process
 * had claimed) leaves another value.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import { failedEntries } from '../../helpers/drop.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { killScenario, stopAll } from '../../helpers/fleet.ts';
import { type PostgresServer, startPostgres } from '../../helpers/postgres.ts';

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

  it('3 processes, 200 upsert files, 10+ SIGKILLs: every file applied once and in order', async () => {
    const dir = join(root, 'inbox');
    await mkdir(dir);
    const files = 200;
    const perFile = 5;
    // File f brings ids (f * perFile + r) % keys: file f + 10 brings file f's keys again.
    const keys = 50;
    const { members, kills } = await killScenario({
      dir,
      table: 'customers',
      leaseMs: LEASE_MS,
      slackMs: TAKEOVER_SLACK_MS,
      db: ['--adapter', 'postgres', '--url', pg.url, '--mode', 'upsert', '--key', 'id', '--order', 'name'],
      files,
      perFile,
      keys,
      seed: 11,
      minKills: 10,
      withinMs: 200_000,
    });
    console.log(`# ${kills} kills`);
    assert.ok(kills >= 10, `only ${kills} kills`);
    await stopAll(members);
    // Applying every file once, in name order (the order they were dropped in): each key's last file.
    const expected = new Map<number, number>();
    for (let f = 0; f < files; f++) for (let r = 0; r < perFile; r++) expected.set((f * perFile + r) % keys, f);
    const rows = await sql.unsafe<{ id: string; batch: string }[]>('SELECT id, batch FROM customers ORDER BY id');
    assert.deepEqual(
      rows.map((r) => `${r.id}:${r.batch}`),
      [...expected].sort((a, b) => a[0] - b[0]).map(([id, batch]) => `${id}:${batch}`),
      'each key holds the row of the last file that brought it',
    );
    const [ledger] = await sql.unsafe<{ n: string; files: string }[]>(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT file_name) AS files FROM hyperwatch_internal.ingest_log WHERE target_table = 'customers'`,
    );
    assert.deepEqual([Number(ledger!.n), Number(ledger!.files)], [files, files], 'one ledger row per file');
    // Throughout, not only at the end: each file's transaction began (committed_at is PostgreSQL's
    // CURRENT_TIMESTAMP) after the commit of the earlier file with the same keys, whichever process had it.
    const overtaken = await sql.unsafe<{ earlier: string; later: string }[]>(
      `SELECT a.file_name AS earlier, b.file_name AS later
         FROM hyperwatch_internal.ingest_log a JOIN hyperwatch_internal.ingest_log b
           ON substr(b.file_name, 3, 5)::int = substr(a.file_name, 3, 5)::int + ${keys / perFile}
        WHERE a.target_table = 'customers' AND b.target_table = 'customers' AND b.committed_at <= a.committed_at`,
    );
    assert.deepEqual([...overtaken], [], 'no file overtook an earlier one with the same keys');
    assert.deepEqual(await failedEntries(dir).catch(() => []), [], 'nothing in failed/');
  });
});
