/**
 * Streaming decompression of a claimed file, with web-standard APIs and pure JavaScript only, so
 * the same code runs on Node, Deno and Bun:
 * - gzip: `DecompressionStream('gzip')`, the runtime's own zlib (Node 20, Deno and Bun all have
 *   it, check the CRC-32 and the length, and report a truncated stream);
 * - zstd: `fzstd`'s streaming decoder (Node 20's `node:zlib` has no zstd; fzstd is small, has no
 *   dependencies, and was already installed here as a dependency of hyparquet-compressors).
 *
 * Memory stays bounded whatever the ratio: gzip output is pulled with backpressure; zstd input is
 * pushed in slices sized so that one slice inflates to a few MiB at most, even at zstd's largest
 * ratio (an RLE block: 4 bytes for 128 KiB). Past `limit` output bytes the file fails.
 */
import { Decompress } from 'fzstd';
import { concatBytes } from '../../src/util/bytes.ts';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { IngestError } from '../../src/types.ts';

export const CODECS = ['gzip', 'zstd'] as const;
export type Codec = (typeof CODECS)[number];

/** File-name suffix of each codec, lower-case. */
export const CODEC_SUFFIX: Record<Codec, string> = { gzip: '.gz', zstd: '.zst' };

/** Output is handed on in chunks of about this size: COPY is much faster fed large chunks. */
const OUT_CHUNK = 1 << 20;
/** gzip input goes in slices this large: an error is located within one slice. */
const GZIP_SLICE = 64 << 10;
/** zstd input slices: from MIN to MAX bytes, aiming at about TARGET output bytes per slice. */
const ZSTD_SLICE_MIN = 256;
const ZSTD_SLICE_MAX = 256 << 10;
const ZSTD_TARGET_OUT = 4 << 20;

export interface InflateOptions {
  readonly codec: Codec;
  /** The file's name as dropped, for errors. */
  readonly name: string;
  /** Size of the compressed file, for errors. */
  readonly size: number;
  /** Most output bytes allowed (`maxDecompressedBytes`). */
  readonly limit: number;
}

function fail(error: IngestError): IngestFailure {
  return new IngestFailure(error);
}

const REPLAY_HINT = 'Compress the complete file again (write it to a temporary name, then rename it) and replay it.';

export function tooLarge(options: InflateOptions, at: number): IngestFailure {
  return fail(
    ingestError(
      'data',
      'DECOMPRESSED_TOO_LARGE',
      `${options.name} inflates past maxDecompressedBytes (${options.limit} bytes) by byte ${at} of its ${options.size} ` +
        `compressed bytes; nothing was loaded`,
      'A file that inflates this much is refused as a likely decompression bomb. If it is genuine, raise ' +
        'maxDecompressedBytes (--max-decompressed-bytes) and replay it.',
      { file: options.name },
    ),
  );
}

/** A decoder's complaint, as an error naming the compressed byte offset where it was found. */
export function corrupt(options: InflateOptions, at: number, reason: string): IngestFailure {
  const truncated = at >= options.size && /end of (file|stream|input)|unexpected EOF|truncated/i.test(reason);
  const label = options.codec === 'gzip' ? 'gzip' : 'zstd';
  const message = truncated
    ? `${options.name}: the ${label} data ends at byte ${options.size} before its end of stream (${reason}): the file is ` +
      `truncated; nothing was loaded`
    : `${options.name}: the ${label} data is corrupt at or before byte ${at} of ${options.size} (${reason}); nothing was loaded`;
  return fail(ingestError('data', truncated ? 'COMPRESSED_TRUNCATED' : 'COMPRESSED_CORRUPT', message, REPLAY_HINT, { file: options.name }));
}

/** Gathers small pieces into chunks of about `OUT_CHUNK` bytes. */
class Gather {
  #parts: Uint8Array[] = [];
  #bytes = 0;
  add(part: Uint8Array): void {
    if (part.length === 0) return;
    this.#parts.push(part);
    this.#bytes += part.length;
  }
  get full(): boolean {
    return this.#bytes >= OUT_CHUNK;
  }
  take(): Uint8Array | undefined {
    if (this.#bytes === 0) return undefined;
    const out = this.#parts.length === 1 ? this.#parts[0]! : concatBytes(this.#parts);
    this.#parts = [];
    this.#bytes = 0;
    return out;
  }
}

/** The decompressed bytes of `source` (the compressed file, from its start). */
export function inflate(source: AsyncIterable<Uint8Array>, options: InflateOptions): AsyncIterable<Uint8Array> {
  return options.codec === 'gzip' ? gunzip(source, options) : unzstd(source, options);
}

async function* gunzip(source: AsyncIterable<Uint8Array>, options: InflateOptions): AsyncIterable<Uint8Array> {
  const stream = new DecompressionStream('gzip');
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  // Bytes handed to the decoder so far: an error it reports lies at or before this offset.
  let fed = 0;
  let readFailed = false;
  let readFailure: unknown;
  const feeding = (async () => {
    const chunks = source[Symbol.asyncIterator]();
    try {
      for (;;) {
        let next: IteratorResult<Uint8Array>;
        try {
          next = await chunks.next();
        } catch (error) {
          readFailed = true;
          readFailure = error;
          await writer.abort(error).catch(() => {});
          return;
        }
        if (next.done) break;
        for (let i = 0; i < next.value.length; i += GZIP_SLICE) {
          const slice = next.value.subarray(i, i + GZIP_SLICE);
          fed += slice.length;
          // Our chunks are never views of a SharedArrayBuffer (files are read into fresh buffers).
          await writer.write(slice as Uint8Array<ArrayBuffer>);
        }
      }
      await writer.close();
    } catch {
      // The decoder failed (the reader reports it) or was cancelled: stop reading the file.
      await chunks.return?.().catch(() => {});
    }
  })();
  const gather = new Gather();
  let out = 0;
  let finished = false;
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (error) {
        await feeding;
        if (readFailed) throw readFailure;
        throw corrupt(options, fed, error instanceof Error ? error.message : String(error));
      }
      if (next.done) break;
      out += next.value.length;
      if (out > options.limit) throw tooLarge(options, fed);
      gather.add(next.value);
      if (gather.full) yield gather.take()!;
    }
    await feeding;
    if (readFailed) throw readFailure;
    const last = gather.take();
    if (last) yield last;
    finished = true;
  } finally {
    // Stopped early (an error, or a consumer that read enough): stop feeding the decoder and drain
    // what it still has. Never `reader.cancel()`: on Node 20 the decoder may then push one more
    // chunk into the closed stream, an exception nobody can catch.
    if (!finished) {
      // Not awaited first: the abort waits for a write in flight, which waits for these reads.
      const aborted = writer.abort(new Error('decompression stopped early')).catch(() => {});
      try {
        while (!(await reader.read()).done);
      } catch {
        // The abort (or the decoder's own error) ends the stream.
      }
      await aborted;
      await feeding;
    }
  }
}

async function* unzstd(source: AsyncIterable<Uint8Array>, options: InflateOptions): AsyncIterable<Uint8Array> {
  const gather = new Gather();
  let out = 0;
  let fed = 0;
  let pending: IngestFailure | undefined;
  const decoder = new Decompress((block) => {
    out += block.length;
    if (out > options.limit) throw (pending = tooLarge(options, fed));
    gather.add(block);
  });
  const push = (slice: Uint8Array, final: boolean) => {
    try {
      decoder.push(slice, final);
    } catch (error) {
      throw pending ?? corrupt(options, fed, error instanceof Error ? error.message : String(error));
    }
  };
  let slice = ZSTD_SLICE_MIN;
  for await (const chunk of source) {
    for (let i = 0; i < chunk.length; ) {
      const part = chunk.subarray(i, i + slice);
      const before = out;
      fed += part.length;
      push(part, false);
      i += part.length;
      // Aim the next slice at about ZSTD_TARGET_OUT output bytes at the ratio just seen.
      const ratio = Math.max(1, (out - before) / part.length);
      slice = Math.max(ZSTD_SLICE_MIN, Math.min(ZSTD_SLICE_MAX, Math.floor(ZSTD_TARGET_OUT / ratio)));
      if (gather.full) yield gather.take()!;
    }
  }
  push(new Uint8Array(0), true);
  const last = gather.take();
  if (last) yield last;
}
