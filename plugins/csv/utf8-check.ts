/**
 * A file the server is to read itself is checked to be UTF-8 first: hyperd's own CSV reader does
 * not refuse every byte that is not (`2024-01\xFF\xFF1 02:41:39` in a TIMESTAMP column lands as
 * `1900-01-01 01:39:00`, no error), so such a file must fail here, before any of it lands, as
 * it does when the watcher streams it.
 */
import { isUtf8 as nativeIsUtf8 } from 'node:buffer';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile } from '../../src/types.ts';
import { isUtf8 as portableIsUtf8 } from '../shared/utf8.ts';

// Reads of 1 MiB, beside the database reading the same file: each piece is walked three times
// (UTF-8, quotes, dates), and a piece that stays in the CPU's cache makes the three cost about
// 20% less than 4 MiB pieces did (a 1M-row file's check: 74 ms against 92), for 4 times the
// reads, which cost little from one buffer.
export const CHECK_CHUNK_BYTES = 1 << 20;
const CHUNK = CHECK_CHUNK_BYTES;

// simdutf in Node, Deno and Bun (about 10 GB/s here); the portable check where a runtime lacks it.
export const isUtf8: (bytes: Uint8Array) => boolean =
  typeof nativeIsUtf8 === 'function' ? (bytes) => nativeIsUtf8(bytes) : (bytes) => portableIsUtf8(bytes);

/**
 * Sees each piece of the file as the check reads it, in order; false stops the reading (the
 * watcher has found what it looks for). `first`: the piece is the file's start. The piece's bytes
 * are the next piece's once the call returns: whatever a watcher keeps of them, it copies.
 */
export type ChunkWatcher = (bytes: Uint8Array, first: boolean) => boolean;

/**
 * Fails the file when its bytes are not UTF-8, naming the line; the bytes already read (`whole`)
 * are not read again. `also` sees the same bytes (one read of the file for several checks).
 */
export async function checkUtf8(file: ClaimedFile, whole?: Uint8Array, also?: ChunkWatcher): Promise<void> {
  const at = whole ? firstInvalidInWhole(whole, also) : await firstInvalidIn(file, also);
  if (at === undefined) return;
  const line = await lineAt(file, at, whole);
  throw new IngestFailure(
    ingestError(
      'data',
      'CSV_NOT_UTF8',
      `${file.name}: invalid UTF-8 sequence in line ${line} (byte ${at + 1})`,
      'The file is not UTF-8: spreadsheets save "CSV" in the system\'s code page (e.g. Windows-1252) unless told otherwise. ' +
        'Save it as "CSV UTF-8", convert it (iconv -f WINDOWS-1252 -t UTF-8), or name its encoding (--encoding, encoding), ' +
        'then replay the file.',
      { file: file.name, line },
    ),
  );
}

function firstInvalidInWhole(whole: Uint8Array, also?: ChunkWatcher): number | undefined {
  if (!isUtf8(whole)) return firstInvalid(whole, 0);
  also?.(whole, true);
  return undefined;
}

/**
 * Offset of the first byte that is not UTF-8, reading the file in chunks cut between characters.
 * One buffer takes every chunk (`also` is done with a chunk before the next is read): a fresh one
 * per read cost more than the checks themselves, in page faults and garbage (bench/ab.ts --only csv).
 */
async function firstInvalidIn(file: ClaimedFile, also?: ChunkWatcher): Promise<number | undefined> {
  const buffer = new Uint8Array(Math.min(CHUNK, file.size));
  let position = 0;
  while (position < file.size) {
    const chunk = await file.readInto(buffer, position);
    if (chunk.length === 0) return undefined;
    const last = position + chunk.length >= file.size;
    // A character cut by the chunk's end is checked with the next chunk.
    const cut = last ? chunk.length : characterStart(chunk);
    const piece = chunk.subarray(0, cut > 0 ? cut : chunk.length);
    if (!isUtf8(piece)) return position + (firstInvalid(piece, 0) ?? 0);
    if (also && !also(piece, position === 0)) return undefined;
    position += piece.length;
  }
  return undefined;
}

/** Where the last (maybe incomplete) character of `chunk` starts: at most 3 bytes back. */
function characterStart(chunk: Uint8Array): number {
  for (let i = chunk.length - 1; i >= Math.max(0, chunk.length - 4); i--) {
    const b = chunk[i]!;
    if (b < 0x80) return chunk.length;
    if (b >= 0xc0) return i;
  }
  return chunk.length;
}

/** The first offset in `bytes` where a character is not UTF-8 (walked only on failure). */
function firstInvalid(bytes: Uint8Array, from: number): number | undefined {
  let i = from;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const need = b < 0x80 ? 0 : b >= 0xc2 && b <= 0xdf ? 1 : b >= 0xe0 && b <= 0xef ? 2 : b >= 0xf0 && b <= 0xf4 ? 3 : -1;
    if (need < 0 || i + need >= bytes.length || !portableIsUtf8(bytes, i, i + need + 1)) return i;
    i += need + 1;
  }
  return undefined;
}

/** The 1-based line of byte `offset`. */
export async function lineAt(file: ClaimedFile, offset: number, whole?: Uint8Array): Promise<number> {
  let line = 1;
  for (let position = 0; position < offset; position += CHUNK) {
    const chunk = whole
      ? whole.subarray(position, Math.min(offset, position + CHUNK))
      : await file.read(position, Math.min(CHUNK, offset - position));
    for (let k = chunk.indexOf(0x0a); k >= 0; k = chunk.indexOf(0x0a, k + 1)) line++;
  }
  return line;
}
