/**
 * `--ready stable` with several `hyperwatch watch` processes on one inbox, into a real PostgreSQL
 * (a throwaway cluster for this file): with no sentinel to take first, the data file's own rename
 * into staging decides who owns it; a SIGKILLed process's claims are taken over as with sentinels.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import { failedEntries, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { type Member, startMember, stopAll } from '../../helpers/fleet.ts';
import { type PostgresServer, startPostgres } from '../../helpers/postgres.ts';

const LEASE_MS = 3000;

describe('several processes on one inbox, --ready stable (PostgreSQL)', { timeout: 180_000 }, () => {
  let pg: PostgresServer;
  let root: string;
  let sql: postgres.Sql;
  before(async () => {
    pg = await startPostgres();
    root = await tempDir('hyperwatch-stable-multi-');
    sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await pg?.stop();
    await removeDir(root);
  });

  it('3 processes, 300 files written in place without sentinels, one SIGKILLed: every id exactly once', async () => {
    const dir = join(root, 'stable');
    await mkdir(dir);
    const flags = ['--adapter', 'postgres', '--url', pg.url, '--ready', 'stable', '--stable-ms', '300'];
    const members: Member[] = ['a', 'b', 'c'].map((n) => startMember(n, dir, 'events', LEASE_MS, flags));
    try {
      await waitFor(() => members.every((m) => m.owner() !== undefined), 'every process to take its lease', 30_000);
      const files = 300;
      const perFile = 5;
      let killed = false;
      for (let f = 0; f < files; f++) {
        const name = `f-${String(f).padStart(4, '0')}.csv`;
        const rows = Array.from({ length: perFile }, (_, r) => `${f * perFile + r},${f}`).join('\n');
        // Half written in place in two steps (as an upload would), half by a rename from *.part.
        if (f % 2 === 0) {
          await writeFile(join(dir, name), 'id,batch\n');
          await writeFile(join(dir, name), `${rows}\n`, { flag: 'a' });
        } else {
          await writeFile(join(dir, `${name}.part`), `id,batch\n${rows}\n`);
          await rename(join(dir, `${name}.part`), join(dir, name));
        }
        if (f === 150) {
          // Once it is busy: killed with files claimed or in flight.
          await waitFor(() => members[0]!.lines.some((l) => l.message === 'ingested'), 'a to ingest something', 20_000);
          members[0]!.child.kill('SIGKILL');
          killed = true;
        }
        if (f % 10 === 0) await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(killed);
      await waitFor(
        async () => (await leftovers(dir)).length === 0 && (await stagedEntries(dir)).length === 0,
        'the inbox and staging to empty (a takeover of the killed process included)',
        60_000,
      );
      const [stats] = await sql.unsafe<{ n: string; d: string }[]>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
      assert.equal(Number(stats!.d), files * perFile, 'every id present');
      assert.equal(Number(stats!.n), files * perFile, 'no id twice');
      const [ledger] = await sql.unsafe<{ n: string }[]>(
        `SELECT COUNT(*) AS n FROM hyperwatch_internal.ingest_log WHERE target_table = 'events'`,
      );
      assert.equal(Number(ledger!.n), files, 'one ledger row per file');
      assert.deepEqual(await failedEntries(dir), [], 'nothing in failed/');
      const committers = members.filter((m) => m.lines.some((l) => l.message === 'ingested'));
      assert.ok(committers.length >= 2, 'the processes shared the work');
    } finally {
      await stopAll(members);
    }
    const folders = await readdir(join(dir, '.hyperwatch', 'staging'));
    assert.ok(folders.length <= 1, `only the killed process’s folder may stay: ${folders.join(', ')}`);
  });
});
