/**
 * For checks fed a file chunk by chunk: the answer must not depend on where the chunks are cut.
 */
import assert from 'node:assert/strict';

/**
 * `read(size)`, the file of `length` bytes fed `size` bytes at a time, gives the same answer for
 * every size from 1 byte up to the whole file; that answer.
 */
export function sameInEveryPieceSize<T>(length: number, label: string, read: (size: number) => T): T {
  const whole = read(length + 1);
  for (let size = 1; size <= length; size++) assert.deepEqual(read(size), whole, `${label} in pieces of ${size}`);
  return whole;
}

/**
 * Feeds `bytes` from `from` on, `size` bytes at a time, through one buffer, as the file check
 * reads a file (plugins/csv/utf8-check.ts), and overwrites the buffer with `#` once `feed` has a
 * piece: a check that kept a view of an earlier piece would then see other bytes than the file's.
 */
export function feedThroughOneBuffer(bytes: Uint8Array, from: number, size: number, feed: (piece: Uint8Array) => void): void {
  const buffer = new Uint8Array(size);
  for (let at = from; at < bytes.length; at += size) {
    const piece = bytes.subarray(at, at + size);
    buffer.set(piece);
    feed(buffer.subarray(0, piece.length));
    buffer.fill(0x23);
  }
}
