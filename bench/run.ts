/**
 * `npm run bench [-- --quick]`: generates the data sets (fixed seed) in a temporary directory,
 * starts one hyperd, and measures in the same run hyperwatch end to end and hyperd loading the
 * same files by itself, all on one persistent `.hyper` database. Prints a table with every
 * target and its ratio, and writes bench/results/<mode>.{json,md,svg}. See BENCHMARKS.md.
 *
 * Options: --quick (about a minute: one run, smaller memory and backlog workloads), --runs N,
 * --only a,b (workloads: csv, csv-source, csv-gz, parquet, arrow, files-own, files-other, flood, trickle, memory,
 * backlog), --formats/--modes/--tables (narrow files-own and files-other, see bench/lib/format-run.ts), --backlog N,
 * --big-mb N, --out DIR, --keep (leave the generated data), --tmp DIR (instead of the OS's),
 * --watch JSON (extra WatchOptions for every watcher, e.g. '{"maxConcurrent":8}': the report
 * then says which; to measure what a setting changes), --report FILE.json (render a saved run's
 * table, Markdown and chart again, measuring nothing).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statfsSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import { quoteLiteral } from '../src/index.ts';
import { arrowStreamCopy, clientCopy, parquetExternal, psqlCopy, serverCopy, serverCopyGzip } from './lib/baselines.ts';
import type { BenchContext } from './lib/bench-context.ts';
import { type Mode, REFERENCE, SEED, SIZES, type Sizes } from './lib/config.ts';
import { gzipFile, writeRows } from './lib/data.ts';
import { formatFilters, ownFiles, runFormatWorkloads } from './lib/format-run.ts';
import type { FormatCase } from './lib/format-set.ts';
import { now, single } from './lib/measure.ts';
import {
  type BacklogFigure,
  type BenchResult,
  evaluateTargets,
  type Figure,
  type Latency,
  type MemoryFigure,
  renderText,
  writeReport,
} from './lib/report.ts';
import { createDatabase, dropTable, freshTable, startServer, withSession } from './lib/server.ts';
import { backlog as backlogWorkload, flood, trickle } from './lib/small-files.ts';
import { bigFiles, SOURCE_COLUMN, singleFile } from './lib/single-file.ts';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const WORKLOADS = [
  'csv',
  'csv-source',
  'csv-gz',
  'parquet',
  'arrow',
  'files-own',
  'files-other',
  'flood',
  'trickle',
  'memory',
  'backlog',
] as const;
type Workload = (typeof WORKLOADS)[number];

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    runs: { type: 'string' },
    only: { type: 'string' },
    backlog: { type: 'string' },
    'big-mb': { type: 'string' },
    out: { type: 'string' },
    keep: { type: 'boolean', default: false },
    tmp: { type: 'string' },
    watch: { type: 'string' },
    report: { type: 'string' },
    formats: { type: 'string' },
    modes: { type: 'string' },
    tables: { type: 'string' },
  },
});

const mode: Mode = args.quick ? 'quick' : 'full';
const sizes: Sizes = {
  ...SIZES[mode],
  ...(args.runs ? { runs: Math.max(1, Number(args.runs)), formatRuns: Math.max(1, Number(args.runs)) } : {}),
  ...(args.backlog ? { backlogLarge: Number(args.backlog), backlogSmall: Math.max(1, Math.round(Number(args.backlog) / 10)) } : {}),
  ...(args['big-mb'] ? { bigBytes: Number(args['big-mb']) * 1024 * 1024 } : {}),
};
const only = new Set<Workload>(args.only ? (args.only.split(',') as Workload[]) : WORKLOADS);
for (const w of only) if (!WORKLOADS.includes(w)) throw new Error(`unknown workload ${w}; known: ${WORKLOADS.join(', ')}`);
const outDir = resolve(args.out ?? join(here, 'results'));
const watch = args.watch ? (JSON.parse(args.watch) as Record<string, unknown>) : undefined;
const formats = formatFilters(only.has('files-own'), only.has('files-other'), args, mode === 'quick');

const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

/** The watcher's process runs compiled JavaScript: no TypeScript loader in the RSS we measure. */
function compileWorker(): string {
  const outDir = join(here, 'out', 'build');
  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join(here, 'tsconfig.build.json'), '--outDir', outDir], { stdio: 'inherit' });
  if (result.status !== 0) throw new Error('compiling the bench worker failed');
  return join(outDir, 'bench', 'lib', 'worker.js');
}

/** Free bytes where the data goes; the memory workloads need two big files plus their copies. */
function checkSpace(dir: string): void {
  const { bavail, bsize } = statfsSync(dir);
  const free = bavail * bsize;
  const need = (only.has('memory') ? 2 * sizes.bigBytes : 0) + 1024 ** 3;
  if (free < need)
    throw new Error(
      `${dir} has ${(free / 1024 ** 3).toFixed(1)} GB free; this run needs about ${(need / 1024 ** 3).toFixed(1)} GB (use ` +
        `--tmp, --big-mb or --quick)`,
    );
}

const loadAverage = () => os.loadavg().map((v) => Math.round(v * 100) / 100);

/** The machine, with its load average (1, 5, 15 min) at start and end: a shared machine is noisy. */
const machine = (loadAverageAtStart: number[]) => ({
  cpus: os.cpus().length,
  cpuModel: os.cpus()[0]?.model ?? 'unknown',
  memoryGb: Math.round(os.totalmem() / 1024 ** 3),
  platform: `${os.platform()} ${os.release()}`,
  node: process.version,
  loadAverageAtStart,
  loadAverageAtEnd: loadAverage(),
});

async function main(): Promise<void> {
  const startedAt = new Date();
  const loadAtStart = loadAverage();
  const workerJs = compileWorker();
  const work = await mkdtemp(join(args.tmp ?? os.tmpdir(), 'hyperwatch-bench-'));
  checkSpace(work);
  log(`mode ${mode}, data in ${work}`);
  const server = await startServer();
  const database = join(work, 'bench.hyper');
  const figures: Figure[] = [];
  const memory: MemoryFigure[] = [];
  const notes: string[] = [];
  let latency: Latency | undefined;
  let backlog: BacklogFigure | undefined;
  let formatCases: FormatCase[] = [];
  const datasets: Record<string, { rows: number; bytes: number }> = {};
  try {
    await createDatabase(server, database);
    const outside = join(work, 'outside');
    await mkdir(outside);
    let tables = 0;
    const tableName = (prefix: string) => `${prefix}_${++tables}`;

    // ---- data sets --------------------------------------------------------------------------
    const dataDir = join(work, 'data');
    await mkdir(dataDir);
    let t = now();
    const csv = await writeRows(join(dataDir, 'bulk.csv'), 'csv', { rows: sizes.bulkRows }, SEED);
    datasets.csv = { rows: csv.rows, bytes: csv.bytes };
    log(`generated ${csv.path}: ${csv.rows} rows, ${(csv.bytes / 1e6).toFixed(1)} MB in ${((now() - t) / 1000).toFixed(1)} s`);
    const parquetPath = join(dataDir, 'bulk.parquet');
    const arrowStreamPath = join(dataDir, 'bulk.arrows');
    const arrowPath = join(dataDir, 'bulk.arrow');
    if (only.has('parquet') || only.has('arrow') || only.has('files-own')) {
      // hyperd writes the Parquet file and the Arrow stream from the same rows; apache-arrow turns
      // the stream into the IPC file format (the one in the reference table).
      t = now();
      await withSession(server, database, async (sql) => {
        await freshTable(sql, 'bench_source');
        await sql.unsafe(`COPY bench_source FROM ${quoteLiteral(csv.path)} WITH (FORMAT csv, HEADER true)`);
        await sql.unsafe(`COPY (SELECT * FROM bench_source ORDER BY id) TO ${quoteLiteral(parquetPath)} WITH (FORMAT parquet)`);
        await sql.unsafe(`COPY (SELECT * FROM bench_source ORDER BY id) TO ${quoteLiteral(arrowStreamPath)} WITH (FORMAT arrowstream)`);
        await dropTable(sql, 'bench_source');
      });
      writeFileSync(arrowPath, tableToIPC(tableFromIPC(readFileSync(arrowStreamPath)), 'file'));
      datasets.parquet = { rows: csv.rows, bytes: (await stat(parquetPath)).size };
      datasets.arrow = { rows: csv.rows, bytes: (await stat(arrowPath)).size };
      log(
        `generated Parquet (${(datasets.parquet.bytes / 1e6).toFixed(1)} MB) and Arrow IPC ` +
          `(${(datasets.arrow.bytes / 1e6).toFixed(1)} MB) in ${((now() - t) / 1000).toFixed(1)} s`,
      );
    }

    // ---- helpers ------------------------------------------------------------------------------
    const ctx: BenchContext = { server, database, workerJs, work, outside, sizes, watch, tableName, log };
    const csvFile = { file: csv.path, rows: csv.rows, bytes: csv.bytes };

    // ---- single big files ---------------------------------------------------------------------
    if (only.has('csv')) {
      const baselines = [
        [serverCopy, csv.path],
        [clientCopy, csv.path],
        [psqlCopy, csv.path],
      ] as const;
      const referenceSeconds = REFERENCE.bulkCsvSeconds.persistent;
      figures.push(...(await singleFile(ctx, { workload: 'CSV 1 file', ...csvFile, ext: '.csv', baselines, referenceSeconds })));
      figures.push(reference('CSV 1 file', 'reference, persistent .hyper', REFERENCE.bulkCsvSeconds.persistent, { rows: REFERENCE.rows }));
      figures.push(reference('CSV 1 file', 'reference, scratch db', REFERENCE.bulkCsvSeconds.scratch, { rows: REFERENCE.rows }));
    }
    if (only.has('csv-source')) {
      // The same file with a source column: every row also gets the file's name.
      const baselines = [[serverCopy, csv.path]] as const;
      const workload = 'CSV 1 file, source column';
      figures.push(...(await singleFile(ctx, { workload, ...csvFile, ext: '.csv', baselines, variant: SOURCE_COLUMN })));
    }
    if (only.has('csv-gz')) {
      // The same rows gzip-compressed; hyperd reads a .csv.gz itself (the fastest way it has).
      t = now();
      const gz = await gzipFile(csv.path, `${csv.path}.gz`);
      datasets.csvGz = { rows: csv.rows, bytes: gz.bytes };
      log(`gzipped ${gz.path}: ${(gz.bytes / 1e6).toFixed(1)} MB in ${((now() - t) / 1000).toFixed(1)} s`);
      const gzFile = { file: gz.path, rows: csv.rows, bytes: gz.bytes, ext: '.csv.gz' };
      figures.push(...(await singleFile(ctx, { workload: 'CSV.gz 1 file', ...gzFile, baselines: [[serverCopyGzip, gz.path]] })));
    }
    if (only.has('parquet')) {
      const parquet = { file: parquetPath, rows: csv.rows, bytes: datasets.parquet!.bytes, ext: '.parquet' };
      const baselines = [[parquetExternal, parquetPath]] as const;
      const referenceSeconds = REFERENCE.parquetSeconds;
      figures.push(...(await singleFile(ctx, { workload: 'Parquet 1 file', ...parquet, baselines, referenceSeconds })));
      figures.push(reference('Parquet 1 file', 'reference, scratch db', REFERENCE.parquetSeconds, { rows: REFERENCE.rows }));
    }
    if (only.has('arrow')) {
      const arrow = { file: arrowPath, rows: csv.rows, bytes: datasets.arrow!.bytes, ext: '.arrow' };
      const baselines = [[arrowStreamCopy, arrowStreamPath]] as const;
      const referenceSeconds = REFERENCE.arrowSeconds;
      figures.push(...(await singleFile(ctx, { workload: 'Arrow IPC 1 file', ...arrow, baselines, referenceSeconds })));
      figures.push(reference('Arrow IPC 1 file', 'reference, scratch db', REFERENCE.arrowSeconds, { rows: REFERENCE.rows }));
    }

    // ---- the format set: every format, own and other writers' files, embedded and endpoint ----
    if (formats.own || formats.other) {
      const formatCtx = { server, database, workerJs, work, outside, runs: sizes.formatRuns, ...(watch ? { watch } : {}), tableName, log };
      const own = () => ownFiles({ csv: csv.path, parquet: parquetPath, arrowFile: arrowPath, arrowStream: arrowStreamPath }, csv.rows);
      formatCases = await runFormatWorkloads(formatCtx, formats, own, sizes.bulkRows, datasets);
    }

    // ---- many small files: flood and trickle --------------------------------------------------
    if (only.has('flood')) {
      const figure = await flood(ctx);
      figures.push(figure);
      figures.push(reference(figure.workload, 'reference, persistent .hyper', REFERENCE.floodSeconds.persistent, { files: 1000 }));
      figures.push(reference(figure.workload, 'reference, scratch db', REFERENCE.floodSeconds.scratch, { files: 1000 }));
    }
    if (only.has('trickle')) latency = await trickle(ctx);

    // ---- memory: big files ----------------------------------------------------------------------
    if (only.has('memory')) {
      const big = await bigFiles(ctx, dataDir, mode);
      figures.push(...big.figures);
      memory.push(...big.memory);
      notes.push(...big.notes);
    }

    // ---- memory: backlog at start ---------------------------------------------------------------
    if (only.has('backlog')) {
      if (mode === 'quick' || sizes.backlogLarge < SIZES.full.backlogLarge)
        notes.push(`backlog workloads used ${sizes.backlogSmall} and ${sizes.backlogLarge} files, not 10,000 and 100,000`);
      const swept = await backlogWorkload(ctx);
      figures.push(...swept.figures);
      backlog = swept.backlog;
    }
  } finally {
    await server.stop();
    if (args.keep) log(`data kept in ${work}`);
    else await rm(work, { recursive: true, force: true });
  }

  // ---- report -----------------------------------------------------------------------------------
  if (watch) notes.push(`every watcher ran with the WatchOptions ${JSON.stringify(watch)}, not the defaults`);
  const result: BenchResult = {
    title: `hyperwatch bench (${mode}), ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`,
    mode,
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: machine(loadAtStart),
    sizes,
    watchOptions: watch ?? null,
    seed: SEED,
    reference: REFERENCE,
    datasets,
    figures,
    latency: latency ?? null,
    targets: evaluateTargets({ figures, ...(latency ? { latency } : {}), memory, ...(backlog ? { backlog } : {}), formatCases }),
    memory,
    backlog: backlog ?? null,
    notes,
    formatCases,
  };
  console.log(renderText(result));
  writeReport(result, outDir);
  log(`wrote ${join(outDir, `${result.mode}.json`)}, .md and .svg`);
}

function reference(workload: string, method: string, s: number, of: { rows?: number; files?: number }): Figure {
  return { workload, method, kind: 'reference', seconds: single(s), runs: [s], ...of, note: REFERENCE.label };
}

if (args.report) {
  // Renders a saved run again (table, Markdown, chart), without measuring anything; the targets
  // are evaluated again from the saved figures, so a change in how they are shown applies.
  const saved = JSON.parse(readFileSync(args.report, 'utf8')) as BenchResult;
  const result: BenchResult = saved.memory
    ? {
        ...saved,
        targets: evaluateTargets({
          figures: saved.figures,
          ...(saved.latency ? { latency: saved.latency } : {}),
          memory: saved.memory,
          ...(saved.backlog ? { backlog: saved.backlog } : {}),
          ...(saved.formatCases ? { formatCases: saved.formatCases } : {}),
        }),
      }
    : saved;
  console.log(renderText(result));
  writeReport(result, args.out ? outDir : dirname(resolve(args.report)));
} else {
  await main();
}
