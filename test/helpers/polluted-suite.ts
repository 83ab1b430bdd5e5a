/**
 * One pollution of the polluted-files benchmark (bench/lib/polluted.ts) through a real watcher:
 * used by test/scenarios/polluted/polluted-files.test.ts (the flags a user types) and
 * test/plugins/csv/csv-sniff.test.ts (`--sniff`).
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Papa from 'papaparse';
import {
  BAD_ID,
  type Badness,
  CLEAN_ROWS,
  fileName,
  optionsFromFlags,
  type Pollution,
  pollutedBytes,
  pollutedText,
  TABLE_SQL,
} from '../../bench/lib/polluted.ts';
import { openWatcher } from '../../src/api.ts';
import type { WatchOptions } from '../../src/options.ts';
import { gzip } from './compression-suite.ts';
import { waitFor } from './drop.ts';
import type { WatchBench } from './watch-bench.ts';

const expected = CLEAN_ROWS.map(([id, name, amount, day]) => [id, name, amount, day]);

/**
 * The pollution's three variants (and the bad column's gzip-compressed) ready together in an inbox
 * of their own, loaded under `flags` (default: the pollution's own) and `--on-bad-rows skip`: each
 * lands exactly the clean rows, its bad row alone in its `.rejected.csv`, at its own line.
 */
export async function pollutedCase(t: WatchBench, p: Pollution, flags: readonly string[] = p.flags): Promise<void> {
  const { dir, table, opts } = await t.inbox();
  await t.pool.query(`CREATE TABLE ${table} ${TABLE_SQL.replace(')', ', _file TEXT)')}`);
  const files: { name: string; badLine?: number }[] = [];
  for (const bad of ['none', 'row', 'column'] as Badness[]) {
    const { text, badLine } = pollutedText(p, bad);
    const bytes = pollutedBytes(p, text);
    const name = fileName(p, bad);
    await writeFile(join(dir, name), bytes);
    files.push({ name, ...(badLine === undefined ? {} : { badLine }) });
    if (bad === 'column') {
      await writeFile(join(dir, `${name}.gz`), await gzip(bytes));
      files.push({ name: `${name}.gz`, ...(badLine === undefined ? {} : { badLine }) });
    }
  }
  for (const f of files) await writeFile(join(dir, `${f.name}.ready`), '');
  const options: WatchOptions = { ...opts, ...optionsFromFlags([...flags, '--on-bad-rows', 'skip']), sourceColumns: { file: '_file' } };
  const handle = await openWatcher(dir, table, options);
  try {
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed >= files.length, `${p.name}: its files`, 30_000);
  } finally {
    await handle.stop();
  }
  assert.equal(handle.stats.filesFailed, 0, `${p.name}: ${JSON.stringify(handle.stats.lastError)}`);
  assert.equal(handle.stats.rowsRejected, files.length - 1, `${p.name}: one bad row in each bad file`);
  const rows = await t.pool.query<{ id: string | number; name: string | null; amount: number | null; day: string | null; f: string }>(
    `SELECT id, name, amount, CAST(day AS TEXT) AS day, _file AS f FROM ${table} ORDER BY _file, id`,
  );
  for (const f of files) {
    const landed = rows
      .filter((r) => r.f === f.name)
      .map((r) => [Number(r.id), r.name, r.amount === null ? null : Number(r.amount), r.day]);
    assert.deepEqual(landed, expected, `${p.name}: ${f.name} lands the clean rows`);
    if (f.badLine === undefined) continue;
    const rejected = Papa.parse<string[]>(await readFile(join(dir, 'failed', `${f.name}.rejected.csv`), 'utf8'), {
      skipEmptyLines: true,
    }).data;
    const entries = rejected.filter((r) => /^\d+$/.test(r[0] ?? ''));
    assert.equal(entries.length, 1, `${p.name}: ${f.name}: ${JSON.stringify(rejected)}`);
    assert.equal(Number(entries[0]![0]), f.badLine, `${p.name}: ${f.name}: the bad row's line`);
    assert.ok(entries[0]![2]!.includes(String(BAD_ID)), `${p.name}: ${f.name}: the bad row's text: ${entries[0]![2]}`);
  }
}
