/**
 * The watcher on a real PostgreSQL server: a throwaway cluster started for this file
 * (test/helpers/postgres.ts). The sentinel protocol's cases, as on Hyper (protocol-suite.ts), and
 * a restart of PostgreSQL in the middle of a stream of files. The adapter on its own:
 * test/adapters/db/postgres/postgres-adapter.test.ts; every file format on PostgreSQL:
 * test/adapters/db/postgres/postgres-formats.test.ts. Without
 * the PostgreSQL binaries this file fails, saying what to install; it never skips.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openWatcher } from '../../../src/api.ts';
import { csv, drop, failedEntries, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { count } from '../../helpers/env.ts';
import { protocolCases } from '../../helpers/protocol-suite.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';

// One cluster for the whole file (see postgres-file.ts).
const { pg, pgFixture } = await postgresForFile();

describe('watcher on a real PostgreSQL server', () => {
  /** The file's cluster for the suite; a fresh inbox and table per test. */
  const t = useWatchBench(pgFixture, 'w');

  protocolCases(t, {
    description: () => `postgres 127.0.0.1:${pg.port}/${pg.database}`,
    durableCommit: true,
    fillsDefaults: true,
    badNumberMessage: /^bad\.csv: invalid input syntax for type bigint: "not-a-number" \(line 3, column 2 "amount"\)$/,
  });

  // PostgreSQL only, from here on.
  it('loses nothing and fails nothing when PostgreSQL restarts in the middle of a stream of files', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, maxConcurrent: 2, retryDelayMs: { initial: 20, max: 250 } });
    const total = 60;
    let restarted: Promise<void> | undefined;
    for (let i = 0; i < total; i++) {
      await drop(
        dir,
        `s${String(i).padStart(2, '0')}.csv`,
        csv('id,part', [
          [i * 3, i],
          [i * 3 + 1, i],
          [i * 3 + 2, i],
        ]),
      );
      // The restart begins once files are flowing, and more files keep coming while it runs.
      if (i === 20) restarted = pg.restart();
      await new Promise((r) => setTimeout(r, 15));
    }
    await restarted;
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === total, `${total} files after the restart`, 60000);
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.equal(handle.stats.filesIngested, total);
    assert.ok(handle.stats.retries > 0, 'files met the restart and were retried');
    console.log(`# PostgreSQL restart mid-stream: ${handle.stats.retries} retries, ${total} files, none failed`);
    assert.equal(await count(t.pool, table), total * 3);
    const [distinct] = await t.pool.query<{ ids: string }>(`SELECT COUNT(DISTINCT id) AS ids FROM ${table}`);
    assert.equal(Number(distinct!.ids), total * 3, 'no row twice');
    const [ledger] = await t.pool.query<{ n: string; files: string }>(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT file_name) AS files FROM hyperwatch_internal.ingest_log WHERE target_table = $1`,
      [table],
    );
    assert.deepEqual([Number(ledger!.n), Number(ledger!.files)], [total, total]);
    assert.deepEqual(await leftovers(dir), []);
    assert.deepEqual(await failedEntries(dir), []);
    await handle.stop();
    assert.deepEqual(await stagedEntries(dir), []);
  });
});
