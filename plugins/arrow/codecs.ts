/**
 * The two codecs of Arrow IPC body compression, each decoding one buffer into exactly the number
 * of bytes its 8-byte prefix announced (more or fewer is a corrupt buffer): LZ4 in the *frame*
 * format (not the raw block format Parquet's LZ4_RAW uses, nor Hadoop's), and ZSTD frames.
 * Output never grows past the announced size, so a small file cannot claim unbounded memory here.
 */
import { corrupt } from './problem.ts';
import type { Codec } from './layout.ts';
import { zstdDecode } from '../shared/zstd-decode.ts';
import { readZstdHeader } from '../shared/zstd-frame.ts';
import { lz4Block } from '../shared/lz4-block.ts';

const LZ4_MAGIC = 0x184d2204;

/**
 * The decoder allocates what a frame's header asks for (its content size, or its window): checked
 * against what the buffer's prefix announced before anything is allocated.
 */
function checkZstdHeader(input: Uint8Array, size: number, what: string): void {
  const header = readZstdHeader(input, size);
  if (typeof header === 'string') throw corrupt(`${what}: ${header}`);
}

/** Decodes `input` (one buffer without its length prefix) into `size` bytes. */
export function decompress(codec: Codec, input: Uint8Array, size: number, what: string): Uint8Array {
  if (codec === 'zstd') {
    checkZstdHeader(input, size, what);
    try {
      return zstdDecode(input, size);
    } catch (error) {
      throw corrupt(`${what}: the ZSTD data cannot be decoded: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return lz4Frames(input, size, what);
}

function lz4Frames(input: Uint8Array, size: number, what: string): Uint8Array {
  const out = new Uint8Array(size);
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const bad = (why: string): Error => corrupt(`${what}: the LZ4 frame ${why}`);
  let i = 0;
  let o = 0;
  const need = (n: number): void => {
    if (i + n > input.length) throw bad('ends early');
  };
  while (i < input.length) {
    need(7);
    if (view.getUint32(i, true) !== LZ4_MAGIC) throw bad('does not start with the LZ4 frame magic number');
    const flags = input[i + 4]!;
    if (flags >> 6 !== 1) throw bad(`has version ${flags >> 6}, not 1`);
    const blockChecksums = (flags & 0x10) !== 0;
    const contentSize = (flags & 0x08) !== 0;
    const contentChecksum = (flags & 0x04) !== 0;
    const dictionary = (flags & 0x01) !== 0;
    if (dictionary) throw bad('needs a preset dictionary');
    i += 6 + (contentSize ? 8 : 0) + 1; // magic, FLG, BD, [content size], header checksum
    need(0);
    const frameStart = o;
    for (;;) {
      need(4);
      const word = view.getUint32(i, true);
      i += 4;
      if (word === 0) break;
      const length = word & 0x7fffffff;
      need(length);
      if (word & 0x80000000) {
        if (o + length > size) throw bad(`holds more than the ${size} bytes announced`);
        out.set(input.subarray(i, i + length), o);
        o += length;
      } else {
        o = lz4Block(input, i, i + length, out, o, frameStart, bad);
      }
      i += length + (blockChecksums ? 4 : 0);
    }
    i += contentChecksum ? 4 : 0;
    if (i > input.length) throw bad('ends early');
  }
  if (o !== size) throw bad(`decodes to ${o} bytes, not the ${size} its prefix announces`);
  return out;
}
