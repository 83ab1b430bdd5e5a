/**
 * The polluted-files benchmark (bench/lib/polluted.ts) through real watchers on hyperd and on
 * PostgreSQL: for every pollution, the clean variant, one with a bad row and one with a bad column
 * (and that one gzip-compressed too), ready together, under the flags a user would type for the
 * pollution and `--on-bad-rows skip`. Each file lands exactly the clean file's rows; the bad one
 * of each bad variant is the only row in `failed/<name>.rejected.csv`, at its own line. The rows
 * carry a source column (the file's name), which is how each file's rows are told apart, and a
 * path of its own: a source column under another quote, and one with `--no-header` on hyperd, each
 * landed wrong before this suite (the name in double quotes; the first row dropped).
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Papa from 'papaparse';
import { openWatcher } from '../src/api.ts';
import type { WatchOptions } from '../src/options.ts';
import { gzip } from './helpers/compression-suite.ts';
import { waitFor } from './helpers/drop.ts';
import { hyperFixture } from './helpers/env.ts';
import {
  BAD_ID,
  type Badness,
  CLEAN_ROWS,
  fileName,
  optionsFromFlags,
  type Pollution,
  POLLUTIONS,
  pollutedBytes,
  pollutedText,
  TABLE_SQL,
} from '../bench/lib/polluted.ts';
import { postgresForFile } from './helpers/postgres-file.ts';
import { useWatchBench, type WatchBench } from './helpers/watch-bench.ts';

const expected = CLEAN_ROWS.map(([id, name, amount, day]) => [id, name, amount, day]);

async function pollutedCase(t: WatchBench, p: Pollution): Promise<void> {
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
  const options: WatchOptions = { ...opts, ...optionsFromFlags([...p.flags, '--on-bad-rows', 'skip']), sourceColumns: { file: '_file' } };
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

function pollutedCases(t: WatchBench): void {
  for (const p of POLLUTIONS) {
    it(`${p.name}${p.flags.length > 0 ? ` (${p.flags.join(' ')})` : ''}: every file lands the clean rows, the bad ones set aside`, () =>
      pollutedCase(t, p));
  }
}

describe('polluted files on hyperd', () => {
  const t = useWatchBench(() => hyperFixture(), 'polluted_');
  pollutedCases(t);
});

const { pgFixture } = await postgresForFile();

describe('polluted files on PostgreSQL', () => {
  const t = useWatchBench(pgFixture, 'polluted_pg_');
  pollutedCases(t);
});
