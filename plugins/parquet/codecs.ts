/**
 * Parquet page decompression with every check each codec offers, for hyparquet (`compressors`)
 * and for the checks made before hyperd reads a file itself (`decompressPage`). A page must
 * decompress to exactly the size its header states; anything else is an error, never a shorter
 * or longer page (hyparquet's own codecs hand back a buffer of the stated size whatever was
 * decoded into it):
 * - SNAPPY: the length its preamble states must be the header's, and the block must fill it;
 * - GZIP: the runtime's zlib (as the other readers decode it), which checks each member's header,
 *   Huffman tables, CRC-32 and length (ISIZE), and exactly the stated size;
 * - ZSTD: the frame header checked before allocating, then libzstd's own decoding (as the other
 *   readers decode), with its checks: every table and bitstream, the content checksum where the
 *   frame has one, the exact size;
 * - LZ4_RAW and LZ4 (Hadoop's framing, or a raw block as Arrow C++ also accepts): every length and
 *   match offset checked, the output filled exactly;
 * - BROTLI: the decoder's errors, and no more than the stated size (the format states no size).
 */
import type { Compressors } from 'hyparquet';
import { gunzipSync } from 'node:zlib';
import { compressors as lenient } from 'hyparquet-compressors';
import { lz4Block } from '../shared/lz4-block.ts';
import { zstdDecode } from '../shared/zstd-decode.ts';
import { readZstdHeader } from '../shared/zstd-frame.ts';

/** What is wrong with a page's compressed bytes, in words about the codec. */
export class CodecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodecError';
  }
}

const fail = (message: string): never => {
  throw new CodecError(message);
};

function readVarint(input: Uint8Array): { value: number; end: number } {
  let value = 0;
  for (let i = 0; i < 5 && i < input.length; i++) {
    const byte = input[i]!;
    value += (byte & 0x7f) * 2 ** (7 * i);
    if (!(byte & 0x80)) return { value, end: i + 1 };
  }
  return fail('the SNAPPY length preamble is malformed');
}

const snappyBlock = lenient.SNAPPY!;

function snappy(input: Uint8Array, size: number): Uint8Array {
  const { value } = readVarint(input);
  if (value !== size) fail(`the SNAPPY data says it decompresses to ${value} bytes where the page header says ${size}`);
  try {
    return snappyBlock(input, size);
  } catch (error) {
    return fail(`the SNAPPY data cannot be decompressed (${error instanceof Error ? error.message : String(error)})`);
  }
}

function gzip(input: Uint8Array, size: number): Uint8Array {
  if (input.length < 18 || input[0] !== 0x1f || input[1] !== 0x8b || input[2] !== 8)
    fail('the GZIP data does not start with a gzip header');
  // Parquet writers write a bare member (no name, comment, extra field or text hint); DuckDB
  // refuses any flag, so a set one is a damaged header, not a writer's choice.
  if (input[3] !== 0) fail(`the GZIP header sets flags 0x${input[3]!.toString(16).padStart(2, '0')}, which Parquet writers never set`);
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const length = view.getUint32(input.length - 4, true);
  if (length !== size % 2 ** 32) fail(`the GZIP data says it holds ${length} bytes where the page header says ${size}`);
  let out: Uint8Array;
  try {
    // The runtime's zlib, as DuckDB, Arrow C++ and arrow-rs decode it: header flags, every Huffman
    // table and distance, the CRC-32 and length of each member (a JavaScript inflater took code
    // tables zlib refuses as over-subscribed). Never more than the stated size is made.
    out = gunzipSync(input, { maxOutputLength: Math.max(size, 1) });
  } catch (error) {
    return fail(`the GZIP data cannot be decompressed (${error instanceof Error ? error.message : String(error)})`);
  }
  if (out.length !== size) fail(`the GZIP data decompresses to ${out.length} bytes where the page header says ${size}`);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

function zstd(input: Uint8Array, size: number): Uint8Array {
  const header = readZstdHeader(input, size);
  if (typeof header === 'string') return fail(header);
  try {
    // libzstd checks the frame's content checksum where it has one, and the exact size.
    return zstdDecode(input, size);
  } catch (error) {
    return fail(`the ZSTD data cannot be decompressed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function lz4Raw(input: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  const written = lz4Block(input, 0, input.length, out, 0, 0, (why) => new CodecError(`the LZ4 block ${why}`));
  if (written !== size) fail(`the LZ4 data decompresses to ${written} bytes where the page header says ${size}`);
  return out;
}

/** Hadoop's framing: (decompressed size, compressed size, raw block) big-endian, repeated; else one raw block. */
function lz4Hadoop(input: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  let i = 0;
  let o = 0;
  try {
    while (i < input.length) {
      if (i + 8 > input.length) throw new CodecError('ends inside a Hadoop frame header');
      const decompressed = view.getUint32(i);
      const compressed = view.getUint32(i + 4);
      i += 8;
      if (i + compressed > input.length || o + decompressed > size) throw new CodecError('has a Hadoop frame past its data');
      const end = lz4Block(input, i, i + compressed, out, o, o, (why) => new CodecError(`the LZ4 block ${why}`));
      if (end !== o + decompressed) throw new CodecError('has a Hadoop frame of another size than it states');
      o = end;
      i += compressed;
    }
    if (o !== size) throw new CodecError(`decompresses to ${o} bytes`);
    return out;
  } catch {
    return lz4Raw(input, size);
  }
}

const brotliBlock = lenient.BROTLI!;

function brotli(input: Uint8Array, size: number): Uint8Array {
  try {
    return brotliBlock(input, size);
  } catch (error) {
    return fail(`the BROTLI data cannot be decompressed (${error instanceof Error ? error.message : String(error)})`);
  }
}

/**
 * The last page decompressed, by the bytes it came from: the checks of one page (its size, its
 * levels, its indices or text) and hyparquet's page readers called from them each ask for it, and
 * decompressing it once is what keeps the checks cheap.
 */
let last: { buffer: ArrayBufferLike; offset: number; length: number; codec: string; size: number; out: Uint8Array } | undefined;

function memo(codec: string, decompress: (input: Uint8Array, size: number) => Uint8Array): (input: Uint8Array, size: number) => Uint8Array {
  return (input, size) => {
    if (
      last &&
      last.buffer === input.buffer &&
      last.offset === input.byteOffset &&
      last.length === input.byteLength &&
      last.codec === codec &&
      last.size === size
    )
      return last.out;
    const out = decompress(input, size);
    last = { buffer: input.buffer, offset: input.byteOffset, length: input.byteLength, codec, size, out };
    return out;
  };
}

/** The decompressors hyparquet decodes pages with; each throws `CodecError`. */
export const strictCompressors: Compressors = {
  SNAPPY: memo('SNAPPY', snappy),
  GZIP: memo('GZIP', gzip),
  ZSTD: memo('ZSTD', zstd),
  LZ4_RAW: memo('LZ4_RAW', lz4Raw),
  LZ4: memo('LZ4', lz4Hadoop),
  BROTLI: memo('BROTLI', brotli),
};

/** Codecs this reader decompresses. */
export function canDecompress(codec: string): boolean {
  return codec === 'UNCOMPRESSED' || codec in strictCompressors;
}

/** A page's bytes, decompressed to exactly `size` bytes; throws `CodecError`. */
export function decompressPage(codec: string, input: Uint8Array, size: number): Uint8Array {
  if (codec === 'UNCOMPRESSED') {
    if (input.length !== size) fail(`the uncompressed page holds ${input.length} bytes where its header says ${size}`);
    return input;
  }
  const decompress = strictCompressors[codec as keyof Compressors];
  if (!decompress) return fail(`no decompressor for ${codec}`);
  return decompress(input, size);
}
