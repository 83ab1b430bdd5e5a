/**
 * Turns the measurements into the printed table, the list of targets with PASS/MISS, a Markdown
 * version for BENCHMARKS.md, and an SVG bar chart of throughput by workload (plain SVG text).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Mode, REFERENCE, type Sizes, TARGETS } from './config.ts';
import type { FormatCase } from './format-set.ts';
import type { Summary } from './measure.ts';
import { throughputSvg } from './report-svg.ts';

export { throughputSvg };
import { FORMAT_HEADER, formatRows, formatTargetSummary, PHASE_HEADER, phaseRows } from './report-formats.ts';

export type Method = 'hyperwatch' | 'raw' | 'reference';

export interface Figure {
  readonly workload: string;
  readonly method: string;
  readonly kind: Method;
  /** Seconds from the drop (or the statement) to rows committed; per run and summarized. */
  readonly seconds: Summary;
  readonly runs: readonly number[];
  /** hyperwatch only: seconds until the files were also gone (after the durability checkpoint). */
  readonly goneSeconds?: Summary;
  readonly rows?: number;
  readonly bytes?: number;
  readonly files?: number;
  readonly peakRssMb?: number;
  readonly hyperdPeakRssMb?: number;
  /** Reference seconds for the same workload, for the "vs reference" column. */
  readonly referenceSeconds?: number;
  /** The watcher process's RSS over the run (MB, at most 120 evenly spaced samples). */
  readonly rssSeriesMb?: readonly number[];
  /** Every file landed exactly once, the bad one (if any) alone in failed/. */
  readonly verified?: boolean;
  readonly note?: string;
}

export interface Latency {
  readonly workload: string;
  readonly files: number;
  readonly intervalMs: number;
  readonly p50: Summary;
  readonly p95: Summary;
  readonly max: Summary;
  readonly verified: boolean;
  /** Every drop's latency in ms, per run, in drop order. */
  readonly samples: readonly (readonly number[])[];
}

export interface Target {
  readonly name: string;
  readonly required: string;
  readonly measured: string;
  /** How many times the requirement is met: ≥ 1 passes (for "at most" targets, required ÷ measured). */
  readonly ratio: number;
  readonly pass: boolean;
  readonly note?: string;
}

const rate = (f: Figure, of: number | undefined) => (of === undefined ? undefined : of / f.seconds.median);
const fmt = (v: number | undefined, digits = 2) => (v === undefined || !Number.isFinite(v) ? '—' : v.toFixed(digits));
const big = (v: number | undefined) =>
  v === undefined || !Number.isFinite(v)
    ? '—'
    : v >= 1e6
      ? `${(v / 1e6).toFixed(2)} M`
      : v >= 1e3
        ? `${(v / 1e3).toFixed(1)} k`
        : v.toFixed(0);

export function figureRows(figures: readonly Figure[]): string[][] {
  return figures.map((f) => [
    f.workload,
    f.method,
    `${fmt(f.seconds.median, 3)} (${fmt(f.seconds.min, 3)}–${fmt(f.seconds.max, 3)})`,
    f.goneSeconds ? fmt(f.goneSeconds.median, 3) : '—',
    big(rate(f, f.rows)),
    f.bytes === undefined ? '—' : fmt(f.bytes / 1024 / 1024 / f.seconds.median, 0),
    f.files === undefined ? '—' : fmt(f.files / f.seconds.median, 0),
    f.peakRssMb === undefined ? '—' : fmt(f.peakRssMb, 0),
    f.hyperdPeakRssMb === undefined ? '—' : fmt(f.hyperdPeakRssMb, 0),
    f.referenceSeconds === undefined ? '—' : `${fmt(f.referenceSeconds / f.seconds.median)}×`,
    f.verified === undefined ? '' : f.verified ? 'ok' : 'WRONG',
  ]);
}

export const FIGURE_HEADER = [
  'workload',
  'method',
  's median (min–max)',
  's to files gone',
  'rows/s',
  'MB/s',
  'files/s',
  'RSS MB',
  'hyperd RSS MB',
  'vs reference',
  'check',
];

export function latencyRows(latencies: readonly Latency[]): string[][] {
  const r = REFERENCE.trickleMs.persistent;
  return latencies.map((l) => [
    l.workload,
    `${l.files} files, one every ${l.intervalMs} ms`,
    `${fmt(l.p50.median)} (${fmt(l.p50.min)}–${fmt(l.p50.max)})`,
    `${fmt(l.p95.median)} (${fmt(l.p95.min)}–${fmt(l.p95.max)})`,
    fmt(l.max.median),
    `${r.p50} / ${r.p95}`,
    l.verified ? 'ok' : 'WRONG',
  ]);
}

export const LATENCY_HEADER = [
  'workload',
  'drops',
  'p50 ms median (min–max)',
  'p95 ms median (min–max)',
  'max ms',
  'reference p50 / p95 (persistent)',
  'check',
];

export function targetRows(targets: readonly Target[]): string[][] {
  return targets.map((t) => [t.name, t.required, t.measured, `${fmt(t.ratio)}×`, t.pass ? 'PASS' : 'MISS', t.note ?? '']);
}

export const TARGET_HEADER = ['target', 'required', 'measured', 'of requirement', 'result', 'note'];

/** A plain-text table with aligned columns, for the terminal. */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (c ?? '').padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const esc = (c: string) => c.replaceAll('|', '\\|');
  return [
    `| ${header.map(esc).join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

export interface MemoryFigure {
  readonly name: string;
  readonly peakRssMb: number;
  readonly note?: string;
}

export interface BacklogFigure {
  readonly small: number;
  readonly large: number;
  readonly smallPeakMb: number;
  readonly largePeakMb: number;
}

/** Builds the list of targets from the figures of one run. */
export function evaluateTargets(input: {
  figures: readonly Figure[];
  latency?: Latency;
  memory: readonly MemoryFigure[];
  backlog?: BacklogFigure;
  formatCases?: readonly FormatCase[];
}): Target[] {
  const targets: Target[] = [];
  const find = (workload: string, method: string) => input.figures.find((f) => f.workload === workload && f.method === method);
  const hwCsv = find('CSV 1 file', 'hyperwatch');
  for (const raw of ['hyperd COPY FROM path', 'psql \\copy']) {
    const base = find('CSV 1 file', raw);
    if (!hwCsv || !base) continue;
    const ratio = base.seconds.median / hwCsv.seconds.median;
    // On a busy machine the medians move a lot; the fastest runs of each are the least disturbed.
    const fastest = base.seconds.min / hwCsv.seconds.min;
    targets.push({
      name: `bulk CSV vs ${raw}`,
      required: `≥ ${TARGETS.bulkCsvVsHyperd} × its rows/s`,
      measured: `${fmt(ratio)} × (${fmt(hwCsv.seconds.median, 3)} s vs ${fmt(base.seconds.median, 3)} s)`,
      ratio: ratio / TARGETS.bulkCsvVsHyperd,
      pass: ratio >= TARGETS.bulkCsvVsHyperd && hwCsv.verified === true,
      ...(hwCsv.seconds.n > 1
        ? { note: `fastest runs: ${fmt(fastest)} × (${fmt(hwCsv.seconds.min, 3)} s vs ${fmt(base.seconds.min, 3)} s)` }
        : {}),
    });
  }
  const hwSource = find('CSV 1 file, source column', 'hyperwatch');
  const rawSource = find('CSV 1 file, source column', 'hyperd COPY FROM path');
  if (hwSource && rawSource) {
    const ratio = rawSource.seconds.median / hwSource.seconds.median;
    targets.push({
      name: 'bulk CSV with a source column vs hyperd COPY FROM path',
      required: `≥ ${TARGETS.bulkCsvVsHyperd} × its rows/s`,
      measured: `${fmt(ratio)} × (${fmt(hwSource.seconds.median, 3)} s vs ${fmt(rawSource.seconds.median, 3)} s)`,
      ratio: ratio / TARGETS.bulkCsvVsHyperd,
      pass: ratio >= TARGETS.bulkCsvVsHyperd && hwSource.verified === true,
      ...(hwSource.seconds.n > 1
        ? {
            note:
              `fastest runs: ${fmt(rawSource.seconds.min / hwSource.seconds.min)} × (${fmt(hwSource.seconds.min, 3)} s ` +
              `vs ${fmt(rawSource.seconds.min, 3)} s)`,
          }
        : {}),
    });
  }
  const flood = input.figures.find((f) => f.workload.startsWith('small-file flood') && f.kind === 'hyperwatch');
  if (flood?.files !== undefined) {
    const perSecond = flood.files / flood.seconds.median;
    targets.push({
      name: 'small-file flood',
      required: `≥ ${TARGETS.floodFilesPerSecond} files/s, bad file alone in failed/`,
      measured: `${fmt(perSecond, 0)} files/s${flood.verified ? '' : ', outcome WRONG'}`,
      ratio: perSecond / TARGETS.floodFilesPerSecond,
      pass: perSecond >= TARGETS.floodFilesPerSecond && flood.verified === true,
    });
  }
  if (input.latency) {
    const { p50, p95, verified } = input.latency;
    targets.push({
      name: 'trickle latency p50',
      required: `≤ ${TARGETS.trickleP50Ms} ms`,
      measured: `${fmt(p50.median)} ms`,
      ratio: TARGETS.trickleP50Ms / p50.median,
      pass: p50.median <= TARGETS.trickleP50Ms && verified,
    });
    targets.push({
      name: 'trickle latency p95',
      required: `≤ ${TARGETS.trickleP95Ms} ms`,
      measured: `${fmt(p95.median)} ms`,
      ratio: TARGETS.trickleP95Ms / p95.median,
      pass: p95.median <= TARGETS.trickleP95Ms && verified,
    });
  }
  for (const [workload, required, refSeconds] of [
    ['Parquet 1 file', TARGETS.parquetVsReference, REFERENCE.parquetSeconds],
    ['Arrow IPC 1 file', TARGETS.arrowVsReference, REFERENCE.arrowSeconds],
  ] as const) {
    const hw = find(workload, 'hyperwatch');
    if (!hw?.rows) continue;
    const ratio = hw.rows / hw.seconds.median / (REFERENCE.rows / refSeconds);
    targets.push({
      name: `${workload} vs reference (figures from another day)`,
      required: `≥ ${required} × ${big(REFERENCE.rows / refSeconds)} rows/s`,
      measured: `${fmt(ratio)} × (${big(hw.rows / hw.seconds.median)} rows/s)`,
      ratio: ratio / required,
      pass: ratio >= required && hw.verified === true,
    });
  }
  for (const m of input.memory) {
    targets.push({
      name: `peak RSS, ${m.name}`,
      required: `< ${TARGETS.peakRssMb} MB`,
      measured: `${fmt(m.peakRssMb, 0)} MB`,
      ratio: TARGETS.peakRssMb / m.peakRssMb,
      pass: m.peakRssMb < TARGETS.peakRssMb,
      ...(m.note ? { note: m.note } : {}),
    });
  }
  if (input.backlog) {
    const b = input.backlog;
    const growth = b.largePeakMb / b.smallPeakMb;
    targets.push({
      name: 'backlog memory',
      required: `peak(${b.large}) ≤ ${TARGETS.backlogGrowth} × peak(${b.small})`,
      measured: `${fmt(b.largePeakMb, 0)} MB vs ${fmt(b.smallPeakMb, 0)} MB (${fmt(growth)}×)`,
      ratio: TARGETS.backlogGrowth / growth,
      pass: growth <= TARGETS.backlogGrowth,
      // A process that has swept only a few hundred files has not grown its heap to its working
      // size yet: there the comparison says more about start-up than about the backlog.
      ...(b.small < 10_000 ? { note: 'small backlogs (quick run): start-up heap growth weighs in; judge on a full run' } : {}),
    });
  }
  if (input.formatCases?.length) targets.push(formatTargetSummary(input.formatCases));
  return targets;
}

/** Everything one run measured, as written to `<mode>.json`. */
export interface BenchResult {
  readonly title: string;
  readonly mode: Mode;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly machine: Readonly<Record<string, unknown>>;
  readonly sizes: Sizes;
  readonly watchOptions: Readonly<Record<string, unknown>> | null;
  readonly seed: number;
  readonly reference: typeof REFERENCE;
  readonly datasets: Readonly<Record<string, { rows: number; bytes: number }>>;
  readonly figures: readonly Figure[];
  readonly latency: Latency | null;
  readonly targets: readonly Target[];
  /** What the memory targets were computed from (with `figures` and `latency`, all of them). */
  readonly memory: readonly MemoryFigure[];
  readonly backlog: BacklogFigure | null;
  readonly notes: readonly string[];
  /** The format set (absent in runs saved before it existed). */
  readonly formatCases?: readonly FormatCase[];
}

/** The report for the terminal. */
export function renderText(r: BenchResult): string {
  return [
    '',
    r.title,
    `Reference: ${REFERENCE.label} (figures from another day, on other files; not re-measured).`,
    '',
    textTable(FIGURE_HEADER, figureRows(r.figures)),
    ...(r.formatCases?.length
      ? ['', textTable(FORMAT_HEADER, formatRows(r.formatCases)), '', textTable(PHASE_HEADER, phaseRows(r.formatCases))]
      : []),
    ...(r.latency ? ['', textTable(LATENCY_HEADER, latencyRows([r.latency]))] : []),
    '',
    textTable(TARGET_HEADER, targetRows(r.targets)),
    ...r.notes.map((n) => `note: ${n}`),
  ].join('\n');
}

/** Writes `<mode>.json`, `<mode>.md` (the tables, for BENCHMARKS.md) and `<mode>.svg` into `dir`. */
export function writeReport(r: BenchResult, dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${r.mode}.json`), `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(join(dir, `${r.mode}.svg`), throughputSvg(r.figures, r.title));
  const md = [
    `### ${r.title}`,
    '',
    markdownTable(FIGURE_HEADER, figureRows(r.figures)),
    '',
    ...(r.formatCases?.length
      ? [markdownTable(FORMAT_HEADER, formatRows(r.formatCases)), '', markdownTable(PHASE_HEADER, phaseRows(r.formatCases)), '']
      : []),
    ...(r.latency ? [markdownTable(LATENCY_HEADER, latencyRows([r.latency])), ''] : []),
    markdownTable(TARGET_HEADER, targetRows(r.targets)),
    '',
    ...r.notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
  writeFileSync(join(dir, `${r.mode}.md`), md);
}
