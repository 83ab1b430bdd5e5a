/**
 * `recursive` across crashes: the watcher's process is SIGKILLed at random moments while files of
 * one name arrive in several subfolders (`d3/batch-0007.csv` and `d5/batch-0007.csv` are two
 * files); at the end every row is in the table once, each from the path it was dropped at.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createHyperAdapter } from '../../../adapters/db/hyper/index.ts';
import { openWhenUnlocked } from '../../helpers/child.ts';
import { killWhileProducing } from '../../helpers/kill-loop.ts';
import { csv, drop } from '../../helpers/drop.ts';
import { useHyperFixture } from '../../helpers/env.ts';

/** Files left under `dir` but in failed/ and .hyperwatch/ (folders themselves are not files). */
async function filesLeft(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, rel), { withFileTypes: true }).catch(() => [])) {
    const path = rel === '' ? e.name : `${rel}/${e.name}`;
    if (rel === '' && (e.name === 'failed' || e.name === '.hyperwatch')) continue;
    if (e.isDirectory()) out.push(...(await filesLeft(dir, path)));
    else out.push(path);
  }
  return out;
}

describe('recursive, crash safety', () => {
  const fx = useHyperFixture();

  it('SIGKILL at random moments, 10+ times, while 400 files of 40 names come in 10 subfolders: every row once, from its path', async () => {
    const dir = join(fx.root, 'kill-recursive');
    await mkdir(dir);
    const database = join(fx.root, 'kill-recursive.hyper');
    const options = { recursive: true, sourceColumns: { file: '_source_file' } };
    const files = 400;
    const perFile = 3;
    const pathOf = (f: number) => `d${f % 10}/sub/batch-${String(Math.floor(f / 10)).padStart(4, '0')}.csv`;
    const kills = await killWhileProducing({
      dir,
      table: 'events',
      database,
      options,
      files,
      dropFile: async (f) => {
        const folder = join(dir, `d${f % 10}`, 'sub');
        await mkdir(folder, { recursive: true });
        const rows = Array.from({ length: perFile }, (_, r) => [f * perFile + r, f]);
        await drop(folder, pathOf(f).split('/').pop()!, csv('id,f', rows));
      },
      pauseEvery: 10,
      pauseMs: 10,
      minKills: 10,
      seed: 7,
      left: () => filesLeft(dir),
    });

    const check = createHyperAdapter({ database });
    const pool = await openWhenUnlocked(check);
    try {
      const [stats] = await pool.query<{ n: string; d: string }>('SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS d FROM events');
      console.log(`# ${kills} kills; rows ${stats!.n}, distinct ids ${stats!.d}`);
      assert.ok(kills >= 10);
      assert.equal(Number(stats!.d), files * perFile, 'every id present');
      assert.equal(Number(stats!.n), files * perFile, 'no id twice');
      const rows = await pool.query<{ f: string; _source_file: string }>('SELECT DISTINCT f, _source_file FROM events');
      assert.equal(rows.length, files);
      for (const r of rows) assert.equal(r._source_file, pathOf(Number(r.f)), 'each row from the path it was dropped at');
      const ledger = await pool.query<{ n: string; names: string }>(
        'SELECT COUNT(*) AS n, COUNT(DISTINCT file_name) AS names FROM hyperwatch_internal.ingest_log',
      );
      assert.equal(Number(ledger[0]!.n), files, 'one ledger row per file');
      assert.equal(Number(ledger[0]!.names), files, 'a/x.csv and b/x.csv are two names');
      assert.deepEqual(await readdir(join(dir, 'failed')).catch(() => []), [], 'nothing failed');
    } finally {
      await pool.close();
      await check.close();
    }
  });
});
