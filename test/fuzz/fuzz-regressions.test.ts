/**
 * Files the fuzzer found (test/fixtures/fuzz: each mutant's bytes, and a `.json` saying what it
 * broke before it was fixed), replayed through a real watcher on a real hyperd: each is refused
 * with the code it is refused with now, naming the file, leaving nothing behind, or lands only
 * what DuckDB and arrow-rs read from it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { replayDir } from '../../fuzz/replay.ts';
import { removeDir, tempDir } from '../helpers/env.ts';
import { ROOT } from '../helpers/proc.ts';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'fuzz');

describe('fuzzer regressions', () => {
  it('every mutant the fuzzer found is refused with its code, or lands what an independent reader reads', async () => {
    const out = await tempDir('hyperwatch-fuzz-replay-');
    const results = await replayDir(FIXTURES, out);
    assert.ok(results.length >= 10, `${results.length} fixtures`);
    for (const r of results) {
      const outcome =
        r.outcome?.code !== undefined ? `refused ${r.outcome.code}` : r.outcome ? `landed ${r.outcome.landed} rows` : 'no outcome';
      console.log(`${r.name} | was: ${r.note.invariant} (${r.note.detail.slice(0, 120)}) | now: ${outcome}`);
      assert.deepEqual(
        r.failures.map((f) => `${f.invariant}: ${f.detail}`),
        [],
        r.name,
      );
      if (r.note.refusedAs !== undefined) assert.equal(r.outcome?.code, r.note.refusedAs, `${r.name}: ${JSON.stringify(r.outcome)}`);
    }
    // Reached only when every fixture held: a failing run keeps its inboxes and databases in `out`.
    await removeDir(out);
  });
});
