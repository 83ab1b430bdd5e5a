/**
 * A compressed claimed file as its inner plugin sees it: the decompressed bytes, streamed. The
 * head (the first `HEAD_BYTES`) is decompressed once, before the plugin runs: a file that ends
 * within it is then checked whole (its CRC or structure) and kept in memory, with its exact size,
 * so small compressed files are grouped and scanned like plain ones. A larger file is decompressed
 * again as the plugin streams it, and a fault found there fails the transaction it is in.
 */
import { concatBytes } from '../../src/bytes.ts';
import type { ClaimedFile } from '../../src/types.ts';
import { type Codec, inflate } from './inflate.ts';

/** Decompressed bytes read ahead and kept: what a CSV header and type sample need (256 KiB). */
export const HEAD_BYTES = 256 << 10;

export class DecompressedFile implements ClaimedFile {
  readonly name: string;
  readonly mtimeMs: number;
  readonly claimId: string;
  /** The compressed file: never read by the database (plugins are told it cannot read files). */
  readonly stagedPath: string;

  /**
   * `size`: exact when the file was decompressed whole up front; else `limit`, an upper bound
   * (the stream fails past it), so a plugin's "read the first N bytes" stays within the file.
   */
  constructor(
    private readonly compressed: ClaimedFile,
    readonly extension: string,
    private readonly codec: Codec,
    private readonly limit: number,
    private readonly head: Uint8Array,
    readonly size: number,
  ) {
    this.name = compressed.name;
    this.mtimeMs = compressed.mtimeMs;
    this.claimId = compressed.claimId;
    this.stagedPath = compressed.stagedPath;
  }

  /** The whole file was decompressed (and checked) up front: `size` is exact. */
  get complete(): boolean {
    return this.size === this.head.length;
  }

  async *stream(options: { readonly start?: number; readonly end?: number } = {}): AsyncIterable<Uint8Array> {
    const start = Math.max(0, options.start ?? 0);
    // To the end of the file unless told otherwise: past `limit` the decoder itself fails.
    const end = options.end ?? Number.POSITIVE_INFINITY;
    if (start >= end) return;
    if (this.complete || end <= this.head.length) {
      yield this.head.subarray(start, end);
      return;
    }
    let at = 0;
    for await (const chunk of inflate(this.compressed.stream(), this.#options())) {
      const from = Math.max(start - at, 0);
      const to = Math.min(end - at, chunk.length);
      at += chunk.length;
      if (to > from) yield from === 0 && to === chunk.length ? chunk : chunk.subarray(from, to);
      if (at >= end) return;
    }
  }

  async read(position: number, length: number): Promise<Uint8Array> {
    const end = position + Math.max(0, length);
    if (this.complete || end <= this.head.length) return this.head.subarray(Math.min(position, this.head.length), Math.min(end, this.head.length));
    const parts: Uint8Array[] = [];
    for await (const part of this.stream({ start: position, end })) parts.push(part);
    return concatBytes(parts);
  }

  #options() {
    return { codec: this.codec, name: this.name, size: this.compressed.size, limit: this.limit };
  }
}

/**
 * Decompresses the head of `compressed` (and the whole file when it is that small). Rejects with
 * the decoder's error (an `IngestFailure`) when the head is already bad.
 */
export async function openDecompressed(compressed: ClaimedFile, extension: string, codec: Codec, limit: number): Promise<DecompressedFile> {
  const parts: Uint8Array[] = [];
  let total = 0;
  let complete = true;
  for await (const chunk of inflate(compressed.stream(), { codec, name: compressed.name, size: compressed.size, limit })) {
    parts.push(chunk);
    total += chunk.length;
    if (total > HEAD_BYTES) {
      complete = false;
      break;
    }
  }
  const head = new Uint8Array(Math.min(total, HEAD_BYTES));
  let at = 0;
  for (const p of parts) {
    const take = Math.min(p.length, head.length - at);
    head.set(p.subarray(0, take), at);
    at += take;
    if (at === head.length) break;
  }
  return new DecompressedFile(compressed, extension, codec, limit, head, complete ? head.length : Math.max(limit, head.length + 1));
}
