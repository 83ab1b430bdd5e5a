/**
 * ListView, LargeListView and RunEndEncoded columns (the Arrow spec's, written by arrow-rs and
 * Arrow C++) land on a real hyperd on both paths, as lists (JSON text) and as their values; a view
 * outside its child or run ends that do not rise are refused before a row lands.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expectError } from '../../helpers/plugin-bench.ts';
import { useArrowBench } from '../../helpers/arrow-bench.ts';
import { encodedStream } from '../../helpers/arrow-encoded.ts';
import { Dictionary, Int32, makeVector, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';

describe('arrow ingester: list-view and run-end encoded columns', () => {
  const { bench, rowsOf } = useArrowBench();

  for (const large of [false, true]) {
    for (const csv of [false, true]) {
      it(`${large ? 'LargeListView' : 'ListView'} and RunEndEncoded land (${csv ? 'as CSV' : 'ARROWSTREAM'})`, async () => {
        const table = `encoded_${large}_${csv}`;
        const outcome = await bench.ingest(await bench.claim(`${table}.arrows`, encodedStream({ large })), table, { remote: csv });
        assert.deepEqual(outcome, { rows: 4, attempts: 1 });
        const rows = await rowsOf(bench, table);
        assert.deepEqual(
          rows.map((r) => [r.id, r.lv == null ? null : JSON.parse(r.lv), r.ree]),
          [
            ['1', [10, 11], 'a'],
            ['2', null, 'a'],
            ['3', [], 'b'],
            ['4', [11, 12], null],
          ],
        );
      });
    }
  }

  it('loads a dictionary two fields share (one id, one dictionary batch), on both paths', async () => {
    const type = new Dictionary(new Utf8(), new Int32(), 7);
    const dictionary = vectorFromArray(['x', 'y', 'z'], new Utf8());
    const a = makeVector({ type, data: Int32Array.from([0, 1, 2]), dictionary });
    const b = makeVector({ type, data: Int32Array.from([2, 2, 0]), dictionary });
    for (const [format, csv] of [
      ['file', false],
      ['stream', false],
      ['stream', true],
    ] as const) {
      const table = `shared_${format}_${csv}`;
      const outcome = await bench.ingest(await bench.claim(`${table}.arrow`, tableToIPC(new Table({ a, b }), format)), table, {
        remote: csv,
      });
      assert.deepEqual(outcome, { rows: 3, attempts: 1 });
      assert.deepEqual(
        (await rowsOf(bench, table)).map((r) => [r.a, r.b]),
        [
          ['x', 'z'],
          ['y', 'z'],
          ['z', 'x'],
        ],
      );
    }
  });

  it('refuses a list view outside its child, and run ends that do not rise', async () => {
    const views = encodedStream({ damage: (b) => (b[4] = new Uint8Array(Int32Array.from([2, 0, 0, 3]).buffer)) });
    const error = expectError(await bench.ingest(await bench.claim('bad-view.arrows', views), 'bad_encoded'));
    assert.equal(error.code, 'ARROW_CORRUPT', error.message);
    assert.match(error.message, /bad-view\.arrows: column "lv" has a list view at row 3 \(offset 1, size 3\) outside its 3 child values/);
    const runs = encodedStream({ damage: (b) => (b[8] = new Uint8Array(Int32Array.from([2, 2, 4]).buffer)) });
    const error2 = expectError(await bench.ingest(await bench.claim('bad-runs.arrows', runs), 'bad_encoded'));
    assert.equal(error2.code, 'ARROW_CORRUPT', error2.message);
    assert.match(error2.message, /bad-runs\.arrows: column "ree" has run ends that do not rise at run 1 \(2 → 2\)/);
  });
});
