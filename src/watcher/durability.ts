/**
 * Durability: `committed → settled`. A committed file's staged copy goes once its commit is
 * durable: at once on a database whose commits are (PostgreSQL), else after the next checkpoint
 * (Hyper). A server restart before the checkpoint sends the files it may have lost back to the
 * ledger check (recover.ts).
 */
import { READY_SUFFIX } from '../constants.ts';
import { removeIfPresent } from '../files.ts';
import type { CommittedFile, SettledFile } from '../protocol/record.ts';
import { archiveStaged } from './archive.ts';
import { epochOf, warm, type WatchContext } from './context.ts';
import { recoverClaims } from './recover.ts';
import { settleRejected } from './rejected.ts';

/** Commits waiting for a checkpoint, and when the next one runs. */
export interface Checkpoints {
  /**
   * Staged files whose rows are committed but not yet durable (see `DbCapabilities.durableCommit`):
   * removed after the next checkpoint. Until then a crash re-ingests them only if the ledger, as it
   * was last written to disk, does not list them.
   */
  unsettled: CommittedFile[];
  timer: ReturnType<typeof setTimeout> | undefined;
  running: Promise<void> | undefined;
  /** `checkpointDelayMs` has passed: the checkpoint runs as soon as the watcher is next idle. */
  due: boolean;
}

export function newCheckpoints(): Checkpoints {
  return { unsettled: [], timer: undefined, running: undefined, due: false };
}

/** `committed → settled` now, or once a checkpoint made it durable (then `undefined` for now). */
export function settle(ctx: WatchContext, committed: CommittedFile): SettledFile | undefined {
  const { db, options, checkpoints } = ctx;
  if (db.capabilities.durableCommit || !db.checkpoint) return settleStaged(ctx, committed, mayHaveRejected(ctx, committed));
  checkpoints.unsettled.push(committed);
  if (ctx.life.stopping) return undefined; // the final checkpoint of stop() takes it
  if (checkpoints.unsettled.length >= options.checkpointEvery) void checkpoint(ctx);
  else checkpoints.timer ??= setTimeout(() => checkpointSoon(ctx), options.checkpointDelayMs);
  return undefined;
}

/**
 * A checkpoint holds new files back and closes the connections, and hyperd then loads the
 * database again for the next one: tens of milliseconds. Run at a random moment, it often
 * lands on the next file of a steady trickle; run when the last file in flight has just
 * finished, it is over before the next one usually arrives. When that moment does not come
 * (no file at all, or a flood that never pauses), it runs anyway after another
 * `checkpointDelayMs`.
 */
function checkpointSoon(ctx: WatchContext): void {
  ctx.checkpoints.due = true;
  ctx.checkpoints.timer = setTimeout(() => void checkpoint(ctx), ctx.options.checkpointDelayMs);
}

/** A task ended: the moment for a due checkpoint when nothing else is running or waiting. */
export function afterTask(ctx: WatchContext): void {
  if (ctx.checkpoints.due && ctx.life.tasks.size === 0 && ctx.inbox.queue.size === 0 && !ctx.life.stopping) void checkpoint(ctx);
}

/**
 * Makes the commits so far durable and removes their staged files. Dispatch pauses and the files
 * in flight finish first, since the database must be unloaded with none of our work open.
 */
export function checkpoint(ctx: WatchContext): Promise<void> {
  const { checkpoints } = ctx;
  checkpoints.running ??= runCheckpoint(ctx).finally(() => {
    checkpoints.running = undefined;
    ctx.life.paused = false;
    ctx.life.nudge();
  });
  return checkpoints.running;
}

/** On stop: make what was committed durable, so nothing is left in staging. */
export async function finalCheckpoint(ctx: WatchContext): Promise<void> {
  await ctx.checkpoints.running;
  // Files re-ingested after a restart join the list again: settle until it is empty (a few
  // rounds at most; what a failing database leaves here is finished by the next start).
  for (let round = 0; round < 5 && ctx.checkpoints.unsettled.length > 0; round++) await runCheckpoint(ctx);
}

export function stopCheckpoints(ctx: WatchContext): void {
  clearTimeout(ctx.checkpoints.timer);
}

async function runCheckpoint(ctx: WatchContext): Promise<void> {
  const { checkpoints, life } = ctx;
  clearTimeout(checkpoints.timer);
  checkpoints.timer = undefined;
  checkpoints.due = false;
  life.paused = true;
  // Tasks never await a checkpoint (they only schedule one), so waiting for them cannot deadlock.
  while (life.tasks.size > 0) await Promise.allSettled([...life.tasks]);
  const batch = checkpoints.unsettled;
  if (batch.length === 0) return;
  checkpoints.unsettled = [];
  try {
    await ctx.db.checkpoint!();
    // The checkpoint closed our connections: open them again before the next file needs one.
    if (!life.stopping) void warm(ctx);
  } catch (error) {
    // Not durable yet: keep the files and try again later. A crash meanwhile re-ingests only
    // what the ledger on disk does not list.
    checkpoints.unsettled.unshift(...batch);
    ctx.log.warn('checkpoint failed; committed files are kept until the next one', { files: batch.length, error: String(error) });
    if (!life.stopping) checkpoints.timer ??= setTimeout(() => void checkpoint(ctx), ctx.options.retryMaxMs);
    return;
  }
  ctx.stats.checkpoints++;
  const epoch = epochOf(ctx);
  const safe = batch.filter((u) => u.epoch === epoch);
  ctx.log.debug('checkpoint', { files: batch.length, durable: safe.length, epoch });
  for (const u of safe) settleStaged(ctx, u, mayHaveRejected(ctx, u));
  const doubtful = batch.filter((u) => u.epoch !== epoch);
  if (doubtful.length > 0) {
    // The server restarted after these commits: what it had not written out is gone. The ledger
    // now on disk says which; those files are ingested again.
    ctx.log.warn('the database restarted before a checkpoint; re-checking committed files against the ledger', { files: doubtful.length });
    try {
      await recoverClaims(
        ctx,
        doubtful.map((u) => ({ claimId: u.claimId, names: [u.name, u.name + READY_SUFFIX], counted: u })),
      );
    } catch (error) {
      // The database is away again: keep them for the next checkpoint, marked as doubtful.
      checkpoints.unsettled.push(...doubtful.map((u) => ({ ...u, epoch: -1 })));
      ctx.log.warn('could not re-check files against the ledger yet', { files: doubtful.length, error: String(error) });
    }
  }
}

/** Rows were rejected (`onBadRows: 'skip'`), or may have been (a commit found in the ledger). */
function mayHaveRejected(ctx: WatchContext, committed: CommittedFile): boolean {
  return committed.rejected === undefined ? ctx.options.onBadRows === 'skip' && !committed.duplicate : committed.rejected > 0;
}

/**
 * A durable commit leaves staging: its rejected rows (`rejectedFile`) into failed/ first; if they
 * cannot move, the claim stays for the next start's recovery.
 */
export function settleStaged(ctx: WatchContext, committed: { readonly stagedPath: string; readonly name: string; readonly claimId: string }, rejectedFile: boolean): SettledFile | undefined {
  if (rejectedFile && !settleRejected(ctx, committed)) return undefined;
  return removeStaged(ctx, committed);
}

/**
 * Sentinel first, then data: a sentinel alone in staging then always means a claim that was
 * interrupted before its data file was taken (see recover.ts). Moved to the archive instead with
 * `onSuccess: 'archive'`.
 */
export function removeStaged(ctx: WatchContext, committed: { readonly stagedPath: string; readonly name: string; readonly claimId: string }): SettledFile {
  if (ctx.options.onSuccess === 'archive') return archiveStaged(ctx, committed);
  removeIfPresent(committed.stagedPath + READY_SUFFIX);
  removeIfPresent(committed.stagedPath);
  return { state: 'settled', name: committed.name, claimId: committed.claimId };
}
