/**
 * The claim: `ready → claiming → claimed`, or back to the inbox as an orphan when the data file is
 * not there, or `failed` when it is not a regular file.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { READY_SUFFIX } from '../constants.ts';
import { claimFile, exists, removeIfPresent, renameIfPresent } from '../protocol/files.ts';
import { dataNameOf, newClaimId, stagedName } from '../protocol/names.ts';
import type { ClaimedFile, ClaimingFile, FailedFile, OrphanedFile, ReadyFile } from '../protocol/record.ts';
import { mapLimit } from '../util/map-limit.ts';
import { claimStable } from './claim-stable.ts';
import { fail, notRegularFile } from './fail.ts';
import { CLAIM_PARALLEL } from './limits.ts';
import type { Watch } from './watch.ts';

/** What a claim leads to; `undefined`: someone else took the sentinel first (nothing to do). */
export type ClaimResult = ClaimedFile | OrphanedFile | FailedFile | ReadyFile | undefined;

/**
 * Claims one drop. The sentinel is taken first, by rename into staging: whoever moves it owns
 * the drop, so a late event for a sentinel already taken (or a data file swapped in after it)
 * is never processed twice. Then the data file is claimed; if it is not there (yet), the
 * sentinel goes back to the inbox and waits as an orphan.
 */
export function claim(w: Watch, ready: ReadyFile): ClaimResult {
  const { env } = w;
  if (w.life.stopping) return undefined;
  const dataName = dataNameOf(ready.readyName);
  if (!dataName) return undefined;
  const claiming: ClaimingFile = { state: 'claiming', readyName: ready.readyName, dataName, claimId: newClaimId() };
  const match = env.plugins.match(dataName);
  const extension = match?.extension ?? '';
  const staged = join(env.staging, stagedName(claiming.claimId, dataName));
  const readyPath = join(env.dir, ready.readyName);
  if (!renameIfPresent(readyPath, staged + READY_SUFFIX)) return undefined;
  const claim = claimFile(env.dir, dataName, staged, { claimId: claiming.claimId, extension });
  switch (claim.status) {
    case 'missing':
      unclaimSentinel(staged + READY_SUFFIX, readyPath);
      return { state: 'orphaned', readyName: ready.readyName, since: Date.now() };
    case 'error':
      unclaimSentinel(staged + READY_SUFFIX, readyPath);
      env.log.warn('cannot claim file; retried on the next rescan', { file: dataName, error: String(claim.error) });
      return ready;
    case 'unsafe':
      return {
        state: 'failed',
        name: dataName,
        claimId: claiming.claimId,
        extension,
        dataPath: claim.path,
        readyPath: staged + READY_SUFFIX,
        error: notRegularFile(dataName, claim.reason),
      };
    case 'claimed':
      return { state: 'claimed', file: claim.file, match };
  }
}

/**
 * Puts a sentinel back in the inbox, unless the producer already made a new one. With
 * `recursive`, its subfolder may have been removed meanwhile (empty): it is made again.
 */
export function unclaimSentinel(stagedReady: string, readyPath: string): void {
  if (exists(readyPath)) removeIfPresent(stagedReady);
  else if (!renameIfPresent(stagedReady, readyPath) && exists(stagedReady)) {
    mkdirSync(dirname(readyPath), { recursive: true });
    renameIfPresent(stagedReady, readyPath);
  }
}

/**
 * Claims a task's drops one by one (each is its own race with producers), a few at a time, and
 * routes what is not claimed: orphans back to the inbox, unsafe entries to failed/.
 */
export async function claimAll(w: Watch, readyNames: readonly string[]): Promise<ClaimedFile[]> {
  const { inbox } = w;
  const results = await mapLimit(readyNames, CLAIM_PARALLEL, async (readyName): Promise<ClaimedFile | undefined> => {
    const next = (w.env.options.readyWhen === 'stable' ? claimStable : claim)(w, { state: 'ready', readyName });
    switch (next?.state) {
      case 'claimed':
        inbox.claimed(readyName);
        return next;
      case 'orphaned':
        inbox.orphaned(next);
        return undefined;
      case 'failed':
        inbox.forgetOrphan(readyName);
        await fail(w, next);
        return undefined;
      case 'ready':
      case undefined:
        return undefined;
    }
  });
  return results.filter((c): c is ClaimedFile => c !== undefined);
}
