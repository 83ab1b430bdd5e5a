/**
 * `npm run fuzz [-- --count N] [--seed S] [--out DIR] [--batch N] [--per-file-ms MS] [--max-growth-mib M] [--only NAME]...`:
 * mutates the seed files (see seeds.ts; `--only`: those whose name contains NAME) and drops every
 * mutant through a real watcher on a real hyperd,
 * checking the invariants of check.ts. Prints a summary; failures are written to DIR/failures
 * (each a file that reproduces it, with a `.json` saying what broke). Exits 1 on any failure.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { judgeCrashes } from './check.ts';
import { fuzz } from './run.ts';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '300' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string' },
    batch: { type: 'string', default: '24' },
    'per-file-ms': { type: 'string', default: '60000' },
    'max-growth-mib': { type: 'string', default: '768' },
    // Only the seeds whose name contains this (repeatable): e.g. --only zstd.
    only: { type: 'string', multiple: true },
  },
});
const out = values.out ?? (await mkdtemp(join(tmpdir(), 'hyperwatch-fuzz-')));
const log = (line: string) => console.log(`[fuzz ${new Date().toISOString().slice(11, 19)}] ${line}`);
log(`seed ${values.seed}, ${values.count} mutants, output in ${out}`);
const report = await fuzz({
  seed: Number(values.seed),
  count: Number(values.count),
  out,
  batch: Number(values.batch),
  perFileMs: Number(values['per-file-ms']),
  maxGrowthMiB: Number(values['max-growth-mib']),
  only: values.only ?? [],
  log,
});
log(
  `done in ${(report.ms / 1000).toFixed(0)} s: ${report.mutants} mutants, ${report.landed} landed, ${report.refused} refused, ` +
    `max RSS ${report.maxRssMiB} MiB (judges included), max growth during a watcher run ${report.maxGrowthMiB} MiB`,
);
log(`independent readers that crashed on a landed mutant (no verdict): ${judgeCrashes}`);
log(
  `refusals by code: ${Object.entries(report.codes)
    .sort((a, b) => b[1] - a[1])
    .map(([c, n]) => `${c} ${n}`)
    .join(', ')}`,
);
log(
  report.failures.length === 0
    ? 'no failures: 0 hangs, 0 crashes, 0 leftovers, 0 bare errors, 0 mutants landed that a reader refuses'
    : `${report.failures.length} FAILURES: ${JSON.stringify(report.broken)} (files in ${join(out, 'failures')})`,
);
process.exit(report.failures.length === 0 ? 0 : 1);
