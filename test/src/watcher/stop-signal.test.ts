/**
 * `signal` (an AbortSignal) stops a watcher, also while `openWatcher` is still starting: a long
 * initial sweep of a backlog ends at its next file, and nothing is lost or left behind; on a real
 * embedded hyperd.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openWatcher } from '../../../src/api.ts';
import type { Logger } from '../../../src/types.ts';
import { csv, drop, leftovers, stagedEntries } from '../../helpers/drop.ts';
import { hyperFixture } from '../../helpers/env.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

describe('stopping a watcher by its signal', () => {
  const t = useWatchBench(hyperFixture, 'sig');

  it('aborted during the start-up sweep: openWatcher resolves with the handle stopping; what was not ingested stays for the \
next start', async () => {
    const { dir, table, opts } = await t.inbox();
    const files = 600;
    for (let f = 0; f < files; f++) await drop(dir, `f${f}.csv`, csv('id', [[f]]));
    const controller = new AbortController();
    const quiet = () => {};
    // Aborted when the first file of the sweep lands.
    const logger: Logger = { debug: quiet, warn: quiet, error: quiet, info: (message) => message === 'ingested' && controller.abort() };
    const handle = await openWatcher(dir, table, { ...opts, logger, batchFiles: 10, signal: controller.signal });
    assert.ok(controller.signal.aborted);
    assert.equal(handle.stopping, true, 'resolved stopping');
    await handle.whenStopped();
    assert.equal(t.registry.get(dir), undefined, 'no longer listed once stopped');
    const first = handle.stats.filesIngested;
    assert.ok(first > 0 && first < files, `stopped the sweep after ${first} of ${files} files`);
    assert.deepEqual(await stagedEntries(dir), [], 'nothing left claimed');
    assert.deepEqual(await readdir(join(dir, '.hyperwatch', 'staging')), [], 'its staging folder removed');
    assert.equal((await leftovers(dir)).length, 2 * (files - first), 'the rest untouched, each with its sentinel');
    const again = await openWatcher(dir, table, opts);
    await again.stop();
    assert.equal(again.stats.filesIngested, files - first);
    const [row] = await t.pool.query<{ n: string; d: string }>(`SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM ${table}`);
    assert.deepEqual([Number(row!.n), Number(row!.d)], [files, files], 'every file once');
  });

  it('aborted before the call: openWatcher starts nothing and resolves with a stopped handle', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'a.csv', csv('id', [[1]]));
    const handle = await openWatcher(dir, table, { ...opts, signal: AbortSignal.abort() });
    await handle.whenStopped();
    assert.equal(handle.stats.filesIngested, 0);
    assert.equal((await leftovers(dir)).length, 2, 'a.csv and its sentinel untouched');
    assert.equal(t.registry.get(dir), undefined);
  });
});
