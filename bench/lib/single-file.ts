/**
 * The bench's workloads of one file at a time: a big file loaded by hyperwatch and by hyperd's own
 * ways (`singleFile`, run by run, interleaved), and the memory workloads (`bigFiles`: CSV and JSON
 * lines files of `sizes.bigBytes`, the watcher's peak RSS).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Baseline } from './baselines.ts';
import { type BenchContext, jobFor, thin, verifyCount } from './bench-context.ts';
import { type Mode, SEED, SIZES } from './config.ts';
import { writeRows, type Written } from './data.ts';
import { dropStaged, stageOne } from './drop-one.ts';
import { now, single, summarize } from './measure.ts';
import type { Figure, MemoryFigure } from './report.ts';
import { freshTable, withSession } from './server.ts';
import { runWatcher } from './watch-run.ts';

/** A variant of a single-file workload: more watch options, and the column they need in the table. */
export interface Variant {
  readonly watch: Record<string, unknown>;
  readonly addColumn: string;
}

export const SOURCE_COLUMN: Variant = { watch: { sourceColumns: { file: '_source_file' } }, addColumn: '_source_file TEXT' };

/** hyperwatch on one big file: copied next to the inbox, renamed in, then its `.ready`. */
async function watchOneFile(
  ctx: BenchContext,
  source: Written | { path: string; rows: number },
  name: string,
  timeoutMs: number,
  variant?: Variant,
) {
  const table = ctx.tableName('hw');
  await withSession(ctx.server, ctx.database, async (sql) => {
    await freshTable(sql, table);
    if (variant) await sql.unsafe(`ALTER TABLE ${table} ADD COLUMN ${variant.addColumn}`);
  });
  const inbox = await mkdtemp(join(ctx.work, 'inbox-'));
  await stageOne(source.path, ctx.outside, name);
  const run = await runWatcher(ctx.workerJs, jobFor(ctx, inbox, table, 1, timeoutMs, variant?.watch), ctx.server.pid, async () => [
    await dropStaged(ctx.outside, inbox, name),
  ]);
  await rm(inbox, { recursive: true, force: true });
  const ok = !run.done.timedOut && run.done.filesIngested === 1 && (await verifyCount(ctx, table, source.rows));
  if (run.done.lastError) ctx.log(`watcher error: ${run.done.lastError}`);
  return { run, ok, seconds: (run.done.settledAt[0]! - run.dropped[0]!) / 1000, gone: (run.done.goneAt - run.dropped[0]!) / 1000 };
}

/** One single-file workload as the bench measures it. */
export interface SingleFile {
  readonly workload: string;
  readonly file: string;
  readonly rows: number;
  readonly bytes: number;
  /** The name's extension in the inbox (`.csv.gz`). */
  readonly ext: string;
  /** hyperd's own ways to load it, each with the file it loads. */
  readonly baselines: readonly (readonly [Baseline, string])[];
  readonly referenceSeconds?: number;
  readonly variant?: Variant;
}

/** One single-file workload: the raw loads and hyperwatch, interleaved run by run; its figures. */
export async function singleFile(ctx: BenchContext, w: SingleFile): Promise<Figure[]> {
  const raw = new Map<string, number[]>(w.baselines.map(([b]) => [b.name, []]));
  const hw: number[] = [];
  const gone: number[] = [];
  let peak = 0;
  let hyperdPeak = 0;
  let verified = true;
  for (let r = 0; r < ctx.sizes.runs; r++) {
    for (const [baseline, path] of w.baselines) {
      const table = ctx.tableName('raw');
      const s = await baseline.run(ctx.server, ctx.database, table, path);
      verified = (await verifyCount(ctx, table, w.rows)) && verified;
      raw.get(baseline.name)!.push(s);
      ctx.log(`${w.workload} run ${r + 1}: ${baseline.name} ${s.toFixed(3)} s`);
    }
    const one = await watchOneFile(ctx, { path: w.file, rows: w.rows }, `bulk-${r}${w.ext}`, 600_000, w.variant);
    verified = one.ok && verified;
    hw.push(one.seconds);
    gone.push(one.gone);
    peak = Math.max(peak, one.run.done.peakRssMb);
    hyperdPeak = Math.max(hyperdPeak, one.run.hyperdPeakRssMb);
    ctx.log(
      `${w.workload} run ${r + 1}: hyperwatch ${one.seconds.toFixed(3)} s (files gone ${one.gone.toFixed(3)} s, ` +
        `RSS ${one.run.done.peakRssMb.toFixed(0)} MB)${one.ok ? '' : ' WRONG'}`,
    );
  }
  const figures: Figure[] = [
    {
      workload: w.workload,
      method: 'hyperwatch',
      kind: 'hyperwatch',
      seconds: summarize(hw),
      runs: hw,
      goneSeconds: summarize(gone),
      rows: w.rows,
      bytes: w.bytes,
      peakRssMb: peak,
      hyperdPeakRssMb: hyperdPeak,
      verified,
      ...(w.referenceSeconds ? { referenceSeconds: w.referenceSeconds } : {}),
    },
  ];
  for (const [baseline] of w.baselines) {
    const runs = raw.get(baseline.name)!;
    figures.push({
      workload: w.workload,
      method: baseline.name,
      kind: 'raw',
      seconds: summarize(runs),
      runs,
      rows: w.rows,
      bytes: w.bytes,
      note: baseline.how,
    });
  }
  return figures;
}

/**
 * The memory workloads: a CSV and a JSON lines file of `sizes.bigBytes` each, made in `dataDir`,
 * loaded by a watcher, then removed; their figures, peak RSS and what the report should note.
 */
export async function bigFiles(
  ctx: BenchContext,
  dataDir: string,
  mode: Mode,
): Promise<{ figures: Figure[]; memory: MemoryFigure[]; notes: string[] }> {
  const { sizes } = ctx;
  const figures: Figure[] = [];
  const memory: MemoryFigure[] = [];
  const notes: string[] = [];
  const mb = Math.round(sizes.bigBytes / 1024 / 1024);
  const size = mb >= 1024 ? `${(mb / 1024).toFixed(mb % 1024 ? 1 : 0)} GB` : `${mb} MB`;
  if (mode === 'quick' || sizes.bigBytes < SIZES.full.bigBytes)
    notes.push(`memory workloads used ${size} files, not the 2 GB of the full run`);
  for (const [format, ext] of [
    ['csv', '.csv'],
    ['jsonl', '.jsonl'],
  ] as const) {
    const t = now();
    const big = await writeRows(join(dataDir, `big${ext}`), format, { bytes: sizes.bigBytes }, SEED + 1, { distinct: 65536 });
    ctx.log(`generated ${big.path}: ${big.rows} rows, ${(big.bytes / 1e6).toFixed(0)} MB in ${((now() - t) / 1000).toFixed(1)} s`);
    const one = await watchOneFile(ctx, big, `big${ext}`, Math.max(600_000, (big.bytes / 2e6) * 1000));
    await rm(big.path, { force: true });
    const workload = `${format === 'csv' ? 'CSV' : 'JSON lines'} ${size}`;
    figures.push({
      workload,
      method: 'hyperwatch',
      kind: 'hyperwatch',
      seconds: single(one.seconds),
      runs: [one.seconds],
      goneSeconds: single(one.gone),
      rows: big.rows,
      bytes: big.bytes,
      peakRssMb: one.run.done.peakRssMb,
      hyperdPeakRssMb: one.run.hyperdPeakRssMb,
      verified: one.ok,
      rssSeriesMb: thin(one.run.rssSeries),
    });
    memory.push({ name: workload, peakRssMb: one.run.done.peakRssMb });
    ctx.log(
      `${workload}: ${one.seconds.toFixed(1)} s, ${(big.bytes / 1e6 / one.seconds).toFixed(0)} MB/s, peak ` +
        `RSS ${one.run.done.peakRssMb.toFixed(0)} MB (hyperd ${one.run.hyperdPeakRssMb.toFixed(0)} ` +
        `MB)${one.ok ? '' : ' WRONG'}`,
    );
  }
  return { figures, memory, notes };
}
