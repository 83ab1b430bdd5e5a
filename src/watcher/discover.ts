/**
 * Discovery: finds `ready` files (filesystem events, the initial sweep, periodic rescans) and
 * queues them for a claim; keeps the orphans (sentinels without their data file) until their data
 * file comes or their grace period ends.
 */
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import { READY_SUFFIX } from '../constants.ts';
import { exists } from '../files.ts';
import { dataNameOf, newClaimId } from '../protocol/names.ts';
import type { OrphanedFile } from '../protocol/record.ts';
import { MAX_OPEN_CLAIMS, type WatchContext } from './context.ts';
import { fail, orphanReady } from './fail.ts';

/** The watcher's inbox: which sentinel names are where between `ready` and `claimed`. */
export interface Inbox {
  /** Ready sentinels waiting for a slot, in arrival order, with when each was found (epoch ms). */
  readonly queue: Map<string, number>;
  /** Sentinel names dequeued but not yet claimed (dedupes late events for the same drop). */
  readonly claiming: Set<string>;
  /**
   * Sentinels this watcher claimed whose move-out event has not come yet. Claiming renames the
   * sentinel away, and the directory reports that as an event for its name; a flood would
   * otherwise queue each name a second time, for a claim that finds nothing.
   */
  readonly claimedNames: Set<string>;
  readonly orphans: Map<string, OrphanedFile>;
  /** The queue hit `queueLimit`: what was dropped is found by the next rescan. */
  overflow: boolean;
  rescanning: Promise<void> | undefined;
}

export function newInbox(): Inbox {
  return { queue: new Map(), claiming: new Set(), claimedNames: new Set(), orphans: new Map(), overflow: false, rescanning: undefined };
}

/** Names the filesystem adapter reported: sentinels are queued, a late data file wakes its orphan. */
export function onNames(ctx: WatchContext, names: readonly string[]): void {
  if (ctx.life.stopping) return;
  const { inbox } = ctx;
  let found = false;
  for (const name of names) {
    if (name.endsWith(READY_SUFFIX)) {
      // Our own claim's event, unless the producer has already dropped the name again.
      if (inbox.claimedNames.delete(name) && !exists(join(ctx.dir, name))) continue;
      // A known orphan's sentinel is retried when its data file shows up (below) or by the
      // rescan; its own events include the one of being put back after a claim found no data,
      // which would otherwise claim it again at once, in a loop.
      if (!inbox.orphans.has(name)) found = enqueue(ctx, name) || found;
    } else if (inbox.orphans.has(name + READY_SUFFIX)) {
      // The data file arrived after its sentinel: try again now.
      found = enqueue(ctx, name + READY_SUFFIX) || found;
    }
  }
  if (found) ctx.stats.lastEventAt = new Date().toISOString();
}

/** Queues a sentinel name (state `ready`) unless it is already queued or being claimed. */
export function enqueue(ctx: WatchContext, readyName: string): boolean {
  const { inbox } = ctx;
  if (dataNameOf(readyName) === undefined) return false;
  if (inbox.queue.has(readyName) || inbox.claiming.has(readyName)) return false;
  if (inbox.queue.size >= ctx.options.queueLimit) {
    // Bounded memory: drop it for now; a rescan finds it again once the queue drains.
    inbox.overflow = true;
    return false;
  }
  inbox.queue.set(readyName, Date.now());
  ctx.stats.queued = inbox.queue.size;
  ctx.life.pumpSoon();
  return true;
}

/** Takes up to `count` names off the queue for a claim (ready → claiming). */
export function dequeue(ctx: WatchContext, count: number): string[] {
  const { inbox } = ctx;
  const names: string[] = [];
  for (const readyName of inbox.queue.keys()) {
    names.push(readyName);
    if (names.length >= count) break;
  }
  for (const readyName of names) {
    inbox.queue.delete(readyName);
    inbox.claiming.add(readyName);
  }
  ctx.stats.queued = inbox.queue.size;
  return names;
}

/** A task is over: names it did not claim may be queued again. */
export function released(ctx: WatchContext, readyNames: readonly string[]): void {
  for (const readyName of readyNames) ctx.inbox.claiming.delete(readyName);
}

/** The claim of `readyName` took both files: from here a new drop under the same name is a new file. */
export function claimedName(ctx: WatchContext, readyName: string): void {
  const { inbox } = ctx;
  inbox.orphans.delete(readyName);
  inbox.claiming.delete(readyName);
  if (inbox.claimedNames.size >= MAX_OPEN_CLAIMS * 8) inbox.claimedNames.clear(); // events that never came
  inbox.claimedNames.add(readyName);
}

/** A claim found no data file: the sentinel waits as an orphan (since it was first seen so). */
export function orphaned(ctx: WatchContext, orphan: OrphanedFile): void {
  if (!ctx.inbox.orphans.has(orphan.readyName)) ctx.inbox.orphans.set(orphan.readyName, orphan);
}

/** Lists the directory and queues every sentinel; reports orphans past their grace period. */
export function rescan(ctx: WatchContext): Promise<void> {
  if (ctx.life.stopping) return Promise.resolve();
  const { inbox } = ctx;
  inbox.rescanning ??= listDirectory(ctx).finally(() => {
    inbox.rescanning = undefined;
    ctx.life.nudge();
  });
  return inbox.rescanning;
}

async function listDirectory(ctx: WatchContext): Promise<void> {
  const { inbox } = ctx;
  ctx.stats.rescans++;
  inbox.overflow = false;
  // The listing tells which sentinels are there; events still due for our claims are noise.
  inbox.claimedNames.clear();
  let found = false;
  try {
    const dir = await opendir(ctx.dir, { bufferSize: 256 });
    for await (const entry of dir) {
      if (ctx.life.stopping) break;
      // Known orphans are re-tried by reportOrphans, once their data file is there.
      if (!entry.name.endsWith(READY_SUFFIX) || inbox.orphans.has(entry.name)) continue;
      found = enqueue(ctx, entry.name) || found;
      if (inbox.overflow) break; // the directory handle closes when the loop exits
    }
  } catch (error) {
    ctx.log.error('cannot list the watched directory', { dir: ctx.dir, error: String(error) });
  }
  if (found) ctx.stats.lastEventAt = new Date().toISOString();
  await reportOrphans(ctx);
}

/** Orphans: back to `ready` when their data file came, to `failed` once their grace period is over. */
async function reportOrphans(ctx: WatchContext): Promise<void> {
  const { inbox } = ctx;
  const now = Date.now();
  for (const [readyName, orphan] of inbox.orphans) {
    if (inbox.queue.has(readyName) || inbox.claiming.has(readyName)) continue;
    const dataName = dataNameOf(readyName)!;
    if (!exists(join(ctx.dir, readyName))) {
      inbox.orphans.delete(readyName);
      continue;
    }
    if (exists(join(ctx.dir, dataName))) {
      inbox.orphans.delete(readyName);
      enqueue(ctx, readyName);
      continue;
    }
    if (now - orphan.since < ctx.options.orphanGraceMs) continue;
    inbox.orphans.delete(readyName);
    const seconds = Math.round((now - orphan.since) / 1000);
    await fail(ctx, { state: 'failed', name: dataName, claimId: newClaimId(), extension: '', readyPath: join(ctx.dir, readyName), error: orphanReady(readyName, dataName, seconds) });
    ctx.stats.orphans++;
  }
}
