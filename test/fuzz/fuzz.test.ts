/**
 * A short fuzz run in the default suite (about 240 mutants of files DuckDB, arrow-rs, apache-arrow
 * and hyperd write, seed fixed): no hang, no crash, nothing left behind, every refusal with a
 * code naming the file in words, no mutant landing that DuckDB or arrow-rs refuses, memory
 * bounded. `npm run fuzz -- --count 5000` runs the long one.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fuzz } from '../../fuzz/run.ts';
import { removeDir, tempDir } from '../helpers/env.ts';

const COUNT = 240;
/** Growth of resident memory during one watcher run (the judges' memory, DuckDB's and arrow-rs's WebAssembly, is theirs). */
const MAX_GROWTH_MIB = 768;

describe('fuzzer (short run)', () => {
  it(`${COUNT} mutants through a real watcher break no invariant`, async () => {
    // Batches of 12: every seed (17) is mutated at least once.
    const out = await tempDir('hyperwatch-fuzz-');
    const report = await fuzz({
      seed: 20261201,
      count: COUNT,
      batch: 12,
      out,
      maxGrowthMiB: MAX_GROWTH_MIB,
      log: (line) => console.log(line),
    });
    console.log(
      `${report.mutants} mutants in ${(report.ms / 1000).toFixed(0)} s: ${report.landed} landed, ` +
        `${report.refused} refused (${JSON.stringify(report.codes)}), max RSS ${report.maxRssMiB} MiB, ` +
        `max growth in a watcher run ${report.maxGrowthMiB} MiB`,
    );
    assert.equal(report.mutants, COUNT);
    assert.deepEqual(
      report.failures.map((f) => `${f.invariant}: ${f.candidate.how}: ${f.detail}`),
      [],
      `the failing mutants are kept in ${out}`,
    );
    // Both outcomes happen: a run where everything is refused (or lands) checks little.
    assert.ok(report.landed > 0 && report.refused > report.landed, JSON.stringify(report));
    assert.ok(report.maxGrowthMiB < MAX_GROWTH_MIB);
    // Reached only when every check held: a failing run keeps its mutants and databases in `out`.
    await removeDir(out);
  });
});
