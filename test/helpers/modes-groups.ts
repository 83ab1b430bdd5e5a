/**
 * The load modes with files ready at once: they go in groups where the database reads back what
 * its own transaction wrote (PostgreSQL), one by one elsewhere (hyperd), and in either case the
 * table ends as applying every file once, in the order they committed, says. A file that fails
 * in the middle of a group fails alone; the files around it keep their order.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openWatcher } from '../../src/api.ts';
import type { LoadMode } from '../../src/options/load-modes.ts';
import type { Logger } from '../../src/types.ts';
import { csv, drop, waitFor } from './drop.ts';
import { type ModesExpect, rowsOf } from './modes-common.ts';
import type { WatchBench } from './watch-bench.ts';

type Row = readonly [id: number, name: string, score: number];

/** File k's rows: ids that overlap the files before and after it, so that the order shows. */
function rowsOfFile(k: number): Row[] {
  return [k, k + 2, k + 5].map((id) => [id, `f${k}`, 10 * k + id]);
}

/** The table after `files` were applied in this order, as the mode says. */
function applied(mode: LoadMode, seed: readonly Row[], files: readonly (readonly Row[])[]): Row[] {
  let table = [...seed];
  for (const rows of files) {
    if (mode === 'replace') table = [...rows];
    else {
      const ids = new Set(rows.map(([id]) => id));
      table = [...table.filter(([id]) => !ids.has(id)), ...rows];
    }
  }
  return table.sort((a, b) => a[0] - b[0]);
}

export function groupCases(t: WatchBench, expect: ModesExpect): void {
  const how = expect.grouped ? 'go in groups' : 'go one by one';
  for (const mode of ['replace', 'upsert', 'replace-keys'] as const) {
    it(`${mode}: 8 files ready at once ${how}, applied in their order; one that fails in the middle fails alone`, async () => {
      const { dir, table, opts } = await t.inbox();
      const options = { ...opts, mode, batchFiles: 10, ...(mode === 'replace' ? {} : { key: 'id' }) };
      const seed: Row[] = [1, 2, 3].map((id) => [id, 'seed', id]);
      const first = await openWatcher(dir, table, options);
      await drop(
        dir,
        'seed.csv',
        csv(
          'id,name,score',
          seed.map((r) => [...r]),
        ),
      );
      await waitFor(() => first.stats.filesIngested === 1, 'seed.csv');
      await first.stop();

      // Dropped while no watcher runs: the next start finds them all ready at once. The fifth
      // has a value that is not a number in a number column: it fails, alone.
      const files = new Map<string, Row[]>();
      for (let k = 1; k <= 8; k++) {
        const name = `f${k}.csv`;
        if (k === 5) await drop(dir, name, 'id,name,score\n40,bad,not-a-number\n');
        else {
          files.set(name, rowsOfFile(k));
          await drop(
            dir,
            name,
            csv(
              'id,name,score',
              rowsOfFile(k).map((r) => [...r]),
            ),
          );
        }
      }
      const landed: { file: string; group?: number }[] = [];
      const logger: Logger = {
        debug: () => {},
        info: (message, fields) => {
          if (message === 'ingested')
            landed.push({ file: String(fields?.file), ...(fields?.group ? { group: Number(fields.group) } : {}) });
        },
        warn: () => {},
        error: () => {},
      };
      const handle = await openWatcher(dir, table, { ...options, logger });
      await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 8, 'the 8 files');
      assert.equal(handle.stats.filesIngested, 7, JSON.stringify(handle.stats.lastError));
      assert.equal(handle.stats.filesFailed, 1);
      assert.match(handle.stats.lastError?.message ?? '', /f5\.csv/);
      await handle.stop();

      const order = landed.map((l) => l.file);
      assert.deepEqual([...order].sort(), [...files.keys()].sort());
      const biggest = Math.max(0, ...landed.map((l) => l.group ?? 0));
      if (expect.grouped) assert.ok(biggest >= 3, `a group of 3 or more files: ${JSON.stringify(landed)}`);
      else assert.equal(biggest, 0, `every file alone: ${JSON.stringify(landed)}`);
      const want = applied(
        mode,
        seed,
        order.map((name) => files.get(name)!),
      ).map(([id, name, score]) => ({ id: String(id), name, score: String(score) }));
      const got = (await rowsOf(t, table, ['id', 'name', 'score'], 'id')).sort((a, b) => Number(a.id) - Number(b.id));
      assert.deepEqual(got, want, `applied in the order ${order.join(', ')}`);
    });
  }
}
