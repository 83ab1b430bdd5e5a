/**
 * The benchmark's own logic (pure, fast): seeded data is the same every time, the bad flood file
 * is bad in exactly one place, and a target is only reported met when the figure meets it and
 * its outcome was right. The measuring itself runs with `npm run bench`, not here.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { badCsv, CSV_HEADER, smallCsv, writeRows } from '../../bench/lib/data.ts';
import { percentile, summarize } from '../../bench/lib/measure.ts';
import type { FormatCase } from '../../bench/lib/format-set.ts';
import { evaluateTargets, type Figure, throughputSvg } from '../../bench/lib/report.ts';
import { formatRows, phaseRows } from '../../bench/lib/report-formats.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await removeDir(d);
});

describe('bench data', () => {
  it('writes the same bytes for the same seed, and stops at the byte limit', async () => {
    const dir = await tempDir('hyperwatch-bench-test-');
    dirs.push(dir);
    const a = await writeRows(join(dir, 'a.csv'), 'csv', { rows: 5000 }, 7);
    const b = await writeRows(join(dir, 'b.csv'), 'csv', { rows: 5000 }, 7);
    const c = await writeRows(join(dir, 'c.csv'), 'csv', { rows: 5000 }, 8);
    assert.equal(a.rows, 5000);
    const [ta, tb, tc] = await Promise.all([a, b, c].map((w) => readFile(w.path, 'utf8')));
    assert.equal(ta, tb);
    assert.notEqual(ta, tc);
    assert.ok(ta!.startsWith(CSV_HEADER));
    assert.equal(ta!.split('\n').length, 5000 + 2); // header, rows, final newline
    const j = await writeRows(join(dir, 'j.jsonl'), 'jsonl', { bytes: 100_000 }, 7, { distinct: 32 });
    const text = await readFile(j.path, 'utf8');
    assert.equal(Buffer.byteLength(text), j.bytes);
    assert.ok(j.bytes <= 100_000 + 200, `${j.bytes} bytes`);
    const ids = text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: number }).id);
    assert.deepEqual(
      ids,
      Array.from({ length: j.rows }, (_, i) => i + 1),
    );
  });

  it('makes the bad flood file bad in one field of one row only', () => {
    const good = smallCsv(100, 5, 1).split('\n');
    const bad = badCsv(100, 5, 50).split('\n');
    const differing = good.flatMap((line, i) => (line === bad[i] ? [] : [i]));
    assert.deepEqual(differing, [50]);
    assert.equal(bad[50]!.split(',')[4], 'not-a-number');
  });
});

describe('bench figures', () => {
  it('summarizes and takes nearest-rank percentiles', () => {
    assert.deepEqual(summarize([3, 1, 2, Number.NaN]), { min: 1, median: 2, max: 3, n: 3 });
    assert.equal(summarize([4, 1, 2, 3]).median, 2.5);
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(values, 50), 50);
    assert.equal(percentile(values, 95), 95);
  });

  const fig = (workload: string, method: string, s: number, extra: Partial<Figure> = {}): Figure => ({
    workload,
    method,
    kind: method === 'hyperwatch' ? 'hyperwatch' : 'raw',
    seconds: { min: s, median: s, max: s, n: 1 },
    runs: [s],
    rows: 1_000_000,
    ...extra,
  });

  it('passes a target only when the figure meets it and the outcome was right', () => {
    const targets = evaluateTargets({
      figures: [
        fig('CSV 1 file', 'hyperwatch', 1.0, { verified: true }),
        fig('CSV 1 file', 'hyperd COPY FROM path', 0.95),
        fig('CSV 1 file', 'psql \\copy', 0.8),
        fig('small-file flood, 1000', 'hyperwatch', 0.25, { files: 1001, verified: false }),
      ],
      latency: {
        workload: 'trickle',
        files: 3,
        intervalMs: 200,
        p50: summarize([7]),
        p95: summarize([16]),
        max: summarize([20]),
        verified: true,
        samples: [],
      },
      memory: [{ name: 'CSV 2 GB', peakRssMb: 199 }],
      backlog: { small: 10, large: 100, smallPeakMb: 100, largePeakMb: 120 },
    });
    const result = Object.fromEntries(targets.map((t) => [t.name, t.pass]));
    assert.deepEqual(result, {
      'bulk CSV vs hyperd COPY FROM path': true, // 0.95 × its rows/s
      'bulk CSV vs psql \\copy': false, // 0.8 ×
      'small-file flood': false, // 4,004 files/s, but the bad file did not land alone
      'trickle latency p50': true,
      'trickle latency p95': false,
      'peak RSS, CSV 2 GB': true,
      'backlog memory': false, // 1.2 × with a 10 × larger backlog
    });
  });

  it('draws one bar per figure and escapes labels', () => {
    const svg = throughputSvg(
      [fig('CSV <1>', 'hyperwatch', 1), fig('CSV <1>', 'raw', 0.5), fig('small-file flood, x', 'hyperwatch', 1, { files: 10 })],
      'title & more',
    );
    assert.equal(svg.match(/<rect x="420"/g)?.length, 3);
    assert.ok(svg.includes('CSV &lt;1&gt;') && svg.includes('title &amp; more'));
    assert.ok(!svg.includes('CSV <1>'));
  });

  const formatCase = (file: string, hw: number, own: readonly number[], verified = true): FormatCase => {
    const timed = (name: string, s: number) => ({ name, how: `${name} how`, runs: [s], seconds: summarize([s]) });
    const hyperd = own.map((s, i) => timed(`own ${i}`, s));
    const fastest = hyperd.reduce((a, b) => (b.seconds.median < a.seconds.median ? b : a));
    return {
      file,
      set: 'other',
      format: 'parquet',
      writer: 'w',
      rows: 1_000_000,
      bytes: 1,
      mode: 'endpoint',
      table: 'fresh',
      hyperwatch: timed('hyperwatch', hw),
      hyperd,
      fastest: fastest.name,
      ratio: fastest.seconds.median / hw,
      ratioOfMins: fastest.seconds.min / hw,
      verified,
      readsFiles: null,
      phases: { 'to claim': [1], claim: [1], checks: [Number.NaN], 'load + commit': [hw * 1000 - 2] },
    };
  };

  it('says per format case whether it meets 0.95 × hyperd, against the fastest of its own loads', () => {
    const cases = [formatCase('met', 1.0, [0.96, 1.2]), formatCase('missed', 1.0, [0.94]), formatCase('wrong rows', 1.0, [1.5], false)];
    const rows = formatRows(cases);
    assert.deepEqual(
      rows.map((r) => [r.at(-4), r.at(-2)]),
      [
        ['0.96×', 'PASS'],
        ['0.94×', 'MISS'],
        ['1.50×', 'MISS (wrong rows)'],
      ],
    );
    assert.match(rows[0]![5]!, /own 0 how \(fastest of 2\)/);
    const summary = evaluateTargets({ figures: [], memory: [], formatCases: cases }).find((t) => t.name.startsWith('format set'));
    assert.equal(summary?.measured, '1 of 3 cases');
    assert.equal(summary?.pass, false);
    assert.deepEqual(phaseRows([cases[0]!])[0]!.slice(3), ['1.0', '1.0', '—', '998.0', '1000', '960', '40']);
  });
});
