/**
 * Files claimed as the watcher claims them (src/protocol/files.ts, `claimFile`), for tests of a
 * claimed file's reads: each written into a temporary folder, claimed, handed to `use`, then
 * closed; the folder is removed afterwards.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimFile, type OpenedFile } from '../../src/protocol/files.ts';

export async function eachClaimed<Content extends string | Uint8Array>(
  files: readonly (readonly [name: string, content: Content])[],
  use: (file: OpenedFile, content: Content) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'hyperwatch-claimed-'));
  try {
    for (const [name, content] of files) {
      await writeFile(join(dir, name), content);
      const claim = claimFile(dir, name, join(dir, `staged-${name}`), { claimId: 'c', extension: '.csv' });
      assert.equal(claim.status, 'claimed', name);
      if (claim.status !== 'claimed') continue;
      try {
        await use(claim.file, content);
      } finally {
        claim.file.close();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
