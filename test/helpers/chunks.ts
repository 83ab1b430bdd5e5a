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
