/**
 * The lifecycle shell of one watched directory: start, stop, idleness, and scheduling tasks (a
 * file, or a group of small files, each from claim to settle) under the bound on parallelism.
 * The protocol itself is in protocol/states.ts; each of its steps in its own file beside this one.
 */
import { setImmediate } from 'node:timers';
import { ContentGate } from './content-gate.ts';
import { Mutex } from '../util/mutex.ts';
import type { ResolvedOptions } from '../options.ts';
import type { PluginRegistry } from '../plugins.ts';
import { tableLabel } from '../columns/sql.ts';
import { emptyStats, type WatcherStats } from '../observe/stats.ts';
import type { DbAdapter, FsAdapter, FsSubscription, TableName } from '../types.ts';
import { startLedgerRetention } from './retention.ts';
import { within } from '../util/within.ts';
import { ActiveFiles } from './active.ts';
import { claimAll } from './claim.ts';
import { claimAndFinishUnits } from './unit-finish.ts';
import { Reaper } from './dead-sessions.ts';
import { onNames, rescan } from './discover.ts';
import { takeDue } from './discover-stable.ts';
import { Checkpoints } from './durability.ts';
import { EarlyBegin } from './early.ts';
import { batchLimit, watchEnv } from './env.ts';
import { finishAll } from './group.ts';
import { Inbox } from './inbox.ts';
import { endLease, heartbeatMs, newLeaseState } from './lease.ts';
import { Lifecycle } from './life.ts';
import { WatcherPool } from './pool.ts';
import { recoverClaims } from './recover.ts';
import { Settling } from './settling.ts';
import { Subfolders } from './subfolders.ts';
import { archiveRoot } from './archive.ts';
import { startUp } from './start-up.ts';
import { TableKnowledge } from './table-knowledge.ts';
import { startTakeoverChecks } from './takeover.ts';
import type { Watch } from './watch.ts';

/** What `stopWatching` returns. */
export interface WatchSummary {
  readonly directory: string;
  readonly table: string;
  readonly database: string;
  /** The database's file format version (Hyper), once known: it decides which Tableau releases open it. */
  readonly databaseVersion?: number;
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
  readonly #w: Watch;
  #subscription: FsSubscription | undefined;
  readonly #onFsError: (error: unknown) => void;
  #timer: ReturnType<typeof setInterval> | undefined;
  #takeover: ReturnType<typeof setInterval> | undefined;
  #retention: ReturnType<typeof setInterval> | undefined;
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
    const { options } = deps;
    // Taken over by another process: stop at once, leaving the claims to it.
    const lease = newLeaseState(deps.dir, tableLabel(deps.table), options.leaseMs, options.maxConcurrent, () => void this.stop());
    const env = watchEnv({ ...deps, stats: this.stats, me: lease.me, stagingRoot: lease.stagingRoot });
    const life = new Lifecycle(() => {
      this.#pump();
      this.#notifyIdle();
    });
    const pool = new WatcherPool();
    const onFsError = (error: unknown): void => {
      this.stats.lostEvents++;
      env.log.warn('filesystem events failed; rescanning', { dir: this.dir, error: String(error) });
      void this.rescan();
    };
    const folders = new Subfolders(
      deps.dir,
      archiveRoot(deps.dir, options.archiveDir),
      deps.fs,
      (names) => onNames(this.#w, names),
      onFsError,
      env.log,
    );
    this.#onFsError = onFsError;
    this.#w = {
      env,
      life,
      pool,
      inbox: new Inbox(options.queueLimit, this.stats, () => this.#pumpSoon(), options.order === 'name'),
      folders,
      settling: new Settling(options.stableMs, options.queueLimit, this.stats, () => takeDue(this.#w)),
      known: new TableKnowledge(deps.table),
      checkpoints: new Checkpoints(env, life, pool, (claims) => recoverClaims(this.#w, claims)),
      lease,
      reaper: new Reaper(),
      active: new ActiveFiles(),
      contentGate: new ContentGate(),
      failLock: new Mutex(),
    };
  }

  /** Resolves once the watcher stopped, whoever stopped it (it stops itself when taken over). */
  whenStopped(): Promise<void> {
    if (this.#stoppedAt !== null) return Promise.resolve();
    return new Promise((resolve) => this.#stoppedWaiters.push(resolve));
  }

  /** Stopped itself because another process took its files over (see lease.ts). */
  get fenced(): boolean {
    return this.#w.lease.fenced;
  }

  get stopping(): boolean {
    return this.#w.life.stopping;
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
    const w = this.#w;
    const { options, db, fs } = this.#deps;
    const { life, env } = w;
    if (!(await startUp(w))) return;
    this.#subscription = await fs.subscribe(this.dir, (names) => onNames(w, names), this.#onFsError);
    if (life.stopping) return;
    await this.rescan();
    await this.whenIdle();
    if (life.stopping) return;
    this.#limit = options.maxConcurrent;
    this.#pump();
    this.#timer = setInterval(() => void this.rescan(), options.rescanIntervalMs);
    this.#takeover = startTakeoverChecks(w, heartbeatMs(options.leaseMs));
    this.#retention = startLedgerRetention(w);
    env.log.info('watching', {
      dir: this.dir,
      table: env.target,
      database: db.describe(),
      databaseVersion: db.databaseVersion?.(),
      fs: fs.name,
      owner: env.me.owner,
    });
  }

  /** When the longest-waiting queued ready file was found (epoch ms), or undefined when none waits. */
  oldestQueuedAt(): number | undefined {
    return this.#w.inbox.oldestQueuedAt();
  }

  /** The live processes watching this directory (this one too), from the lease table at the last heartbeat. */
  processes(): { owner: string; host: string; pid: number; holding: number; expiresAt: string; self: boolean }[] {
    const me = this.#w.env.me.owner;
    return this.#w.lease.peers.map((r) => ({
      owner: r.owner,
      host: r.host,
      pid: r.pid,
      holding: r.holding,
      expiresAt: r.expiresAt,
      self: r.owner === me,
    }));
  }

  /** Files being ingested right now: name, size, bytes read so far and when the ingest began. */
  activeFiles(): { name: string; size: number; bytesRead: number; startedAt: number }[] {
    return this.#w.active.list();
  }

  /** Lists the directory and queues every sentinel; reports orphans past their grace period. */
  rescan(): Promise<void> {
    return rescan(this.#w);
  }

  /** Makes the commits so far durable and removes their staged files (see durability.ts). */
  checkpoint(): Promise<void> {
    return this.#w.checkpoints.checkpoint();
  }

  /** Resolves when nothing is queued or in flight. */
  whenIdle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #isIdle(): boolean {
    const { inbox, life, checkpoints } = this.#w;
    return (inbox.size === 0 || life.stopping) && life.running === 0 && !inbox.overflow && !inbox.rescanning && !checkpoints.running;
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
    const { inbox, life, known, checkpoints, env } = this.#w;
    while (!life.stopping && !checkpoints.paused && life.running < this.#limit && inbox.size > 0) {
      // Until the table exists, one file at a time: the first creates it, and files claimed
      // meanwhile would each go alone (see group.ts) instead of waiting to form groups.
      if (!known.exists && life.running > 0) break;
      const free = this.#limit - life.running;
      const names = inbox.dequeue(known.exists ? Math.min(batchLimit(env.options), Math.ceil(inbox.size / free)) : 1);
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
          this.stats.inFlight = life.running;
          checkpoints.afterTask(inbox.size);
          this.#pump();
          this.#notifyIdle();
        });
      life.add(task);
      this.stats.inFlight = life.running;
    }
    if (inbox.overflow && inbox.size <= env.options.queueLimit / 2 && !inbox.rescanning && !life.stopping) void this.rescan();
  }

  /**
   * One task: claims its drops, then ingests them. The BEGIN of the task's first transaction is
   * sent before the claims, so that its round trip (a millisecond or two when idle, tens under
   * load) runs while the files are being claimed rather than after. Only where that transaction
   * is the task's first use of the pool: with the table known (no schema lock first) and no
   * duplicate check against the ledger.
   */
  async #task(readyNames: readonly string[]): Promise<void> {
    const w = this.#w;
    const { env, known, life, inbox } = w;
    // readyWhen 'marker': the names are folders, each one claim and one transaction of its own;
    // no early BEGIN, which would hold a pooled connection that no folder's transaction uses.
    if (env.options.readyWhen === 'marker') return claimAndFinishUnits(w, readyNames);
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
   * Stops taking new files, lets in-flight ones finish (up to `stopTimeoutMs`; after that their
   * transactions are rolled back and they stay claimed for the next start), closes the pool.
   */
  stop(): Promise<WatchSummary> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<WatchSummary> {
    const w = this.#w;
    const { life, env } = w;
    life.stop();
    // Stopped while starting (a signal during a long recovery or initial sweep): the start ends
    // at its next step (its sweep's tasks leave their files claimed), then the stop goes on.
    this.#notifyIdle();
    await this.#starting?.catch(() => {});
    if (this.#timer) clearInterval(this.#timer);
    clearInterval(this.#takeover);
    clearInterval(this.#retention);
    w.checkpoints.stop();
    w.settling.stop();
    w.inbox.clear();
    await this.#subscription?.close().catch(() => {});
    await w.folders.close();
    const drained = Promise.allSettled(life.tasks());
    const timedOut = (await within(drained, this.#deps.options.stopTimeoutMs)) === undefined;
    if (timedOut)
      env.log.warn('stop timeout: rolling back in-flight files; they stay claimed for the next start', { inFlight: life.running });
    else if (!w.lease.fenced) await w.checkpoints.final();
    w.reaper.stop();
    await endLease(w, !timedOut);
    await w.pool.close();
    await drained;
    await w.inbox.rescanning;
    if (this.#deps.ownsDb) await this.#deps.db.close();
    this.#stoppedAt = new Date().toISOString();
    this.#deps.onStopped();
    for (const resolve of this.#stoppedWaiters.splice(0)) resolve();
    this.#notifyIdle();
    env.log.info('stopped', { dir: this.dir, ...this.stats, lastError: this.stats.lastError?.message, ingestSeconds: undefined });
    return this.summary();
  }

  summary(): WatchSummary {
    const version = this.#deps.db.databaseVersion?.();
    return {
      directory: this.dir,
      table: tableLabel(this.table),
      database: this.#deps.db.describe(),
      ...(version !== undefined ? { databaseVersion: version } : {}),
      startedAt: this.startedAt,
      stoppedAt: this.#stoppedAt,
      stats: { ...this.stats },
    };
  }
}
