/**
 * The scheduling of one watcher's tasks (a file, or a group of small files, each from claim to
 * settle) under the bound on parallelism, and its idleness. Apart from the lifecycle shell
 * (handle.ts), which only widens the bound after the start-up sweep, pumps when it starts and
 * waits for idleness; what a task does is claim.ts and group.ts.
 */
import { setImmediate } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { claimAll } from './claim.ts';
import { EarlyBegin } from './early.ts';
import { batchLimit } from './env.ts';
import { finishAll } from './group.ts';
import { EARLIER_POLL_MS, earlierThan } from './name-order.ts';
import { claimAndFinishUnits } from './unit-finish.ts';
import type { Watch } from './watch.ts';

export class TaskPump {
  /** The watch is built after the pump (its parts call back into it), hence a getter. */
  readonly #watch: () => Watch;
  readonly #rescan: () => Promise<void>;
  /** Tasks at once: 1 during the start-up sweep, then `maxConcurrent`. */
  #limit = 1;
  #idleWaiters: (() => void)[] = [];
  #pumpScheduled = false;

  constructor(watch: () => Watch, rescan: () => Promise<void>) {
    this.#watch = watch;
    this.#rescan = rescan;
  }

  /** From now on, up to `limit` tasks at once (after the start-up sweep: `maxConcurrent`). */
  widen(limit: number): void {
    this.#limit = limit;
  }

  /** Resolves when nothing is queued or in flight. */
  whenIdle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #isIdle(): boolean {
    const { inbox, life, checkpoints } = this.#watch();
    return (inbox.size === 0 || life.stopping) && life.running === 0 && !inbox.overflow && !inbox.rescanning && !checkpoints.running;
  }

  notifyIdle(): void {
    if (!this.#isIdle()) return;
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /**
   * Pumps once the events at hand have all been queued: the directory reports a burst of drops
   * as many events in one turn of the event loop, and claimed together they form groups instead
   * of each taking a task (and a transaction) of its own. The delay is a few microseconds.
   */
  pumpSoon(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.pump();
    });
  }

  /**
   * Starts tasks while slots are free. Each task takes a share of the queue (up to `batchFiles`):
   * a lone file goes at once, on its own; a backlog is split into groups across the free slots.
   */
  pump(): void {
    const { inbox, life, known, checkpoints, env } = this.#watch();
    while (!life.stopping && !checkpoints.paused && life.running < this.#limit && inbox.size > 0) {
      // Until the table exists, one file at a time: the first creates it, and files claimed
      // meanwhile would each go alone (see group.ts) instead of waiting to form groups.
      if (!known.exists && life.running > 0) break;
      const free = this.#limit - life.running;
      const names = inbox.dequeue(known.exists ? Math.min(batchLimit(env), Math.ceil(inbox.size / free)) : 1);
      const task: Promise<void> = this.#task(names)
        .catch((error: unknown) => {
          env.log.error('unexpected error processing files; they stay where they are and are retried on the next rescan', {
            files: names.slice(0, 10),
            error: String(error),
          });
        })
        .finally(() => {
          inbox.released(names);
          life.remove(task);
          env.stats.inFlight = life.running;
          checkpoints.afterTask(inbox.size);
          this.pump();
          this.notifyIdle();
        });
      life.add(task);
      env.stats.inFlight = life.running;
    }
    if (inbox.overflow && inbox.size <= env.options.queueLimit / 2 && !inbox.rescanning && !life.stopping) void this.#rescan();
  }

  /**
   * One task: claims its drops, then ingests them. The BEGIN of the task's first transaction is
   * sent before the claims, so that its round trip (a millisecond or two when idle, tens under
   * load) runs while the files are being claimed rather than after. Only where that transaction
   * is the task's first use of the pool: with the table known (no schema lock first) and no
   * duplicate check against the ledger.
   */
  async #task(readyNames: readonly string[]): Promise<void> {
    const w = this.#watch();
    const { env, known, life, inbox } = w;
    // readyWhen 'marker': the names are folders, each one claim and one transaction of its own;
    // no early BEGIN, which would hold a pooled connection that no folder's transaction uses.
    if (env.options.readyWhen === 'marker') return claimAndFinishUnits(w, readyNames);
    // Before the early BEGIN: the file's transaction must begin after the earlier file's commit.
    if (env.options.order === 'name' && !(await this.#afterEarlier(readyNames))) return;
    const sentAt = performance.now();
    const early = new EarlyBegin(known.exists && !env.options.skipDuplicateContent ? w.pool.ifOpen?.begin?.() : undefined, sentAt);
    try {
      env.log.debug('claiming', { files: readyNames.length, first: readyNames[0], inFlight: life.running, queued: inbox.size });
      const claimed = await claimAll(w, readyNames);
      env.log.debug('claimed', { files: claimed.length });
      await finishAll(w, claimed, early);
    } finally {
      early.release();
    }
  }

  /**
   * `order: 'name'` (one name per task): true once no other process's file with an earlier name
   * is ready or uncommitted (name-order.ts); false when the name went back to the queue, for an
   * earlier ready one to go first, or because the watcher stops.
   */
  async #afterEarlier(readyNames: readonly string[]): Promise<boolean> {
    const w = this.#watch();
    const [name] = readyNames;
    if (name === undefined) return true;
    let said = false;
    while (!w.life.stopping) {
      const earlier = await earlierThan(w, name);
      if (earlier === undefined) return true;
      if ('ready' in earlier && w.env.options.readyWhen === 'sentinel') {
        // Queued here (or already): the queue gives them out in name order, this one after them.
        let queued = false;
        for (const ready of earlier.ready) queued = w.inbox.enqueue(ready) || w.inbox.pending(ready) || queued;
        if (queued) {
          w.inbox.putBack(readyNames);
          return false;
        }
      }
      if (!said) {
        w.env.log.debug('order name: waiting for an earlier file', {
          file: name,
          earlier: 'ready' in earlier ? earlier.ready[0] : earlier.staged,
          why: 'ready' in earlier ? 'ready, not yet claimed' : 'claimed, not yet committed',
        });
        said = true;
      }
      await sleep(EARLIER_POLL_MS);
    }
    return false;
  }
}
