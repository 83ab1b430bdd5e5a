/**
 * A claimed file's SHA-256 (src/util/checksum.ts): the digest of its bytes hashed at once, for a
 * file read whole and for one read in pieces through one buffer.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { claimFile } from '../../../src/protocol/files.ts';
import { sha256OfFile } from '../../../src/util/checksum.ts';

describe('sha256OfFile', () => {
  it('gives the digest of the whole content, small file or pieces with a short last one, and counts no read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hyperwatch-checksum-'));
    try {
      // 2.5 MiB and 3 bytes: two whole 1 MiB pieces and a short one, each different.
      const content = Uint8Array.from({ length: (5 << 19) + 3 }, (_, i) => (i * 31 + (i >> 12)) & 0xff);
      for (const [name, bytes] of [
        ['small.csv', content.subarray(0, 5000)],
        ['big.csv', content],
      ] as const) {
        await writeFile(join(dir, name), bytes);
        const claim = claimFile(dir, name, join(dir, `staged-${name}`), { claimId: 'c', extension: '.csv' });
        assert.equal(claim.status, 'claimed');
        if (claim.status !== 'claimed') continue;
        const expected = createHash('sha256').update(bytes).digest('hex');
        assert.equal(await sha256OfFile(claim.file), expected, name);
        assert.equal(claim.file.bytesRead, 0, `${name}: a checksum's reads are not the plugin's`);
        claim.file.close();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
