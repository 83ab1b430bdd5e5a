/**
 * A claimed file as a plugin sees it after a decoding step (decompression, a character set): the
 * decoded bytes, streamed. The head (the first `HEAD_BYTES` decoded) is decoded once, before the
 * plugin runs: a file that ends within it is then checked whole (a CRC, every character) and kept
 * in memory, with its exact size, so small files are grouped and scanned like plain ones. A larger
 * file is decoded again as the plugin streams it, and a fault found there fails the transaction it
 * is in. The database never reads such a file from its path: what is on disk is not what loads.
 */
import { concatBytes } from '../../src/util/bytes.ts';
import type { ClaimedFile, IngestContext } from '../../src/types.ts';

/** Decoded bytes read ahead and kept: what a CSV header and type sample need (256 KiB). */
export const HEAD_BYTES = 256 << 10;

/** Decodes the whole of a file's bytes, as a stream; fails (an `IngestFailure`) on a fault. */
export type Decode = (bytes: AsyncIterable<Uint8Array>) => AsyncIterable<Uint8Array>;

export class DecodedFile implements ClaimedFile {
  readonly name: string;
  readonly mtimeMs: number;
  readonly claimId: string;
  /** The file on disk: never read by the database (plugins are told it cannot read files). */
  readonly stagedPath: string;

  /**
   * `size`: exact when the file was decoded whole up front; else an upper bound of the decoded
   * size (a stream past it fails), so a plugin's "read the first N bytes" stays within the file.
   */
  constructor(
    private readonly source: ClaimedFile,
    readonly extension: string,
    private readonly decode: Decode,
    private readonly head: Uint8Array,
    readonly size: number,
  ) {
    this.name = source.name;
    this.mtimeMs = source.mtimeMs;
    this.claimId = source.claimId;
    this.stagedPath = source.stagedPath;
  }

  /** The whole file was decoded (and checked) up front: `size` is exact. */
  get complete(): boolean {
    return this.size === this.head.length;
  }

  async *stream(options: { readonly start?: number; readonly end?: number } = {}): AsyncIterable<Uint8Array> {
    const start = Math.max(0, options.start ?? 0);
    // To the end of the file unless told otherwise: past its bound the decoder itself fails.
    const end = options.end ?? Number.POSITIVE_INFINITY;
    if (start >= end) return;
    if (this.complete || end <= this.head.length) {
      yield this.head.subarray(start, end);
      return;
    }
    let at = 0;
    for await (const chunk of this.decode(this.source.stream())) {
      const from = Math.max(start - at, 0);
      const to = Math.min(end - at, chunk.length);
      at += chunk.length;
      if (to > from) yield from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to);
      if (at >= end) return;
    }
  }

  async read(position: number, length: number): Promise<Uint8Array> {
    const end = position + Math.max(0, length);
    if (this.complete || end <= this.head.length)
      return this.head.subarray(Math.min(position, this.head.length), Math.min(end, this.head.length));
    const parts: Uint8Array[] = [];
    for await (const part of this.stream({ start: position, end })) parts.push(part);
    return concatBytes(parts);
  }

  /** The decoded bytes come from the decoder's own buffers: `buffer` only says how many. */
  readInto(buffer: Uint8Array, position: number): Promise<Uint8Array> {
    return this.read(position, buffer.length);
  }
}

/**
 * Decodes the head of `source` (and the whole file when it is that small). `bound` is an upper
 * bound of the decoded size (a decoder fails past it). Rejects with the decoder's error (an
 * `IngestFailure`) when the head is already bad.
 */
export async function openDecoded(source: ClaimedFile, extension: string, decode: Decode, bound: number): Promise<DecodedFile> {
  const parts: Uint8Array[] = [];
  let total = 0;
  let complete = true;
  for await (const chunk of decode(source.stream())) {
    parts.push(chunk);
    total += chunk.length;
    if (total > HEAD_BYTES) {
      complete = false;
      break;
    }
  }
  // A copy: the decoder may hand out views of buffers it goes on using.
  const head = concatBytes(parts).slice(0, Math.min(total, HEAD_BYTES));
  return new DecodedFile(source, extension, decode, head, complete ? head.length : Math.max(bound, head.length + 1));
}

/** `ctx` for a plugin handed decoded views: the database must not read the files on disk itself. */
export function streaming(ctx: IngestContext): IngestContext {
  return { ...ctx, capabilities: { ...ctx.capabilities, readsLocalFiles: false } };
}
