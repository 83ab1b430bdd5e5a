/**
 * The claim when `readyWhen` is `'stable'`: no sentinel to take first, so the data file itself is
 * claimed (renamed into staging: whoever moves it owns it, as with a sentinel), if it still looks
 * as it did when it was found stable, and once more after the rename, through the descriptor.
 * A `.ready` a producer wrote all the same goes along with it.
 */
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { READY_SUFFIX } from '../constants.ts';
import { claimFile, exists, renameIfPresent } from '../protocol/files.ts';
import { dataNameOf, newClaimId, stagedName } from '../protocol/names.ts';
import { failedClaim, type ReadyFile } from '../protocol/record.ts';
import type { ClaimResult } from './claim.ts';
import { changedAfterReady, notRegularFile } from './fail.ts';
import { lookOf, sameLook } from './settling.ts';
import type { Watch } from './watch.ts';

export function claimStable(w: Watch, ready: ReadyFile): ClaimResult {
  const { env, settling } = w;
  if (w.life.stopping) return undefined;
  const dataName = dataNameOf(ready.readyName);
  if (!dataName) return undefined;
  const path = join(env.dir, dataName);
  const seen = settling.last(dataName);
  const st = lstatSync(path, { throwIfNoEntry: false });
  if (st === undefined) {
    settling.forget(dataName);
    return undefined;
  }
  if (seen === undefined || !sameLook(seen, lookOf(st))) {
    // Changed since it was found stable: it waits `stableMs` again.
    settling.saw(dataName, lookOf(st));
    return undefined;
  }
  const claimId = newClaimId();
  const match = env.plugins.match(dataName);
  const extension = match?.extension ?? '';
  const staged = join(env.staging, stagedName(claimId, dataName));
  const claim = claimFile(env.dir, dataName, staged, { claimId, extension });
  switch (claim.status) {
    case 'missing':
      settling.forget(dataName); // another process took it, or its producer moved it away
      return undefined;
    case 'error':
      settling.waitAgain(dataName);
      env.log.warn('cannot claim file; retried later', { file: dataName, error: String(claim.error) });
      return ready;
    case 'unsafe':
      settling.forget(dataName);
      return {
        state: 'failed',
        name: dataName,
        claimId,
        extension,
        dataPath: claim.path,
        readyPath: staged + READY_SUFFIX,
        error: notRegularFile(dataName, claim.reason),
      };
    case 'claimed': {
      const { file } = claim;
      if (file.size === seen.size && file.mtimeMs === seen.mtimeMs) {
        settling.forget(dataName);
        renameIfPresent(path + READY_SUFFIX, staged + READY_SUFFIX);
        return { state: 'claimed', file, match };
      }
      // Written to between the look and the rename: back where it was, to wait again; unless its
      // producer made a new file under the name meanwhile, and then this one fails as changed.
      if (!exists(path) && renameIfPresent(staged, path)) {
        file.close();
        settling.saw(dataName, { size: file.size, mtimeMs: file.mtimeMs, ino: seen.ino });
        return undefined;
      }
      settling.forget(dataName);
      file.close();
      return failedClaim(
        file,
        changedAfterReady(file, `size ${file.size} bytes when claimed, ${seen.size} when found stable`, settling.stableMs),
      );
    }
  }
}
