/**
 * A claimed file's SHA-256 (src/util/checksum.ts): the digest of its bytes hashed at once, for a
 * file read whole and for one read in pieces through one buffer.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { sha256OfFile } from '../../../src/util/checksum.ts';
import { eachClaimed } from '../../helpers/claimed.ts';

describe('sha256OfFile', () => {
  it('gives the digest of the whole content, small file or pieces with a short last one, and counts no read', async () => {
    // 2.5 MiB and 3 bytes: two whole 1 MiB pieces and a short one, each different.
    const content = Uint8Array.from({ length: (5 << 19) + 3 }, (_, i) => (i * 31 + (i >> 12)) & 0xff);
    const files: [string, Uint8Array][] = [
      ['small.csv', content.subarray(0, 5000)],
      ['big.csv', content],
    ];
    await eachClaimed(files, async (file, bytes) => {
      assert.equal(await sha256OfFile(file), createHash('sha256').update(bytes).digest('hex'), file.name);
      assert.equal(file.bytesRead, 0, `${file.name}: a checksum's reads are not the plugin's`);
    });
  });
});
