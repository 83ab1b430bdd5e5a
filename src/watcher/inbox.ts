/**
 * The watcher's inbox: which sentinel names are where between `ready` and `claimed` (queued,
 * being claimed, claimed by us with their move-out event still due, orphans), and the one rescan
 * at a time. Discovery (discover.ts) feeds it, the shell takes names off it for tasks, a claim
 * says how each ended (claim.ts); all through the methods below.
 */
import { dataNameOf } from '../protocol/names.ts';
import type { OrphanedFile } from '../protocol/record.ts';
import type { WatcherStats } from '../observe/stats.ts';
import { MAX_OPEN_CLAIMS } from './limits.ts';

export class Inbox {
  /** Ready sentinels waiting for a slot, in arrival order, with when each was found (epoch ms). */
  readonly #queue = new Map<string, number>();
  /** Sentinel names dequeued but not yet claimed (dedupes late events for the same drop). */
  readonly #claiming = new Set<string>();
  /**
   * Sentinels this watcher claimed whose move-out event has not come yet. Claiming renames the
   * sentinel away, and the directory reports that as an event for its name; a flood would
   * otherwise queue each name a second time, for a claim that finds nothing.
   */
  readonly #claimedNames = new Set<string>();
  readonly #orphans = new Map<string, OrphanedFile>();
  /** The queue hit `queueLimit`: what was dropped is found by the next rescan. */
  #overflow = false;
  #rescanning: Promise<void> | undefined;

  /**
   * `stats.queued` follows the queue's length. `onQueued`: a name was queued (the shell then
   * starts tasks once the events at hand are all in).
   */
  constructor(
    private readonly queueLimit: number,
    private readonly stats: Pick<WatcherStats, 'queued'>,
    private readonly onQueued: () => void,
    /** `order: 'name'`: names leave the queue in the order they sort, not the order they came in. */
    private readonly byName = false,
  ) {}

  /** Names waiting in the queue. */
  get size(): number {
    return this.#queue.size;
  }

  get overflow(): boolean {
    return this.#overflow;
  }

  /** The rescan running now, if any. */
  get rescanning(): Promise<void> | undefined {
    return this.#rescanning;
  }

  /** When the longest-waiting queued name was found (epoch ms), or undefined when none waits. */
  oldestQueuedAt(): number | undefined {
    const first = this.#queue.values().next();
    return first.done ? undefined : first.value;
  }

  /** Queued or being claimed: a new event for it changes nothing. */
  pending(readyName: string): boolean {
    return this.#queue.has(readyName) || this.#claiming.has(readyName);
  }

  /** Queues a sentinel name (state `ready`) unless it is already queued or being claimed. */
  enqueue(readyName: string): boolean {
    if (dataNameOf(readyName) === undefined) return false;
    return this.enqueueName(readyName);
  }

  /** Queues a name as it is: a sentinel's, or a marker folder's (`readyWhen: 'marker'`). */
  enqueueName(readyName: string): boolean {
    if (this.pending(readyName)) return false;
    if (this.#queue.size >= this.queueLimit) {
      // Bounded memory: drop it for now; a rescan finds it again once the queue drains.
      this.#overflow = true;
      return false;
    }
    this.#queue.set(readyName, Date.now());
    this.stats.queued = this.#queue.size;
    this.onQueued();
    return true;
  }

  /** Takes up to `count` names off the queue for a claim (ready → claiming). */
  dequeue(count: number): string[] {
    const names = this.byName ? this.#firstByName(count) : this.#firstArrived(count);
    for (const readyName of names) {
      this.#queue.delete(readyName);
      this.#claiming.add(readyName);
    }
    this.stats.queued = this.#queue.size;
    return names;
  }

  #firstArrived(count: number): string[] {
    const names: string[] = [];
    for (const readyName of this.#queue.keys()) {
      names.push(readyName);
      if (names.length >= count) break;
    }
    return names;
  }

  /** The `count` names that sort first (one at a time, the usual case: a scan, no sort). */
  #firstByName(count: number): string[] {
    if (count === 1) {
      let first: string | undefined;
      for (const readyName of this.#queue.keys()) if (first === undefined || readyName < first) first = readyName;
      return first === undefined ? [] : [first];
    }
    return [...this.#queue.keys()].sort().slice(0, count);
  }

  /**
   * Names a task took but gives back unclaimed (`order: 'name'`: an earlier file comes first): queued
   * again as they were, found now.
   */
  putBack(readyNames: readonly string[]): void {
    for (const readyName of readyNames) {
      this.#claiming.delete(readyName);
      this.enqueueName(readyName);
    }
  }

  /** A task is over: names it did not claim may be queued again. */
  released(readyNames: readonly string[]): void {
    for (const readyName of readyNames) this.#claiming.delete(readyName);
  }

  /** The claim of `readyName` took both files: from here a new drop under the same name is a new file. */
  claimed(readyName: string): void {
    this.#orphans.delete(readyName);
    this.#claiming.delete(readyName);
    if (this.#claimedNames.size >= MAX_OPEN_CLAIMS * 8) this.#claimedNames.clear(); // events that never came
    this.#claimedNames.add(readyName);
  }

  /**
   * An event for `readyName`: whether it is the move-out of our own claim (then forgotten: the
   * next event for the name is the producer's).
   */
  ownClaimEvent(readyName: string): boolean {
    return this.#claimedNames.delete(readyName);
  }

  /** A claim found no data file: the sentinel waits as an orphan (since it was first seen so). */
  orphaned(orphan: OrphanedFile): void {
    if (!this.#orphans.has(orphan.readyName)) this.#orphans.set(orphan.readyName, orphan);
  }

  isOrphan(readyName: string): boolean {
    return this.#orphans.has(readyName);
  }

  /** No longer an orphan: its data file came, its sentinel went, or it failed. */
  forgetOrphan(readyName: string): void {
    this.#orphans.delete(readyName);
  }

  /** The orphans, live: one forgotten meanwhile is not visited, one added meanwhile is. */
  orphans(): IterableIterator<[string, OrphanedFile]> {
    return this.#orphans.entries();
  }

  /** A listing begins: it tells which sentinels are there, so events still due for our claims are noise. */
  listing(): void {
    this.#overflow = false;
    this.#claimedNames.clear();
  }

  /** Runs `list` unless a rescan already runs (then that one's promise); `done` once it ended. */
  rescan(list: () => Promise<void>, done: () => void): Promise<void> {
    this.#rescanning ??= list().finally(() => {
      this.#rescanning = undefined;
      done();
    });
    return this.#rescanning;
  }

  /** On stop: nothing queued is claimed any more. */
  clear(): void {
    this.#queue.clear();
    this.stats.queued = 0;
  }
}
