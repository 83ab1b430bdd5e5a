/**
 * Content checksums in the ledger and the opt-in `skipDuplicateContent`, on a real embedded hyperd;
 * and the pure logic that keeps two tasks from both ingesting one content.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openWatcher } from '../../../src/api.ts';
import { ContentGate, splitRepeats } from '../../../src/watcher/content-gate.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import { csv, drop, leftovers, waitFor } from '../../helpers/drop.ts';
import { count, useHyperFixture } from '../../helpers/env.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('ContentGate and splitRepeats', () => {
  it('splitRepeats keeps the first of each key, in order, and items without a key', () => {
    const { first, repeats } = splitRepeats(['a1', 'b1', 'a2', 'x', 'b2', 'a3', 'y'], (s) => (s.length === 2 ? s[0] : undefined));
    assert.deepEqual(first, ['a1', 'b1', 'x', 'y']);
    assert.deepEqual(repeats, ['a2', 'b2', 'a3']);
  });

  it('a second holder of a checksum waits for the first to release it', async () => {
    const gate = new ContentGate();
    const order: string[] = [];
    const releaseA = await gate.hold(['s1', 's2']);
    const b = gate.hold(['s2']).then((release) => {
      order.push('b');
      release();
    });
    const c = gate.hold(['s3']).then((release) => {
      order.push('c');
      release();
    });
    await c;
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(order, ['c'], 'b waits while a holds s2; c holds another checksum at once');
    releaseA();
    await b;
    assert.deepEqual(order, ['c', 'b']);
  });

  it('two holders waiting on each other cannot deadlock: checksums are taken all at once', async () => {
    const gate = new ContentGate();
    const first = await gate.hold(['x']);
    const both = Promise.all([gate.hold(['x', 'y']), gate.hold(['y', 'x'])].map(async (held) => (await held)()));
    first();
    await both;
  });
});

describe('checksums and skipDuplicateContent', () => {
  const fx = useHyperFixture();

  async function ledger(table: string) {
    return fx.pool.query<{ file_name: string; row_count: string; checksum: string | null }>(
      `SELECT file_name, row_count, checksum FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}' ORDER BY file_name`,
    );
  }

  it('by default identical content lands twice, and small files get their SHA-256 in the ledger', async () => {
    const dir = join(fx.root, 'default');
    await mkdir(dir);
    const handle = await openWatcher(dir, 'dflt', { db: fx.db, registry: new WatcherRegistry() });
    const body = csv('id,v', [[1, 'same']]);
    await drop(dir, 'a.csv', body);
    await drop(dir, 'b.csv', body);
    await waitFor(() => handle.stats.filesIngested === 2, 'both files');
    await handle.stop();
    assert.equal(await count(fx.pool, 'dflt'), 2);
    const rows = await ledger('dflt');
    assert.deepEqual(
      rows.map((r) => [r.file_name, Number(r.row_count), r.checksum]),
      [
        ['a.csv', 1, sha256(body)],
        ['b.csv', 1, sha256(body)],
      ],
    );
    assert.equal(handle.stats.duplicatesSkipped, 0);
  });

  it('skips content the table already has: later, at once in one batch, and after a restart', async () => {
    const dir = join(fx.root, 'dedupe');
    await mkdir(dir);
    const options = { db: fx.db, registry: new WatcherRegistry(), skipDuplicateContent: true };
    let handle = await openWatcher(dir, 'dedupe', options);
    const x = csv('id,v', [[1, 'x']]);
    const y = csv('id,v', [[2, 'y']]);
    await drop(dir, 'x1.csv', x);
    await waitFor(() => handle.stats.filesIngested === 1, 'the first x');
    // The same content again, alone; then three copies of new content and one of x, at once.
    await drop(dir, 'x2.csv', x);
    await waitFor(() => handle.stats.duplicatesSkipped === 1, 'x2 skipped');
    await Promise.all([drop(dir, 'y1.csv', y), drop(dir, 'y2.csv', y), drop(dir, 'y3.csv', y), drop(dir, 'x3.csv', x)]);
    await waitFor(
      async () => (await leftovers(dir)).length === 0 && handle.stats.filesIngested + handle.stats.duplicatesSkipped === 6,
      'every drop settled',
    );
    await handle.stop();
    assert.equal(handle.stats.filesIngested, 2, 'x once, y once');
    assert.equal(handle.stats.duplicatesSkipped, 4);
    assert.equal(await count(fx.pool, 'dedupe', 'id = 1'), 1);
    assert.equal(await count(fx.pool, 'dedupe', 'id = 2'), 1);
    const rows = await ledger('dedupe');
    assert.equal(rows.length, 6, 'a ledger row for every file, skipped ones included');
    assert.equal(rows.filter((r) => Number(r.row_count) === 1).length, 2);
    assert.ok(rows.every((r) => r.checksum === sha256(r.file_name.startsWith('x') ? x : y)));
    assert.deepEqual(await readdir(join(dir, 'failed')).catch(() => []), []);

    // A new watcher on the same table knows the content from the ledger.
    handle = await openWatcher(dir, 'dedupe', { ...options, registry: new WatcherRegistry() });
    await drop(dir, 'y4.csv', y);
    await waitFor(() => handle.stats.duplicatesSkipped === 1, 'y4 skipped after a restart');
    // Copies of many contents, found together by the next start: their ledger rows go in at once
    // (by COPY, before the fence).
    const many = [10, 11, 12, 13, 14].map((id) => csv('id,v', [[id, 'z']]));
    await Promise.all(many.map((c, i) => drop(dir, `z${i}.csv`, c)));
    await waitFor(() => handle.stats.filesIngested === 5, 'z0..z4');
    await handle.stop();
    await Promise.all(many.map((c, i) => drop(dir, `z${i}-again.csv`, c)));
    handle = await openWatcher(dir, 'dedupe', { ...options, registry: new WatcherRegistry() });
    await waitFor(() => handle.stats.duplicatesSkipped === 5, 'the copies skipped');
    await handle.stop();
    assert.equal(await count(fx.pool, 'dedupe'), 7);
    assert.equal((await ledger('dedupe')).length, 17);
    assert.deepEqual(await readdir(join(dir, '.hyperwatch', 'staging')), [], 'nothing left in staging');
  });
});
