/**
 * Content checksums for the ledger: SHA-256 of a claimed file, read through its claimed
 * descriptor (never the producer's path), in large positional reads.
 */
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';

/**
 * Files up to this size get a checksum in the ledger even when nothing asks for one: hashing
 * them costs well under a millisecond (about 1 GB/s here), next to a transaction of several.
 * Larger files are hashed only for `skipDuplicateContent`, which needs it.
 */
export const CHEAP_CHECKSUM_BYTES = 1 << 20;

const CHUNK = 1 << 20;

/** Hex SHA-256 of the first `size` bytes of `handle` (the size recorded at claim time). */
export async function sha256OfHandle(handle: FileHandle, size: number): Promise<string> {
  const hash = createHash('sha256');
  const buffer = new Uint8Array(Math.min(CHUNK, Math.max(size, 1)));
  let position = 0;
  while (position < size) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, size - position), position);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return hash.digest('hex');
}
