/**
 * What is staged under `.hyperwatch/staging/`, every process's folder: claims of live processes,
 * of dead ones, and of dead ones being taken over (their folder moving into the taker's).
 */
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';

/** Every file under `folder`, as its path. */
async function filesUnder(folder: string, into: string[]): Promise<void> {
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const path = join(folder, e.name);
    if (e.isDirectory()) await filesUnder(path, into);
    else into.push(path);
  }
}

/**
 * The staged entries' own names (`<claimId>~<name>`, ...), from any folder under `root`. A
 * takeover moves files while the listing runs, and one moved from a folder not yet listed into
 * one already listed would be missed: so it lists again until two listings in a row find the same
 * files at the same places, and gives up (undefined) if they keep changing for `rounds` listings.
 */
export async function stagedNamesUnder(root: string, rounds = 5): Promise<string[] | undefined> {
  let last: string | undefined;
  for (let round = 0; round < rounds; round++) {
    const paths: string[] = [];
    await filesUnder(root, paths);
    const listing = paths.sort().join('\n');
    if (listing === last) return paths.map((p) => basename(p));
    last = listing;
  }
  return undefined;
}
