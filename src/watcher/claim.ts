/**
 * The claim: `ready → claiming → claimed`, or back to the inbox as an orphan when the data file is
 * not there, or `failed` when it is not a regular file. Also the task's early BEGIN, sent while
 * its files are being claimed.
 */
import { join } from 'node:path';
import { READY_SUFFIX } from '../constants.ts';
import { claimFile, exists, type OpenedFile, removeIfPresent, renameIfPresent } from '../files.ts';
import { dataNameOf, newClaimId, stagedName } from '../protocol/names.ts';
import type { ClaimedFile, ClaimingFile, FailedFile, OrphanedFile, ReadyFile } from '../protocol/record.ts';
import type { BegunTransaction } from '../types.ts';
import { mapLimit } from '../map-limit.ts';
import type { WatchContext } from './context.ts';
import { claimedName, orphaned } from './discover.ts';
import { CLAIM_PARALLEL } from './duplicates.ts';
import { fail, notRegularFile } from './fail.ts';

/**
 * A task's early BEGIN (see `task.ts`): the first transaction of its files takes it, or it is
 * released unused when the task ends. `sentAt`: when BEGIN went out (`performance.now()` just
 * before), which tells the fence slots safe to reuse (see `takeSlot`).
 */
export class EarlyBegin {
  constructor(
    private begun: BegunTransaction | undefined,
    readonly sentAt: number,
  ) {}

  take(): BegunTransaction | undefined {
    const begun = this.begun;
    this.begun = undefined;
    return begun;
  }

  release(): void {
    void this.take()?.release();
  }
}

/** A transaction whose BEGIN was sent early, and when. */
export interface Early {
  readonly begun: BegunTransaction;
  readonly sentAt: number;
}

/**
 * The early BEGIN of `file`'s task for a transaction about to start, if still unused; released
 * instead when that transaction cannot take it (it must wait on the pool for something first).
 */
export function takeEarly(ctx: WatchContext, file: OpenedFile, usable: boolean): Early | undefined {
  const early = ctx.early.get(file);
  if (!usable) {
    early?.release();
    return undefined;
  }
  const begun = early?.take();
  return begun ? { begun, sentAt: early!.sentAt } : undefined;
}

/** What a claim leads to; `undefined`: someone else took the sentinel first (nothing to do). */
export type ClaimResult = ClaimedFile | OrphanedFile | FailedFile | ReadyFile | undefined;

/**
 * Claims one drop. The sentinel is taken first, by rename into staging: whoever moves it owns
 * the drop, so a late event for a sentinel already taken (or a data file swapped in after it)
 * is never processed twice. Then the data file is claimed; if it is not there (yet), the
 * sentinel goes back to the inbox and waits as an orphan.
 */
export function claim(ctx: WatchContext, ready: ReadyFile): ClaimResult {
  if (ctx.life.stopping) return undefined;
  const dataName = dataNameOf(ready.readyName);
  if (!dataName) return undefined;
  const claiming: ClaimingFile = { state: 'claiming', readyName: ready.readyName, dataName, claimId: newClaimId() };
  const match = ctx.plugins.match(dataName);
  const extension = match?.extension ?? '';
  const staged = join(ctx.staging, stagedName(claiming.claimId, dataName));
  const readyPath = join(ctx.dir, ready.readyName);
  if (!renameIfPresent(readyPath, staged + READY_SUFFIX)) return undefined;
  const claim = claimFile(ctx.dir, dataName, staged, { claimId: claiming.claimId, extension });
  switch (claim.status) {
    case 'missing':
      unclaimSentinel(staged + READY_SUFFIX, readyPath);
      return { state: 'orphaned', readyName: ready.readyName, since: Date.now() };
    case 'error':
      unclaimSentinel(staged + READY_SUFFIX, readyPath);
      ctx.log.warn('cannot claim file; retried on the next rescan', { file: dataName, error: String(claim.error) });
      return ready;
    case 'unsafe':
      return { state: 'failed', name: dataName, claimId: claiming.claimId, extension, dataPath: claim.path, readyPath: staged + READY_SUFFIX, error: notRegularFile(dataName, claim.reason) };
    case 'claimed':
      return { state: 'claimed', file: claim.file, match };
  }
}

/** Puts a sentinel back in the inbox, unless the producer already made a new one. */
export function unclaimSentinel(stagedReady: string, readyPath: string): void {
  if (exists(readyPath)) removeIfPresent(stagedReady);
  else renameIfPresent(stagedReady, readyPath);
}

/**
 * Claims a task's drops one by one (each is its own race with producers), a few at a time, and
 * routes what is not claimed: orphans back to the inbox, unsafe entries to failed/.
 */
export async function claimAll(ctx: WatchContext, readyNames: readonly string[]): Promise<ClaimedFile[]> {
  const results = await mapLimit(readyNames, CLAIM_PARALLEL, async (readyName): Promise<ClaimedFile | undefined> => {
    const next = claim(ctx, { state: 'ready', readyName });
    switch (next?.state) {
      case 'claimed':
        claimedName(ctx, readyName);
        return next;
      case 'orphaned':
        orphaned(ctx, next);
        return undefined;
      case 'failed':
        ctx.inbox.orphans.delete(readyName);
        await fail(ctx, next);
        return undefined;
      case 'ready':
      case undefined:
        return undefined;
    }
  });
  return results.filter((c): c is ClaimedFile => c !== undefined);
}
