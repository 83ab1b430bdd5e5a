/** Producer tools end to end: `hyperwatch drop`, then `hyperwatch replay` of a fixed failed file; the progress line. */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { progressText, startProgress } from '../../../src/observe/progress.ts';
import { failedEntries, leftovers } from '../../helpers/drop.ts';
import { removeDir, useTempDir } from '../../helpers/env.ts';
import { cli } from '../../helpers/proc.ts';

describe('producer tools', () => {
  const tmp = useTempDir('hyperwatch-producer-');

  it('hyperwatch drop, a failed file fixed and replayed: every row lands once, failed/ ends empty', async () => {
    const inbox = await tmp.dir('inbox');
    const db = tmp.path('replay.hyper');
    const good = tmp.path('good.csv');
    const bad = tmp.path('orders.csv');
    await writeFile(good, 'id,amount\n1,10\n2,20\n');
    await writeFile(bad, 'id,amount\n3,30\n4,thirty\n');
    for (const file of [good, bad]) {
      const run = await cli(['drop', file, inbox]).done;
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /^dropped .* \(\d+ bytes\) and .*\.csv\.ready\n$/);
    }
    assert.deepEqual(await leftovers(inbox), ['good.csv', 'good.csv.ready', 'orders.csv', 'orders.csv.ready']);
    const first = await cli(['watch', inbox, '--table', 'sales', '--database', db, '--once', '--json', '--quiet', '--max-concurrent', '1'])
      .done;
    assert.equal(first.code, 1, first.stderr);
    assert.deepEqual(await failedEntries(inbox), ['orders.csv', 'orders.csv.error', 'orders.csv.ready']);

    // Replay refuses while a newer drop of the same name waits, and moves nothing.
    await writeFile(join(inbox, 'orders.csv'), 'id,amount\n9,90\n');
    const refused = await cli(['replay', join(inbox, 'failed', 'orders.csv')]).done;
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /orders\.csv already exists .*nothing was moved/);
    assert.deepEqual(await failedEntries(inbox), ['orders.csv', 'orders.csv.error', 'orders.csv.ready']);
    await removeDir(join(inbox, 'orders.csv'));

    // Fix the file in failed/, replay it (naming its .error works too), ingest again.
    await writeFile(join(inbox, 'failed', 'orders.csv'), 'id,amount\n3,30\n4,40\n');
    const replay = await cli(['replay', join(inbox, 'failed', 'orders.csv.error')]).done;
    assert.equal(replay.code, 0, replay.stderr);
    assert.match(replay.stdout, /replayed orders\.csv as .*inbox\/orders\.csv, with orders\.csv\.ready/);
    assert.deepEqual(await failedEntries(inbox), []);
    assert.deepEqual(await leftovers(inbox), ['orders.csv', 'orders.csv.ready']);
    const second = await cli(['watch', inbox, '--table', 'sales', '--database', db, '--once', '--json', '--quiet']).done;
    assert.equal(second.code, 0, second.stderr);
    assert.equal(JSON.parse(second.stdout).stats.filesIngested, 1);
    assert.deepEqual(await leftovers(inbox), []);
    const query = await cli(['query', '--database', db, '--json', 'SELECT id, amount FROM sales ORDER BY id']).done;
    assert.deepEqual(JSON.parse(query.stdout), [
      { id: '1', amount: '10' },
      { id: '2', amount: '20' },
      { id: '3', amount: '30' },
      { id: '4', amount: '40' },
    ]);
  });

  it('the progress line shows long-running files on a terminal only', async () => {
    const now = Date.now();
    assert.equal(progressText([{ name: 'a.csv', size: 100, bytesRead: 50, startedAt: now - 100 }], now), '');
    assert.equal(
      progressText([{ name: 'big.csv', size: 200 * 1024 * 1024, bytesRead: 50 * 1024 * 1024, startedAt: now - 5000 }], now),
      'ingesting big.csv 25% of 200.0 MB, 5 s',
    );
    assert.equal(
      progressText([{ name: 'direct.csv', size: 3 * 1024 ** 3, bytesRead: 0, startedAt: now - 61_000 }], now),
      'ingesting direct.csv (3.00 GB), 61 s',
    );
    const active = [{ name: 'big.csv', size: 10, bytesRead: 5, startedAt: now - 5000 }];
    let piped = '';
    const quiet = startProgress({ isTTY: false, write: (t: string) => (piped += t) }, () => active, 5);
    quiet.wrap((l) => (piped += `${l}\n`))('a log line');
    await new Promise((r) => setTimeout(r, 30));
    quiet.stop();
    assert.equal(piped, 'a log line\n');
    let tty = '';
    const live = startProgress({ isTTY: true, columns: 80, write: (t: string) => (tty += t) }, () => active, 5);
    await new Promise((r) => setTimeout(r, 30));
    live.wrap((l) => (tty += `${l}\n`))('a log line');
    live.stop();
    assert.match(tty, /ingesting big\.csv 50% of 0 KB, 5 s/);
    assert.match(tty, /\r\x1b\[2Ka log line\n/);
  });
});
