/**
 * The lifecycle shell of one watched directory: start, stop, idleness, and scheduling tasks (a
 * file, or a group of small files, each from claim to settle) under the bound on parallelism.
 * The protocol itself is in protocol/states.ts; each of its steps in its own file beside this one.
 */
import { setImmediate } from 'node:timers';
import { join } from 'node:path';
import { FAILED_DIR } from '../constants.ts';
import type { ResolvedOptions } from '../options.ts';
import type { PluginRegistry } from '../plugins.ts';
import { tableLabel } from '../sql.ts';
import { emptyStats, type WatcherStats } from '../stats.ts';
import type { DbAdapter, FsAdapter, FsSubscription, TableName } from '../types.ts';
import { newTableKnowledge } from './attempt.ts';
import { claimAll, EarlyBegin } from './claim.ts';
import { batchLimit, type Life, newSharedState, type WatchContext } from './context.ts';
import { dequeue, newInbox, onNames, released, rescan } from './discover.ts';
import { afterTask, checkpoint, finalCheckpoint, newCheckpoints, stopCheckpoints } from './durability.ts';
import { finishAll } from './group.ts';
import { endLease, newLeaseState, heartbeatMs } from './lease.ts';
import { startUp } from './start-up.ts';
import { startTakeoverChecks } from './takeover.ts';
import { within } from '../within.ts';

/** What `stopWatching` returns. */
export interface WatchSummary {
  readonly directory: string;
  readonly table: string;
  readonly database: string;
  readonly startedAt: string;
  readonly stoppedAt: string | null;
  readonly stats: WatcherStats;
}

export interface WatcherDeps {
  readonly dir: string;
  readonly table: TableName;
  readonly db: DbAdapter;
  /** Close `db` when the watcher stops (it was created for this watcher). */
  readonly ownsDb: boolean;
  readonly fs: FsAdapter;
  readonly plugins: PluginRegistry;
  readonly options: ResolvedOptions;
  readonly onStopped: () => void;
}

export class WatcherHandle {
  readonly dir: string;
  readonly table: TableName;
  readonly stats: WatcherStats;
  readonly startedAt: string = new Date().toISOString();
  #stoppedAt: string | null = null;
  readonly #deps: WatcherDeps;
  readonly #ctx: WatchContext;
  #subscription: FsSubscription | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #takeover: ReturnType<typeof setInterval> | undefined;
  /** Tasks at once: 1 during the start-up sweep, then `maxConcurrent`. */
  #limit = 1;
  #idleWaiters: (() => void)[] = [];
  #pumpScheduled = false;
  #starting: Promise<void> | undefined;
  #stopped: Promise<WatchSummary> | undefined;
  #stoppedWaiters: (() => void)[] = [];

  constructor(deps: WatcherDeps) {
    this.#deps = deps;
    this.dir = deps.dir;
    this.table = deps.table;
    this.stats = emptyStats(deps.options.maxConcurrent);
    const lease = newLeaseState(deps.dir, tableLabel(deps.table), deps.options.leaseMs, deps.options.maxConcurrent);
    // Taken over by another process: stop at once, leaving the claims to it.
    lease.onFenced = () => void this.stop();
    const life: Life = {
      stopping: false,
      pool: undefined,
      wake: new AbortController(),
      tasks: new Set(),
      paused: false,
      pumpSoon: () => this.#pumpSoon(),
      nudge: () => {
        this.#pump();
        this.#notifyIdle();
      },
    };
    this.#ctx = {
      dir: deps.dir,
      table: deps.table,
      target: tableLabel(deps.table),
      db: deps.db,
      plugins: deps.plugins,
      options: deps.options,
      log: deps.options.logger,
      staging: join(lease.stagingRoot, lease.me.owner),
      lease,
      failedDir: join(deps.dir, FAILED_DIR),
      stats: this.stats,
      life,
      inbox: newInbox(),
      known: newTableKnowledge(),
      checkpoints: newCheckpoints(),
      ...newSharedState(),
    };
  }

  /** Resolves once the watcher stopped, whoever stopped it (it stops itself when taken over). */
  whenStopped(): Promise<void> {
    if (this.#stoppedAt !== null) return Promise.resolve();
    return new Promise((resolve) => this.#stoppedWaiters.push(resolve));
  }

  /** Stopped itself because another process took its files over (see lease.ts). */
  get fenced(): boolean {
    return this.#ctx.lease.fenced;
  }

  get stopping(): boolean {
    return this.#ctx.life.stopping;
  }

  /**
   * Opens the pool, finishes files an earlier run left claimed, subscribes to events, then sweeps
   * the directory once, one task (a file or a group) at a time, and resolves when that sweep's
   * files are done. Events arriving during the sweep are queued and deduped against it, so
   * nothing dropped in between is missed.
   */
  start(): Promise<void> {
    this.#starting ??= this.#start();
    return this.#starting;
  }

  /** Each step first looks whether a stop came meanwhile (see `stop`): then it ends there. */
  async #start(): Promise<void> {
    const ctx = this.#ctx;
    const { options, db, fs } = this.#deps;
    const { life } = ctx;
    if (!(await startUp(ctx))) return;
    this.#subscription = await fs.subscribe(
      this.dir,
      (names) => onNames(ctx, names),
      (error) => {
        this.stats.lostEvents++;
        ctx.log.warn('filesystem events failed; rescanning', { dir: this.dir, error: String(error) });
        void this.rescan();
      },
    );
    if (life.stopping) return;
    await this.rescan();
    await this.whenIdle();
    if (life.stopping) return;
    this.#limit = options.maxConcurrent;
    this.#pump();
    this.#timer = setInterval(() => void this.rescan(), options.rescanIntervalMs);
    this.#takeover = startTakeoverChecks(ctx, heartbeatMs(options.leaseMs));
    ctx.log.info('watching', { dir: this.dir, table: ctx.target, database: db.describe(), fs: fs.name, owner: ctx.lease.me.owner });
  }

  /** When the longest-waiting queued ready file was found (epoch ms), or undefined when none waits. */
  oldestQueuedAt(): number | undefined {
    const first = this.#ctx.inbox.queue.values().next();
    return first.done ? undefined : first.value;
  }

  /** The live processes watching this directory (this one too), from the lease table at the last heartbeat. */
  processes(): { owner: string; host: string; pid: number; holding: number; expiresAt: string; self: boolean }[] {
    const me = this.#ctx.lease.me.owner;
    return this.#ctx.lease.peers.map((r) => ({ owner: r.owner, host: r.host, pid: r.pid, holding: r.holding, expiresAt: r.expiresAt, self: r.owner === me }));
  }

  /** Files being ingested right now: name, size, bytes read so far and when the ingest began. */
  activeFiles(): { name: string; size: number; bytesRead: number; startedAt: number }[] {
    return [...this.#ctx.active].map(([file, startedAt]) => ({ name: file.name, size: file.size, bytesRead: Math.min(file.bytesRead, file.size), startedAt }));
  }

  /** Lists the directory and queues every sentinel; reports orphans past their grace period. */
  rescan(): Promise<void> {
    return rescan(this.#ctx);
  }

  /** Makes the commits so far durable and removes their staged files (see durability.ts). */
  checkpoint(): Promise<void> {
    return checkpoint(this.#ctx);
  }

  /** Resolves when nothing is queued or in flight. */
  whenIdle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #isIdle(): boolean {
    const { inbox, life, checkpoints } = this.#ctx;
    return (inbox.queue.size === 0 || life.stopping) && life.tasks.size === 0 && !inbox.overflow && !inbox.rescanning && !checkpoints.running;
  }

  #notifyIdle(): void {
    if (!this.#isIdle()) return;
    for (const resolve of this.#idleWaiters.splice(0)) resolve();
  }

  /**
   * Pumps once the events at hand have all been queued: the directory reports a burst of drops
   * as many events in one turn of the event loop, and claimed together they form groups instead
   * of each taking a task (and a transaction) of its own. The delay is a few microseconds.
   */
  #pumpSoon(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  /**
   * Starts tasks while slots are free. Each task takes a share of the queue (up to `batchFiles`):
   * a lone file goes at once, on its own; a backlog is split into groups across the free slots.
   */
  #pump(): void {
    const ctx = this.#ctx;
    const { inbox, life, known } = ctx;
    while (!life.stopping && !life.paused && life.tasks.size < this.#limit && inbox.queue.size > 0) {
      // Until the table exists, one file at a time: the first creates it, and files claimed
      // meanwhile would each go alone (see group.ts) instead of waiting to form groups.
      if (!known.exists && life.tasks.size > 0) break;
      const free = this.#limit - life.tasks.size;
      const names = dequeue(ctx, known.exists ? Math.min(batchLimit(ctx), Math.ceil(inbox.queue.size / free)) : 1);
      const task: Promise<void> = this.#task(names)
        .catch((error: unknown) => {
          ctx.log.error('unexpected error processing files; they stay where they are and are retried on the next rescan', { files: names.slice(0, 10), error: String(error) });
        })
        .finally(() => {
          released(ctx, names);
          life.tasks.delete(task);
          this.stats.inFlight = life.tasks.size;
          afterTask(ctx);
          this.#pump();
          this.#notifyIdle();
        });
      life.tasks.add(task);
      this.stats.inFlight = life.tasks.size;
    }
    if (inbox.overflow && inbox.queue.size <= ctx.options.queueLimit / 2 && !inbox.rescanning && !life.stopping) void this.rescan();
  }

  /**
   * One task: claims its drops, then ingests them. The BEGIN of the task's first transaction is
   * sent before the claims, so that its round trip (a millisecond or two when idle, tens under
   * load) runs while the files are being claimed rather than after. Only where that transaction
   * is the task's first use of the pool: with the table known (no schema lock first) and no
   * duplicate check against the ledger.
   */
  async #task(readyNames: readonly string[]): Promise<void> {
    const ctx = this.#ctx;
    const sentAt = performance.now();
    const early = new EarlyBegin(ctx.known.exists && !ctx.options.skipDuplicateContent ? ctx.life.pool?.begin?.() : undefined, sentAt);
    try {
      ctx.log.debug('claiming', { files: readyNames.length, first: readyNames[0], inFlight: ctx.life.tasks.size, queued: ctx.inbox.queue.size });
      const claimed = await claimAll(ctx, readyNames);
      ctx.log.debug('claimed', { files: claimed.length });
      for (const c of claimed) ctx.early.set(c.file, early);
      await finishAll(ctx, claimed);
    } finally {
      early.release();
    }
  }

  /**
   * Stops taking new files, lets in-flight ones finish (up to `stopTimeoutMs`; after that their
   * transactions are rolled back and they stay claimed for the next start), closes the pool.
   */
  stop(): Promise<WatchSummary> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<WatchSummary> {
    const ctx = this.#ctx;
    const { life } = ctx;
    life.stopping = true;
    life.wake.abort();
    // Stopped while starting (a signal during a long recovery or initial sweep): the start ends
    // at its next step (its sweep's tasks leave their files claimed), then the stop goes on.
    this.#notifyIdle();
    await this.#starting?.catch(() => {});
    if (this.#timer) clearInterval(this.#timer);
    clearInterval(this.#takeover);
    stopCheckpoints(ctx);
    ctx.inbox.queue.clear();
    this.stats.queued = 0;
    await this.#subscription?.close().catch(() => {});
    const drained = Promise.allSettled([...life.tasks]);
    const timedOut = (await within(drained, this.#deps.options.stopTimeoutMs)) === undefined;
    if (timedOut) ctx.log.warn('stop timeout: rolling back in-flight files; they stay claimed for the next start', { inFlight: life.tasks.size });
    else if (!ctx.lease.fenced) await finalCheckpoint(ctx);
    await endLease(ctx, !timedOut);
    await life.pool?.close();
    await drained;
    await ctx.inbox.rescanning;
    if (this.#deps.ownsDb) await this.#deps.db.close();
    this.#stoppedAt = new Date().toISOString();
    this.#deps.onStopped();
    for (const resolve of this.#stoppedWaiters.splice(0)) resolve();
    this.#notifyIdle();
    ctx.log.info('stopped', { dir: this.dir, ...this.stats, lastError: this.stats.lastError?.message, ingestSeconds: undefined });
    return this.summary();
  }

  summary(): WatchSummary {
    return {
      directory: this.dir,
      table: tableLabel(this.table),
      database: this.#deps.db.describe(),
      startedAt: this.startedAt,
      stoppedAt: this.#stoppedAt,
      stats: { ...this.stats },
    };
  }
}
