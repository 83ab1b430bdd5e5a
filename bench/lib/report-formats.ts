/**
 * The format set's table: per case hyperwatch's time, hyperd's fastest own load of the very same
 * file, their ratio, and whether the case meets the ≥ 0.95× target (a case that misses says so).
 */
import { TARGETS } from './config.ts';
import { FORMAT_LABEL, type FormatCase, PHASES } from './format-set.ts';
import { summarize } from './measure.ts';

const fmt = (v: number, digits = 3) => (Number.isFinite(v) ? v.toFixed(digits) : '—');
const span = (s: { median: number; min: number; max: number }) => `${fmt(s.median)} (${fmt(s.min)}–${fmt(s.max)})`;

export const FORMAT_HEADER = [
  'format',
  'file written by',
  'hyperwatch via',
  'table',
  'hyperwatch s median (min–max)',
  "hyperd's fastest own load",
  's median (min–max)',
  'hyperwatch / hyperd',
  'fastest runs',
  `≥ ${TARGETS.formatVsHyperd}×`,
  'check',
];

export const meetsTarget = (c: FormatCase) => c.ratio >= TARGETS.formatVsHyperd && c.verified;

export function formatRows(cases: readonly FormatCase[]): string[][] {
  return cases.map((c) => {
    const fastest = c.hyperd.find((h) => h.name === c.fastest)!;
    return [
      `${FORMAT_LABEL[c.format]} (${c.set === 'own' ? "bench's own" : 'other writer'})`,
      c.writer,
      c.mode === 'embedded'
        ? 'embedded hyperd'
        : `endpoint${c.readsFiles === null ? '' : /cannot read/.test(c.readsFiles) ? ', streamed' : ', reads files'}`,
      c.table,
      span(c.hyperwatch.seconds),
      `${fastest.how}${c.hyperd.length > 1 ? ` (fastest of ${c.hyperd.length})` : ''}`,
      span(fastest.seconds),
      `${fmt(c.ratio, 2)}×`,
      `${fmt(c.ratioOfMins, 2)}×`,
      c.verified ? (meetsTarget(c) ? 'PASS' : 'MISS') : 'MISS (wrong rows)',
      c.verified ? 'ok' : 'WRONG',
    ];
  });
}

/** One line for the list of targets: how many cases meet ≥ 0.95×. */
export function formatTargetSummary(cases: readonly FormatCase[]): {
  name: string;
  required: string;
  measured: string;
  ratio: number;
  pass: boolean;
  note?: string;
} {
  const met = cases.filter(meetsTarget).length;
  const worst = cases.reduce((a, b) => (b.ratio < a.ratio ? b : a));
  return {
    name: 'format set: hyperwatch vs hyperd loading the same file',
    required: `≥ ${TARGETS.formatVsHyperd} × in every case`,
    measured: `${met} of ${cases.length} cases`,
    ratio: worst.ratio / TARGETS.formatVsHyperd,
    pass: met === cases.length,
    note: `lowest: ${worst.file}, ${worst.mode}, ${worst.table} table, ${fmt(worst.ratio, 2)}×`,
  };
}

export const PHASE_HEADER = [
  'file',
  'hyperwatch via',
  'table',
  ...PHASES.map((p) => `${p} ms`),
  'hyperwatch ms',
  "hyperd's own ms",
  'difference ms',
];

/** Per case, the medians of where hyperwatch's time went (ms), beside hyperd's own load. */
export function phaseRows(cases: readonly FormatCase[]): string[][] {
  return cases.map((c) => {
    const own = Math.min(...c.hyperd.map((h) => h.seconds.median)) * 1000;
    const hw = c.hyperwatch.seconds.median * 1000;
    return [
      c.file,
      c.mode,
      c.table,
      ...PHASES.map((p) => (c.phases?.[p] ? fmt(summarize(c.phases[p]).median, 1) : '—')),
      fmt(hw, 0),
      fmt(own, 0),
      fmt(hw - own, 0),
    ];
  });
}
