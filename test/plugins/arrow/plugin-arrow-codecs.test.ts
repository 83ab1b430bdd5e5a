/**
 * The Arrow ingester's body codecs (LZ4 frames, ZSTD frame headers) on hand-made frames: no
 * database.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decompress } from '../../../plugins/arrow/codecs.ts';
import { IpcProblem } from '../../../plugins/arrow/problem.ts';
import { zstdRawFrame } from '../../helpers/arrow-bench.ts';

describe('arrow body codecs (unit)', () => {
  const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
  /** An LZ4 frame: magic, FLG, BD, [content size], header checksum byte, blocks, end mark, [checksums]. */
  function lz4Frame(
    blocks: { data: number[]; raw?: boolean }[],
    flags: { contentSize?: number; blockChecksum?: boolean; contentChecksum?: boolean } = {},
  ): Uint8Array {
    const out: number[] = [0x04, 0x22, 0x4d, 0x18];
    const flg = 0x40 | (flags.blockChecksum ? 0x10 : 0) | (flags.contentSize !== undefined ? 0x08 : 0) | (flags.contentChecksum ? 0x04 : 0);
    out.push(flg, 0x40);
    if (flags.contentSize !== undefined) for (let k = 0; k < 8; k++) out.push(k < 4 ? (flags.contentSize >>> (8 * k)) & 0xff : 0);
    out.push(0xaa); // header checksum (not verified)
    for (const block of blocks) {
      const size = block.data.length | (block.raw ? 0x80000000 : 0);
      out.push(size & 0xff, (size >>> 8) & 0xff, (size >>> 16) & 0xff, (size >>> 24) & 0xff, ...block.data);
      if (flags.blockChecksum) out.push(1, 2, 3, 4);
    }
    out.push(0, 0, 0, 0);
    if (flags.contentChecksum) out.push(5, 6, 7, 8);
    return Uint8Array.from(out);
  }
  const ascii = (s: string): number[] => Array.from(new TextEncoder().encode(s));
  // Block 1 stored as is; block 2 copies 8 bytes from block 1 (linked blocks), then one literal.
  const linked = [{ data: ascii('abcdefgh'), raw: true }, { data: [0x04, 8, 0, 0x10, ...ascii('z')] }];

  it('decodes LZ4 frames: stored and compressed blocks, matches into the previous block, optional sizes and checksums', () => {
    assert.equal(text(decompress('lz4', lz4Frame(linked), 17, 'b')), 'abcdefghabcdefghz');
    assert.equal(
      text(decompress('lz4', lz4Frame(linked, { contentSize: 17, blockChecksum: true, contentChecksum: true }), 17, 'b')),
      'abcdefghabcdefghz',
    );
    // A run: a match overlapping the bytes it writes.
    assert.equal(text(decompress('lz4', lz4Frame([{ data: [0x1f, ...ascii('a'), 1, 0, 5, 0x00] }]), 25, 'b')), 'a'.repeat(25));
  });

  it('refuses LZ4 frames that do not fit what the buffer announced, or are cut or damaged', () => {
    const refusals: [Uint8Array, number, RegExp][] = [
      [lz4Frame(linked), 16, /holds more than the 16 bytes announced/],
      [lz4Frame(linked), 18, /decodes to 17 bytes, not the 18/],
      [lz4Frame(linked).subarray(0, 20), 17, /ends early/],
      [lz4Frame([{ data: [0x04, 9, 0] }]), 8, /match offset \(9\) before the start/],
      [Uint8Array.of(1, 2, 3, 4, 0x40, 0x40, 0), 1, /magic number/],
      [Uint8Array.of(0x04, 0x22, 0x4d, 0x18, 0x80, 0x40, 0), 1, /version 2/],
    ];
    for (const [frame, size, message] of refusals) {
      assert.throws(
        () => decompress('lz4', frame, size, 'buffer 3'),
        (error: unknown) =>
          error instanceof IpcProblem &&
          error.code === 'ARROW_CORRUPT' &&
          /^buffer 3: the LZ4 frame/.test(error.message) &&
          message.test(error.message),
      );
    }
  });

  it('checks a ZSTD frame header before decoding: its content size, or its window', () => {
    // Single segment, 1-byte content size 200: more than the 100 announced.
    const tooBig = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x20, 200, 0, 0, 0);
    assert.throws(() => decompress('zstd', tooBig, 100, 'b'), /holds 200 bytes, more than the 100/);
    // No content size, a window of 2^(10+31) bytes.
    const hugeWindow = Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x00, 31 << 3, 0, 0, 0);
    assert.throws(() => decompress('zstd', hugeWindow, 100, 'b'), /asks for a \d+-byte window for 100 bytes/);
    assert.throws(() => decompress('zstd', Uint8Array.of(1, 2, 3, 4, 5, 6), 10, 'b'), /magic number/);
    assert.equal(decompress('zstd', zstdRawFrame(new TextEncoder().encode('hello')), 5, 'b').length, 5);
  });
});
