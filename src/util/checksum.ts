/**
 * Content checksums for the ledger: SHA-256 of a claimed file, read through its claimed
 * descriptor (never the producer's path), in large positional reads.
 */
import { createHash } from 'node:crypto';
import type { OpenedFile } from '../protocol/files.ts';

/**
 * Files up to this size get a checksum in the ledger even when nothing asks for one: hashing
 * them costs well under a millisecond (about 1 GB/s here), next to a transaction of several.
 * Larger files are hashed only for `skipDuplicateContent`, which needs it.
 */
export const CHEAP_CHECKSUM_BYTES = 1 << 20;

const CHUNK = 1 << 20;

/** Hex SHA-256 of the claimed bytes (the first `file.size`, the size recorded at claim time). */
export async function sha256OfFile(file: Pick<OpenedFile, 'size' | 'readNow' | 'readIntoUncounted'>): Promise<string> {
  const hash = createHash('sha256');
  const small = file.readNow(0, file.size);
  if (small) return hash.update(small).digest('hex');
  // One buffer for every read: `update` has hashed a chunk by the time it returns.
  const buffer = new Uint8Array(Math.min(CHUNK, file.size));
  let position = 0;
  while (position < file.size) {
    const chunk = await file.readIntoUncounted(buffer, position);
    if (chunk.length === 0) break;
    hash.update(chunk);
    position += chunk.length;
  }
  return hash.digest('hex');
}
