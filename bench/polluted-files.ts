/**
 * The polluted-files benchmark (bench/lib/polluted.ts) on one embedded hyperd: for every pollution,
 * the file written with the clean rows `--copies` times over, its variant with a bad row and the one
 * with a bad column, under the flags a user types for it and `--on-bad-rows skip`. Prints per
 * pollution whether every file landed exactly the clean rows (the bad one set aside) and how long
 * the large file took from its `.ready` to ingested, against the clean file; then the score.
 *
 *   node --import tsx bench/polluted-files.ts [--copies 20000]
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createHyperAdapter } from '../adapters/db/hyper/index.ts';
import { openWatcher } from '../src/api.ts';
import { silentLogger } from '../src/log.ts';
import { now } from './lib/measure.ts';
import {
  type Badness,
  CLEAN_ROWS,
  cleanRows,
  fileName,
  optionsFromFlags,
  type Pollution,
  POLLUTIONS,
  pollutedBytes,
  pollutedText,
  TABLE_SQL,
} from './lib/polluted.ts';

const { values: args } = parseArgs({ options: { copies: { type: 'string' } } });
const copies = Number(args.copies ?? 20_000);
const root = join(tmpdir(), `hyperwatch-polluted-${process.pid}`);
await mkdir(root, { recursive: true });
const db = createHyperAdapter({ database: join(root, 'bench.hyper') });
const pool = await db.openPool({ maxConnections: 1 });

/** A file's rows as the clean ones are written: `id|name|amount|day`, sorted by id. */
async function landed(table: string): Promise<string[]> {
  const rows = await pool.query<{ id: string | number; name: string | null; amount: number | null; day: string | null }>(
    `SELECT id, name, amount, CAST(day AS TEXT) AS day FROM ${table} ORDER BY id`,
  );
  return rows.map((r) => `${Number(r.id)}|${r.name}|${r.amount === null ? null : Number(r.amount)}|${r.day}`);
}
/** The clean rows as `landed` reads them (ids rise through the copies). */
const written = (n: number) => cleanRows(n).map((r) => r.map((v) => (v === null ? 'null' : String(v))).join('|'));

let tables = 0;
/** Loads one file under the pollution's flags; whether it landed exactly the clean rows, and the seconds. */
async function load(p: Pollution, bad: Badness, n: number): Promise<{ exact: boolean; seconds: number; why?: string }> {
  const dir = join(root, `in-${++tables}`);
  const table = `polluted_${tables}`;
  await mkdir(dir);
  await pool.query(`CREATE TABLE ${table} ${TABLE_SQL}`);
  const name = fileName(p, bad);
  await writeFile(join(dir, name), pollutedBytes(p, pollutedText(p, bad, n).text));
  const handle = await openWatcher(dir, table, {
    db,
    logger: silentLogger,
    ...optionsFromFlags([...p.flags, '--on-bad-rows', 'skip']),
  });
  const start = now();
  await writeFile(join(dir, `${name}.ready`), '');
  while (handle.stats.filesIngested + handle.stats.filesFailed === 0) await new Promise((r) => setTimeout(r, 2));
  const seconds = (now() - start) / 1000;
  await handle.stop();
  if (handle.stats.filesFailed > 0) return { exact: false, seconds, why: handle.stats.lastError?.code ?? 'failed' };
  const expected = written(n);
  const got = await landed(table);
  const exact = got.length === expected.length && got.every((row, i) => row === expected[i]);
  const rejectedOk = bad === 'none' ? handle.stats.rowsRejected === 0 : handle.stats.rowsRejected === 1;
  return { exact: exact && rejectedOk, seconds, ...(exact ? {} : { why: `${got.length} rows, ${expected.length} expected` }) };
}

const results: string[] = [];
let files = 0;
let exactFiles = 0;
let cleanSeconds = 0;
for (const p of POLLUTIONS) {
  const big = await load(p, 'none', copies);
  if (p.name === 'clean') cleanSeconds = big.seconds;
  const small = [await load(p, 'row', 1), await load(p, 'column', 1)];
  const all = [big, ...small];
  files += all.length;
  exactFiles += all.filter((r) => r.exact).length;
  const rows = copies * CLEAN_ROWS.length;
  results.push(
    `${p.name.padEnd(20)} ${all.every((r) => r.exact) ? 'exact' : `WRONG (${all.map((r) => r.why ?? 'ok').join('; ')})`}`.padEnd(44) +
      ` ${big.seconds.toFixed(2).padStart(6)} s  ${Math.round(rows / big.seconds)
        .toLocaleString('en-US')
        .padStart(10)} rows/s` +
      `  ×${(big.seconds / cleanSeconds).toFixed(2)}  ${p.flags.join(' ')}`,
  );
  console.log(results.at(-1));
}
console.log(`\n${exactFiles} of ${files} files landed exactly the clean rows (${copies * CLEAN_ROWS.length} rows per large file)`);
await pool.close();
await db.close?.();
await rm(root, { recursive: true, force: true });
