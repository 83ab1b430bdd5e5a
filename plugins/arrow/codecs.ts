/**
 * The two codecs of Arrow IPC body compression, each decoding one buffer into exactly the number
 * of bytes its 8-byte prefix announced (more or fewer is a corrupt buffer): LZ4 in the *frame*
 * format (not the raw block format Parquet's LZ4_RAW uses, nor Hadoop's), and ZSTD frames.
 * Output never grows past the announced size, so a small file cannot claim unbounded memory here.
 */
import { decompressZstd } from 'hyparquet-compressors';
import { corrupt } from './problem.ts';
import type { Codec } from './layout.ts';

const LZ4_MAGIC = 0x184d2204;
const ZSTD_MAGIC = 0xfd2fb528;
/** A ZSTD frame may ask for a window this large (or as large as its content) and no larger. */
const MAX_ZSTD_WINDOW = 64 << 20;

/**
 * The decoder allocates what a frame's header asks for (its content size, or its window): checked
 * against what the buffer's prefix announced before anything is allocated.
 */
function checkZstdHeader(input: Uint8Array, size: number, what: string): void {
  if (input.length < 6) throw corrupt(`${what}: the ZSTD data is ${input.length} bytes, too short for a frame`);
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  if (view.getUint32(0, true) !== ZSTD_MAGIC) throw corrupt(`${what}: the ZSTD data does not start with the ZSTD frame magic number`);
  const flags = input[4]!;
  const singleSegment = (flags >> 5) & 1;
  const sizeField = flags >> 6;
  const dictionaryBytes = [0, 1, 2, 4][flags & 3]!;
  let at = 5;
  let window = 0;
  if (!singleSegment) {
    const descriptor = input[at++]!;
    const base = 2 ** (10 + (descriptor >> 3));
    window = base + (base / 8) * (descriptor & 7);
  }
  at += dictionaryBytes;
  const sizeBytes = sizeField === 0 ? singleSegment : 1 << sizeField;
  if (at + sizeBytes > input.length) throw corrupt(`${what}: the ZSTD frame header ends early`);
  if (sizeBytes > 0) {
    let content = 0;
    for (let k = sizeBytes - 1; k >= 0; k--) content = content * 256 + input[at + k]!;
    if (sizeBytes === 2) content += 256;
    // One frame per buffer is what writers make; its content is the whole buffer.
    if (content > size) throw corrupt(`${what}: the ZSTD frame holds ${content} bytes, more than the ${size} its prefix announces`);
  } else if (window > Math.max(size, MAX_ZSTD_WINDOW)) {
    throw corrupt(`${what}: the ZSTD frame asks for a ${window}-byte window for ${size} bytes of data`);
  }
}

/** Decodes `input` (one buffer without its length prefix) into `size` bytes. */
export function decompress(codec: Codec, input: Uint8Array, size: number, what: string): Uint8Array {
  if (codec === 'zstd') {
    checkZstdHeader(input, size, what);
    let out: Uint8Array;
    try {
      out = decompressZstd(input);
    } catch (error) {
      throw corrupt(`${what}: the ZSTD data cannot be decoded (${error instanceof Error ? error.message : String(error)})`);
    }
    if (out.length !== size) throw corrupt(`${what}: the ZSTD data decodes to ${out.length} bytes, not the ${size} its prefix announces`);
    return out;
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

/** One LZ4 block from `input[start, end)` into `out` at `o`; matches may reach back to `floor`. */
function lz4Block(input: Uint8Array, start: number, end: number, out: Uint8Array, o: number, floor: number, bad: (why: string) => Error): number {
  let i = start;
  while (i < end) {
    const token = input[i++]!;
    let literals = token >> 4;
    if (literals === 15) {
      let b: number;
      do {
        if (i >= end) throw bad('has a block that ends inside a length');
        b = input[i++]!;
        literals += b;
      } while (b === 255);
    }
    if (i + literals > end) throw bad('has literals past the end of its block');
    if (o + literals > out.length) throw bad(`holds more than the ${out.length} bytes announced`);
    out.set(input.subarray(i, i + literals), o);
    i += literals;
    o += literals;
    if (i === end) break;
    if (i + 2 > end) throw bad('has a block that ends inside a match');
    const offset = input[i]! | (input[i + 1]! << 8);
    i += 2;
    if (offset === 0 || o - offset < floor) throw bad(`has a match offset (${offset}) before the start of its data`);
    let match = (token & 15) + 4;
    if ((token & 15) === 15) {
      let b: number;
      do {
        if (i >= end) throw bad('has a block that ends inside a length');
        b = input[i++]!;
        match += b;
      } while (b === 255);
    }
    if (o + match > out.length) throw bad(`holds more than the ${out.length} bytes announced`);
    // Byte by byte: a match may overlap the bytes it is writing (a run).
    for (let from = o - offset, k = 0; k < match; k++) out[o++] = out[from + k]!;
  }
  return o;
}
