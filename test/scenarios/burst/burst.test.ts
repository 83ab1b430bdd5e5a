/**
 * A burst of 20,000 small files, dropped as fast as a producer can while the watcher runs in a
 * process of its own: every file lands exactly once, none fails, and the watcher's descriptors
 * stay bounded (time and peak memory are printed; their targets live in the benchmarks).
 */
import assert from 'node:assert/strict';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createHyperAdapter } from '../../../adapters/db/hyper/index.ts';
import { openWhenUnlocked, processFootprint, startWatchChild } from '../../helpers/child.ts';
import { csv, drop, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';

const FILES = 20_000;
/** Far below the usual 1,024 soft limit: the watcher bounds its open claims. */
const MAX_FDS = 700;

describe('burst', () => {
  let root: string;
  before(async () => {
    root = await tempDir();
  });
  after(() => removeDir(root));

  it(`${FILES.toLocaleString('en')} small files dropped at once all land exactly once`, { timeout: 15 * 60_000 }, async () => {
    const dir = join(root, 'inbox');
    await mkdir(dir);
    const database = join(root, 'burst.hyper');
    const run = startWatchChild(dir, 'events', database);
    await run.started;
    const pid = run.child.pid!;
    let peak = { peakRss: 0, fds: 0 };
    const sampler = setInterval(() => {
      const now = processFootprint(pid);
      if (now) peak = { peakRss: Math.max(peak.peakRss, now.peakRss), fds: Math.max(peak.fds, now.fds) };
    }, 100);
    const started = performance.now();
    try {
      // 16 producers at once, each file with an id of its own.
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < FILES) {
            const f = next++;
            await drop(dir, `b${String(f).padStart(5, '0')}.csv`, csv('id,payload', [[f, `row-${f}`]]));
          }
        }),
      );
      const dropped = performance.now();
      await waitFor(
        async () => (await leftovers(dir)).length === 0 && (await stagedEntries(dir)).length === 0,
        'inbox and staging to empty',
        14 * 60_000,
      );
      const done = performance.now();
      console.log(
        `# burst: ${FILES} files dropped in ${((dropped - started) / 1000).toFixed(1)} s, all ingested and settled ` +
          `after ${((done - started) / 1000).toFixed(1)} s ` +
          `(${Math.round(FILES / ((done - started) / 1000))} files/s); watcher peak ` +
          `RSS ${(peak.peakRss / 2 ** 20).toFixed(0)} MiB, peak open descriptors ${peak.fds}`,
      );
    } finally {
      clearInterval(sampler);
      run.child.kill('SIGTERM');
      await run.exited;
    }
    assert.ok(peak.fds > 0, 'descriptors were sampled');
    assert.ok(peak.fds < MAX_FDS, `open descriptors stayed bounded (peak ${peak.fds})`);
    assert.deepEqual(await readdir(join(dir, 'failed')).catch(() => []), [], 'nothing failed');

    // The child exits at SIGTERM without closing its watcher (watch-child.mjs), as a killed
    // process does; its hyperd lets go of the file a moment later, not before the child's exit.
    const db = createHyperAdapter({ database });
    const pool = await openWhenUnlocked(db);
    try {
      const [rows] = await pool.query<{ n: string; d: string }>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
      assert.equal(Number(rows!.n), FILES, 'no file twice');
      assert.equal(Number(rows!.d), FILES, 'every file');
      const [ledger] = await pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM hyperwatch_internal.ingest_log');
      assert.equal(Number(ledger!.n), FILES, 'one ledger row per file');
    } finally {
      await pool.close();
      await db.close();
    }
  });
});
