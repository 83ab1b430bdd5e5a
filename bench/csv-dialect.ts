/**
 * What the CSV dialect options cost: a file streamed because of a decimal comma (or NULL markers)
 * against hyperd's own `COPY FROM 'path'` of the same rows written plainly, on one embedded hyperd,
 * run by run in turns. Each hyperwatch figure is the time from the `.ready` to the file counted as
 * ingested, into a table that exists (the bench's six columns, a TIMESTAMP among them).
 *
 *   node --import tsx bench/csv-dialect.ts [--rows 1000000] [--runs 5]
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createHyperAdapter } from '../adapters/db/hyper/index.ts';
import { openWatcher } from '../src/api.ts';
import type { WatchOptions } from '../src/options.ts';
import { quoteLiteral } from '../src/columns/sql.ts';
import { TABLE_COLUMNS, writeRows } from './lib/data.ts';
import { now } from './lib/measure.ts';

const { values: args } = parseArgs({ options: { rows: { type: 'string' }, runs: { type: 'string' } } });
const rows = Number(args.rows ?? 1_000_000);
const runs = Number(args.runs ?? 5);
const root = join(tmpdir(), `hyperwatch-csv-dialect-${process.pid}`);
await mkdir(root, { recursive: true });

const plain = await writeRows(join(root, 'plain.csv'), 'csv', { rows }, 42);
const text = (await import('node:fs/promises')).readFile;
const lines = (await text(plain.path, 'utf8')).split('\n');
// id,ts,category,amount,qty,note → ';' between fields, the amount with a decimal comma.
const comma = lines
  .map((l, i) =>
    i === 0 || l === '' ? l.replaceAll(',', ';') : l.replaceAll(',', ';').replace(/^([^;]*;[^;]*;[^;]*;-?\d+)\.(\d+)/, '$1,$2'),
  )
  .join('\n');
await writeFile(join(root, 'comma.csv'), comma);
// Every tenth amount and quantity written NA, every seventh category \N.
const marked = lines.map((l, i) => {
  if (i === 0 || l === '') return l;
  const f = l.split(',');
  if (i % 10 === 0) f[3] = f[4] = 'NA';
  if (i % 7 === 0) f[2] = '\\N';
  return f.join(',');
});
await writeFile(join(root, 'marked.csv'), marked.join('\n'));

const db = createHyperAdapter({ database: join(root, 'bench.hyper') });
const pool = await db.openPool({ maxConnections: 1 });
const create = (table: string) => pool.query(`CREATE TABLE ${table} (${TABLE_COLUMNS.map(([n, t]) => `${n} ${t}`).join(', ')})`);
let tables = 0;

async function hyperdCopy(): Promise<number> {
  const table = `raw_${++tables}`;
  await create(table);
  const start = now();
  await pool.query(`COPY ${table} FROM ${quoteLiteral(plain.path)} WITH (FORMAT csv, HEADER true)`);
  return (now() - start) / 1000;
}

async function watched(source: string, options: WatchOptions): Promise<number> {
  const table = `hw_${++tables}`;
  await create(table);
  const inbox = join(root, `inbox-${tables}`);
  await mkdir(inbox);
  const handle = await openWatcher(inbox, table, { db, ...options });
  const name = 'bulk.csv';
  await writeFile(join(inbox, name), await text(join(root, source)));
  const start = now();
  await writeFile(join(inbox, `${name}.ready`), '');
  while (handle.stats.filesIngested + handle.stats.filesFailed === 0) await new Promise((r) => setTimeout(r, 5));
  const seconds = (now() - start) / 1000;
  await handle.stop();
  if (handle.stats.filesFailed > 0) throw new Error(`${source}: ${JSON.stringify(handle.stats.lastError)}`);
  const [{ n }] = (await pool.query(`SELECT COUNT(*) AS n FROM ${table}`)) as [{ n: number | string }];
  if (Number(n) !== rows) throw new Error(`${source}: ${n} rows, not ${rows}`);
  await rm(inbox, { recursive: true, force: true });
  return seconds;
}

const cases: [string, () => Promise<number>][] = [
  ['hyperd COPY FROM path (plain file)', hyperdCopy],
  ['hyperwatch, plain file', () => watched('plain.csv', {})],
  ["hyperwatch, decimal comma (';', decimalSeparator ',')", () => watched('comma.csv', { csvDelimiter: ';', decimalSeparator: ',' })],
  ["hyperwatch, NULL markers (nullValues ['NA', '\\\\N'])", () => watched('marked.csv', { nullValues: ['NA', '\\N'] })],
];
const times = new Map<string, number[]>(cases.map(([name]) => [name, []]));
for (let r = 0; r < runs; r++) {
  for (const [name, run] of cases) {
    const s = await run();
    times.get(name)!.push(s);
    process.stderr.write(`run ${r + 1}: ${name}: ${s.toFixed(3)} s\n`);
  }
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const copy = median(times.get(cases[0]![0])!);
console.log(`${rows} rows, ${runs} runs each, medians (min-max); ratio = hyperd COPY's seconds / this one's`);
for (const [name] of cases) {
  const v = times.get(name)!;
  console.log(
    `${name}: ${median(v).toFixed(3)} s (${Math.min(...v).toFixed(3)}-${Math.max(...v).toFixed(3)}), ` +
      `ratio ${(copy / median(v)).toFixed(2)}`,
  );
}
await pool.close();
await db.close();
await rm(root, { recursive: true, force: true });
