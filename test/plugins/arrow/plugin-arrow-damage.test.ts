/**
 * Damaged Arrow files on a real hyperd, on both paths: zero bytes, garbage, files and streams cut
 * anywhere (a data error naming the file, nothing landed), and a stream that merely lacks its
 * end-of-stream marker (loaded).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Table, tableToIPC } from 'apache-arrow';
import { Message } from 'apache-arrow/ipc/metadata/message';
import { expectError } from '../../helpers/plugin-bench.ts';
import { basic, expectedBasic, useArrowBench } from '../../helpers/arrow-bench.ts';

describe('arrow ingester', () => {
  const { bench, tableColumns, rowsOf } = useArrowBench();

  it('reports a zero-byte file, garbage, and truncated files and streams as data errors', async () => {
    const cases: [string, Uint8Array, string][] = [];
    const fileBytes = tableToIPC(basic(), 'file');
    const streamBytes = tableToIPC(basic(), 'stream');
    cases.push(['empty.arrow', new Uint8Array(0), 'EMPTY_FILE']);
    cases.push(['garbage.arrow', new TextEncoder().encode('id,name\n1,not arrow at all\n'), 'ARROW_NOT_IPC']);
    cases.push(['zeros.arrow', new Uint8Array(64), 'ARROW_NOT_IPC']);
    cases.push(['cut-file.arrow', fileBytes.subarray(0, fileBytes.length - 100), 'ARROW_TRUNCATED']);
    cases.push(['cut-magic.arrow', fileBytes.subarray(0, 12), 'ARROW_TRUNCATED']);
    cases.push(['cut-stream.arrow', streamBytes.subarray(0, streamBytes.length - 40), 'ARROW_TRUNCATED']);
    // Cut after the end-of-stream marker's continuation token: inside a message's length prefix.
    cases.push(['cut-eos.arrow', streamBytes.subarray(0, streamBytes.length - 4), 'ARROW_TRUNCATED']);
    cases.push(['cut-schema.arrow', streamBytes.subarray(0, 20), 'ARROW_TRUNCATED']);
    // A stream whose end is intact but whose middle was overwritten.
    const scrambled = streamBytes.slice();
    scrambled.fill(0x5a, 300, 340);
    cases.push(['scrambled.arrow', scrambled, 'ARROW_']);
    for (const csv of [false, true]) {
      for (const [name, bytes, code] of cases) {
        const outcome = await bench.ingest(await bench.claim(`${csv ? 'csv-' : ''}${name}`, bytes), 'bad', { remote: csv });
        const error = expectError(outcome);
        assert.equal(error.kind, 'data', `${name}: ${JSON.stringify(error)}`);
        assert.ok(error.code.startsWith(code), `${name}: ${error.code} ${error.message}`);
        assert.match(error.message, new RegExp(name.replace('.', '\\.')));
        assert.ok(error.hint.length > 0);
        assert.equal(error.file, `${csv ? 'csv-' : ''}${name}`);
      }
    }
    assert.equal(await tableColumns(bench, 'bad'), null);
  });

  it('loads a stream that ends without its end-of-stream marker, and refuses one cut inside a message', async () => {
    const whole = basic().batches[0]!;
    const bytes = tableToIPC(new Table([whole.slice(0, 1), whole.slice(1, 3)]), 'stream');
    const closed = bytes.subarray(0, bytes.length - 8);
    for (const csv of [false, true]) {
      const outcome = await bench.ingest(await bench.claim(`closed-${csv}.arrow`, closed), `closed_${csv}`, { remote: csv });
      assert.deepEqual(outcome, { rows: 3, attempts: 1 });
      assert.deepEqual(await rowsOf(bench, `closed_${csv}`), expectedBasic);
    }
    // Every cut that is not at a message boundary is refused as truncated, and lands nothing (a
    // file of fewer than 8 bytes is not recognisable as a stream at all).
    const boundaries = messageEnds(bytes);
    for (let cut = 8; cut < bytes.length - 8; cut += 7) {
      if (boundaries.has(cut)) continue;
      const error = expectError(await bench.ingest(await bench.claim(`cut-${cut}.arrow`, bytes.subarray(0, cut)), 'cuts'));
      assert.equal(error.code, 'ARROW_TRUNCATED', `cut at ${cut}: ${error.message}`);
    }
    assert.equal(await tableColumns(bench, 'cuts'), null);
  });
});

/** The byte offsets where an IPC stream's messages end (a cut there is a complete, shorter stream). */
function messageEnds(bytes: Uint8Array): Set<number> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ends = new Set<number>();
  let at = 0;
  while (at + 8 <= bytes.length) {
    const length = view.getInt32(at + 4, true);
    if (length === 0) break;
    // The message's body length: the flatbuffer Message table's bodyLength, read through apache-arrow.
    const metadata = bytes.subarray(at + 8, at + 8 + length);
    const body = Number(Message.decode(metadata).bodyLength);
    at += 8 + length + body;
    ends.add(at);
  }
  return ends;
}
