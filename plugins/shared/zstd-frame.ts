/**
 * The header of a ZSTD frame, read before the decoder allocates what it asks for (its content
 * size, or its window): the one place both Parquet pages and Arrow buffers check it.
 */
const ZSTD_MAGIC = 0xfd2fb528;
/** A ZSTD frame may ask for a window this large (or as large as its content) and no larger. */
const MAX_ZSTD_WINDOW = 64 << 20;

export interface ZstdFrameHeader {
  /** The frame ends with a 4-byte checksum of its content (the low half of its XXH64). */
  readonly checksum: boolean;
  /** The content size the frame states, when it states one. */
  readonly contentSize: number | undefined;
}

/**
 * Reads the first frame's header; `size` is the decoded size the container announces. Returns
 * what is wrong in words, or the header.
 */
export function readZstdHeader(input: Uint8Array, size: number): ZstdFrameHeader | string {
  if (input.length < 6) return `the ZSTD data is ${input.length} bytes, too short for a frame`;
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  if (view.getUint32(0, true) !== ZSTD_MAGIC) return 'the ZSTD data does not start with the ZSTD frame magic number';
  const flags = input[4]!;
  if (flags & 0x08) return 'the ZSTD frame header sets its reserved bit';
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
  if (at + sizeBytes > input.length) return 'the ZSTD frame header ends early';
  let contentSize: number | undefined;
  if (sizeBytes > 0) {
    let content = 0;
    for (let k = sizeBytes - 1; k >= 0; k--) content = content * 256 + input[at + k]!;
    if (sizeBytes === 2) content += 256;
    // One frame per buffer or page is what writers make; its content is the whole of it.
    if (content > size) return `the ZSTD frame holds ${content} bytes, more than the ${size} announced`;
    contentSize = content;
  } else if (window > Math.max(size, MAX_ZSTD_WINDOW)) {
    return `the ZSTD frame asks for a ${window}-byte window for ${size} bytes of data`;
  }
  return { checksum: (flags & 0x04) !== 0, contentSize };
}
