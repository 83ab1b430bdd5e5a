/**
 * Exactly once across crashes: the watcher's process and hyperd are killed at random moments while
 * producers keep dropping files; at the end every row is in the table once and no file is lost.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, rename, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createHyperAdapter } from '../../../adapters/db/hyper/index.ts';
import { openWatcher } from '../../../src/api.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import { gzip } from '../../helpers/compression-suite.ts';
import { csv, drop, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { count, useHyperFixture } from '../../helpers/env.ts';
import type { DbPool } from '../../../src/types.ts';
import { openWhenUnlocked } from '../../helpers/child.ts';
import { killWhileProducing } from '../../helpers/kill-loop.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('crash safety', () => {
  const fx = useHyperFixture();

  /**
   * SIGKILLs the watcher's process at random moments while 1,000 files arrive; `options` switch
   * features on (the child's `WatchOptions`), `ext` is how the files are dropped (`.csv.gz`:
   * gzip-compressed), `extra` checks what the features promise on the final table.
   */
  async function killRandomly(
    name: string,
    options: Record<string, unknown>,
    ext: '.csv' | '.csv.gz',
    extraColumn: boolean,
    extra?: (pool: DbPool, dir: string) => Promise<void>,
  ): Promise<void> {
    const dir = join(fx.root, name);
    await mkdir(dir);
    const database = join(fx.root, `${name}.hyper`);
    const files = 1000;
    const perFile = 3;
    const kills = await killWhileProducing({
      dir,
      table: 'events',
      database,
      options,
      files,
      dropFile: async (f) => {
        // With schema evolution on, every third file brings a column the table lacks at first.
        const wide = extraColumn && f % 3 === 2;
        const rows = Array.from({ length: perFile }, (_, r) => (wide ? [f * perFile + r, f, `x${f}`] : [f * perFile + r, f]));
        const body = csv(wide ? 'id,batch,extra' : 'id,batch', rows);
        await drop(dir, `batch-${String(f).padStart(4, '0')}${ext}`, ext === '.csv' ? body : await gzip(body));
      },
      pauseEvery: 25,
      pauseMs: 5,
      minKills: 12,
      seed: 42,
      left: async () => (await leftovers(dir)).filter((n) => n !== 'archive'),
    });

    const check = createHyperAdapter({ database });
    const pool = await openWhenUnlocked(check);
    try {
      const [stats] = await pool.query<{ n: string; d: string; lo: string; hi: string }>(
        'SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d, MIN(id) AS lo, MAX(id) AS hi FROM events',
      );
      console.log(`# ${kills} kills; rows ${stats!.n}, distinct ids ${stats!.d}`);
      assert.ok(kills >= 10);
      assert.equal(Number(stats!.d), files * perFile, 'every id present');
      assert.equal(Number(stats!.n), files * perFile, 'no id twice');
      assert.equal(Number(stats!.lo), 0);
      assert.equal(Number(stats!.hi), files * perFile - 1);
      const ledger = await pool.query<{ n: string }>('SELECT COUNT(*) AS n FROM hyperwatch_internal.ingest_log');
      assert.equal(Number(ledger[0]!.n), files);
      assert.deepEqual(await readdir(join(dir, 'failed')), [], 'nothing failed');
      await extra?.(pool, dir);
    } finally {
      await pool.close();
      await check.close();
    }
  }

  it('SIGKILL at random moments, 10+ times, while 1,000 files arrive: every id exactly once', async () => {
    await killRandomly('kill', {}, '.csv', false);
  });

  it('the same with every feature on (gzip files, schema evolution, source columns, bad rows skipped, archive): every row \
carries the file and the committed claim it came from, every file archived once', async () => {
    const sourceColumns = { file: '_source_file', claim: '_claim_id', committed: '_committed_at' };
    const options = { schemaEvolution: 'addColumns', sourceColumns, onBadRows: 'skip', onSuccess: 'archive' };
    await killRandomly('kill-features', options, '.csv.gz', true, async (pool, dir) => {
      const claims = new Map(
        (await pool.query<{ claim_id: string; file_name: string }>('SELECT claim_id, file_name FROM hyperwatch_internal.ingest_log')).map(
          (l) => [l.claim_id, l.file_name],
        ),
      );
      const rows = await pool.query<{ batch: string; extra: string | null; _source_file: string; _claim_id: string; at: string | null }>(
        'SELECT batch, extra, _source_file, _claim_id, CAST(_committed_at AS TEXT) AS at FROM events',
      );
      for (const r of rows) {
        const f = Number(r.batch);
        assert.equal(r._source_file, `batch-${String(f).padStart(4, '0')}.csv.gz`);
        assert.equal(claims.get(r._claim_id), r._source_file, 'the claim that committed the file');
        assert.ok(r.at !== null);
        assert.equal(r.extra, f % 3 === 2 ? `x${f}` : null);
      }
      // Each file archived once (a name carries its claim id only if a crash split the pair).
      const archived = (await readdir(join(dir, 'archive'))).filter((n) => !n.endsWith('.ready'));
      assert.equal(archived.length, 1000, 'every file archived, none twice');
      assert.equal(new Set(archived.map((n) => /^batch-(\d{4})\./.exec(n)?.[1])).size, 1000, 'every batch in the archive');
    });
  });

  it('files dropped during the initial sweep of a 2,000-file backlog are all ingested', async () => {
    const dir = join(fx.root, 'backlog');
    await mkdir(dir);
    for (let f = 0; f < 2000; f++) await drop(dir, `old-${f}.csv`, csv('id', [[f]]));
    const registry = new WatcherRegistry();
    const starting = openWatcher(dir, 'backlog', { db: fx.db, registry });
    for (let f = 0; f < 100; f++) {
      await drop(dir, `new-${f}.csv`, csv('id', [[10000 + f]]));
      await sleep(2);
    }
    const handle = await starting;
    await waitFor(() => handle.stats.filesIngested === 2100, '2,100 files', 120000);
    assert.equal(await count(fx.pool, 'backlog'), 2100);
    assert.equal(await count(fx.pool, 'backlog', 'id >= 10000'), 100);
    await handle.stop();
  });

  it('a symlink swapped in after .ready never makes its target land', async () => {
    const dir = join(fx.root, 'swap');
    await mkdir(dir);
    const secret = join(fx.root, 'secret.csv');
    await writeFile(secret, csv('id,owner', [[666, 'secret']]));
    const registry = new WatcherRegistry();
    const handle = await openWatcher(dir, 'swap', { db: fx.db, registry });
    let rounds = 0;
    for (let i = 0; i < 200; i++) {
      await drop(dir, `x${i}.csv`, csv('id,owner', [[i, 'producer']]));
      // Race the watcher: replace the data file with a symlink to the secret, at once.
      const link = join(dir, `.link${i}`);
      await symlink(secret, link).catch(() => {});
      await rename(link, join(dir, `x${i}.csv`)).catch(() => {});
      await unlink(link).catch(() => {});
      rounds++;
    }
    await waitFor(async () => handle.stats.filesIngested + handle.stats.filesFailed === rounds, 'every drop settled', 60000).catch(
      async (e) => {
        console.log(JSON.stringify(handle.stats), await readdir(dir), await stagedEntries(dir));
        throw e;
      },
    );
    assert.equal(await count(fx.pool, 'swap', "owner = 'secret'").catch(() => 0), 0);
    const failed = await readdir(join(dir, 'failed'));
    console.log(`# symlink race: ${handle.stats.filesIngested} producer files ingested, ${handle.stats.filesFailed} swapped ones refused`);
    assert.equal(failed.filter((n) => n.endsWith('.error')).length, handle.stats.filesFailed);
    await handle.stop();
  });

  it('stop during a large file: all of its rows or none, and the next start finishes it', async () => {
    const dir = join(fx.root, 'large');
    await mkdir(dir);
    const rows = 2_000_000;
    let body = 'id,payload\n';
    const parts: string[] = [];
    for (let i = 0; i < rows; i++) {
      parts.push(`${i},row-${i}-xxxxxxxxxxxxxxxxxxxxxxxx\n`);
      if (parts.length === 100000) {
        body += parts.join('');
        parts.length = 0;
      }
    }
    body += parts.join('');
    await fx.pool.query('CREATE TABLE large (id BIGINT, payload TEXT)');
    const registry = new WatcherRegistry();
    const handle = await openWatcher(dir, 'large', { db: fx.db, registry, stopTimeoutMs: 0 });
    await drop(dir, 'big.csv', body);
    await waitFor(() => handle.stats.inFlight === 1, 'the big file to be in flight', 30000);
    await sleep(50);
    const summary = await handle.stop();
    const first = await count(fx.pool, 'large');
    assert.ok(first === 0 || first === rows, `either all rows or none, got ${first}`);
    if (first === 0) {
      assert.equal(summary.stats.filesIngested, 0);
      const again = await openWatcher(dir, 'large', { db: fx.db, registry });
      assert.equal(again.stats.recovered, 1);
      await again.stop();
    }
    assert.equal(await count(fx.pool, 'large'), rows);
    assert.deepEqual(await leftovers(dir), []);
  });
});
