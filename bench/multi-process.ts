/**
 * Flood throughput of 1, 2, 4... `hyperwatch watch` processes on one inbox: the processes start
 * on an empty directory, then `--files` small CSV files (`--rows` rows each) are dropped as fast
 * as possible, and the clock runs from the first drop until the table holds every row.
 *
 *   node --import tsx bench/multi-process.ts --adapter postgres --url postgres://... [--processes 1,2,4] [--files 5000] [--rows 100]
 *   node --import tsx bench/multi-process.ts --endpoint 127.0.0.1:7483 --database /abs/bench.hyper [...]
 *
 * Each run uses a fresh directory and a fresh table (`bench_multi_<n>_<time>`). Prints one
 * Markdown table row per process count (files/s and rows/s), and JSON lines with `--json`.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { createDbAdapter } from '../src/compose.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const counts = (arg('processes') ?? '1,2,4').split(',').map(Number);
const files = Number(arg('files') ?? 5000);
const rows = Number(arg('rows') ?? 100);
const dbArgs = ['adapter', 'url', 'endpoint', 'database'].flatMap((k) => (arg(k) !== undefined ? [`--${k}`, arg(k)!] : []));
const root = await mkdtemp(join(tmpdir(), 'hyperwatch-bench-multi-'));
const db = createDbAdapter({ adapter: arg('adapter'), url: arg('url'), endpoint: arg('endpoint'), database: arg('database') });
const pool = await db.openPool({ maxConnections: 1 });
const bin = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'src', 'bin.ts');

async function rowsIn(table: string): Promise<number> {
  try {
    const [r] = await pool.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${table}`);
    return Number(r?.n ?? 0);
  } catch {
    return 0;
  }
}

const results: { processes: number; seconds: number; filesPerSecond: number; rowsPerSecond: number }[] = [];
for (const n of counts) {
  const dir = join(root, `p${n}`);
  await mkdir(dir);
  const table = `bench_multi_${n}_${Date.now()}`;
  const children = Array.from({ length: n }, () => spawn(process.execPath, ['--import', 'tsx', bin, 'watch', dir, '--table', table, '--quiet', ...dbArgs], { stdio: ['ignore', 'ignore', 'pipe'] }));
  // Started: each has its lease (a row in hyperwatch_leases for this directory).
  const deadline = Date.now() + 60_000;
  while ((await pool.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM hyperwatch_leases WHERE directory = '${dir}'`).catch(() => [{ n: 0 }]))[0]!.n != n) {
    if (Date.now() > deadline) throw new Error(`the ${n} processes did not start within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const body = `id,payload\n${Array.from({ length: rows }, (_, i) => `${i},row-${i}`).join('\n')}\n`;
  const started = performance.now();
  for (let f = 0; f < files; f++) {
    const name = `f${f}.csv`;
    await writeFile(join(dir, `.${name}.tmp`), body);
    await rename(join(dir, `.${name}.tmp`), join(dir, name));
    await writeFile(join(dir, `${name}.ready`), '');
  }
  while ((await rowsIn(table)) < files * rows) await new Promise((r) => setTimeout(r, 50));
  const seconds = (performance.now() - started) / 1000;
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => c.once('exit', r))));
  results.push({ processes: n, seconds, filesPerSecond: files / seconds, rowsPerSecond: (files * rows) / seconds });
}
await pool.close();
await db.close();
await rm(root, { recursive: true, force: true });

if (process.argv.includes('--json')) for (const r of results) console.log(JSON.stringify({ files, rows, database: db.describe(), ...r }));
else {
  console.log(`${files} files x ${rows} rows, ${db.describe()}\n\n| processes | seconds | files/s | rows/s |\n|---|---|---|---|`);
  for (const r of results) console.log(`| ${r.processes} | ${r.seconds.toFixed(2)} | ${Math.round(r.filesPerSecond)} | ${Math.round(r.rowsPerSecond)} |`);
}
