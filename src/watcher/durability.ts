/**
 * Durability: `committed → settled`. A committed file's staged copy goes once its commit is
 * durable: at once on a database whose commits are (PostgreSQL), else after the next checkpoint
 * (Hyper). A server restart before the checkpoint sends the files it may have lost back to the
 * ledger check (recover.ts).
 */
import { rmSync } from 'node:fs';
import { READY_SUFFIX } from '../constants.ts';
import { removeIfPresent } from '../protocol/files.ts';
import type { ResolvedOptions } from '../options.ts';
import type { CommittedFile, SettledFile } from '../protocol/record.ts';
import { archiveStaged, archiveUnit } from './archive.ts';
import { epochOf, type WatchEnv } from './env.ts';
import type { Lifecycle } from './life.ts';
import type { WatcherPool } from './pool.ts';
import type { StagedClaim } from './recover.ts';
import { settleRejected } from './rejected.ts';

/** Commits waiting for a checkpoint, when the next one runs, and the pause of dispatch while it does. */
export class Checkpoints {
  /**
   * Staged files whose rows are committed but not yet durable (see `DbCapabilities.durableCommit`):
   * removed after the next checkpoint. Until then a crash re-ingests them only if the ledger, as it
   * was last written to disk, does not list them.
   */
  #unsettled: CommittedFile[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #running: Promise<void> | undefined;
  /** `checkpointDelayMs` has passed: the checkpoint runs as soon as the watcher is next idle. */
  #due = false;
  /** Dispatch is held back while a checkpoint needs the database to itself. */
  #paused = false;

  /**
   * `recheck` settles, by the ledger, commits a server restart may have lost (recovery's
   * `recoverClaims`): handed in by the shell, since recovery builds on this step and not the
   * other way round.
   */
  constructor(
    private readonly env: WatchEnv,
    private readonly life: Lifecycle,
    private readonly pool: WatcherPool,
    private readonly recheck: (claims: readonly StagedClaim[]) => Promise<void>,
  ) {}

  /** Dispatch waits: a checkpoint needs the database to itself. */
  get paused(): boolean {
    return this.#paused;
  }

  /** The checkpoint running now, if any. */
  get running(): Promise<void> | undefined {
    return this.#running;
  }

  /** Committed files still staged, waiting for a checkpoint. */
  get unsettledCount(): number {
    return this.#unsettled.length;
  }

  /** `committed → settled` now, or once a checkpoint made it durable (then `undefined` for now). */
  settle(committed: CommittedFile): SettledFile | undefined {
    const { db, options } = this.env;
    if (db.capabilities.durableCommit || !db.checkpoint) return settleStaged(this.env, committed, mayHaveRejected(options, committed));
    this.#unsettled.push(committed);
    if (this.life.stopping) return undefined; // the final checkpoint of stop() takes it
    if (this.#unsettled.length >= options.checkpointEvery) void this.checkpoint();
    else this.#timer ??= setTimeout(() => this.#soon(), options.checkpointDelayMs);
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
  #soon(): void {
    this.#due = true;
    this.#timer = setTimeout(() => void this.checkpoint(), this.env.options.checkpointDelayMs);
  }

  /** A task ended, `queued` names wait: the moment for a due checkpoint when nothing else is running or waiting. */
  afterTask(queued: number): void {
    if (this.#due && this.life.running === 0 && queued === 0 && !this.life.stopping) void this.checkpoint();
  }

  /**
   * Makes the commits so far durable and removes their staged files. Dispatch pauses and the files
   * in flight finish first, since the database must be unloaded with none of our work open.
   */
  checkpoint(): Promise<void> {
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
      this.#paused = false;
      this.life.nudge();
    });
    return this.#running;
  }

  /** On stop: make what was committed durable, so nothing is left in staging. */
  async final(): Promise<void> {
    await this.#running;
    // Files re-ingested after a restart join the list again: settle until it is empty (a few
    // rounds at most; what a failing database leaves here is finished by the next start).
    for (let round = 0; round < 5 && this.#unsettled.length > 0; round++) await this.#run();
  }

  /** On stop: no checkpoint is scheduled any more (the final one is run by `final`). */
  stop(): void {
    clearTimeout(this.#timer);
  }

  async #run(): Promise<void> {
    const { env, life } = this;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#due = false;
    this.#paused = true;
    // Tasks never await a checkpoint (they only schedule one), so waiting for them cannot deadlock.
    while (life.running > 0) await Promise.allSettled(life.tasks());
    const batch = this.#unsettled;
    if (batch.length === 0) return;
    this.#unsettled = [];
    try {
      await env.db.checkpoint!();
      // The checkpoint closed our connections: open them again before the next file needs one.
      if (!life.stopping) void this.pool.warm(env.options.maxConcurrent);
    } catch (error) {
      // Not durable yet: keep the files and try again later. A crash meanwhile re-ingests only
      // what the ledger on disk does not list.
      this.#unsettled.unshift(...batch);
      env.log.warn('checkpoint failed; committed files are kept until the next one', { files: batch.length, error: String(error) });
      if (!life.stopping) this.#timer ??= setTimeout(() => void this.checkpoint(), env.options.retryMaxMs);
      return;
    }
    env.stats.checkpoints++;
    const epoch = epochOf(env);
    const safe = batch.filter((u) => u.epoch === epoch);
    env.log.debug('checkpoint', { files: batch.length, durable: safe.length, epoch });
    for (const u of safe) settleStaged(env, u, mayHaveRejected(env.options, u));
    const doubtful = batch.filter((u) => u.epoch !== epoch);
    if (doubtful.length > 0) {
      // The server restarted after these commits: what it had not written out is gone. The ledger
      // now on disk says which; those files are ingested again.
      env.log.warn('the database restarted before a checkpoint; re-checking committed files against the ledger', {
        files: doubtful.length,
      });
      try {
        await this.recheck(
          doubtful.map((u) =>
            u.unit
              ? { claimId: u.claimId, names: [], unit: u.name, counted: u }
              : { claimId: u.claimId, names: [u.name, u.name + READY_SUFFIX], counted: u },
          ),
        );
      } catch (error) {
        // The database is away again: keep them for the next checkpoint, marked as doubtful.
        this.#unsettled.push(...doubtful.map((u) => ({ ...u, epoch: -1 })));
        env.log.warn('could not re-check files against the ledger yet', { files: doubtful.length, error: String(error) });
      }
    }
  }
}

/** A committed claim in staging: a file (and its sentinel), or a marker folder (`unit`). */
type StagedCommit = Pick<CommittedFile, 'stagedPath' | 'name' | 'claimId' | 'unit'>;

/** A marker folder: removed whole (a folder left half-removed by a crash is removed by the next start's recovery). */
function removeUnit(committed: StagedCommit): SettledFile {
  rmSync(committed.stagedPath, { recursive: true, force: true });
  return { state: 'settled', name: committed.name, claimId: committed.claimId };
}

/** Rows were rejected (`onBadRows: 'skip'`), or may have been (a commit found in the ledger). */
function mayHaveRejected(options: Pick<ResolvedOptions, 'onBadRows'>, committed: CommittedFile): boolean {
  return committed.rejected === undefined ? options.onBadRows === 'skip' && !committed.duplicate : committed.rejected > 0;
}

/**
 * A durable commit leaves staging: its rejected rows (`rejectedFile`) into failed/ first; if they
 * cannot move, the claim stays for the next start's recovery.
 */
export function settleStaged(env: WatchEnv, committed: StagedCommit, rejectedFile: boolean): SettledFile | undefined {
  if (rejectedFile && !settleRejected(env, committed)) return undefined;
  return removeStaged(env, committed);
}

/**
 * Sentinel first, then data: a sentinel alone in staging then always means a claim that was
 * interrupted before its data file was taken (see recover.ts). Moved to the archive instead with
 * `onSuccess: 'archive'`.
 */
function removeStaged(env: WatchEnv, committed: StagedCommit): SettledFile {
  if (committed.unit) return env.options.onSuccess === 'archive' ? archiveUnit(env, committed) : removeUnit(committed);
  if (env.options.onSuccess === 'archive') return archiveStaged(env, committed);
  removeIfPresent(committed.stagedPath + READY_SUFFIX);
  removeIfPresent(committed.stagedPath);
  return { state: 'settled', name: committed.name, claimId: committed.claimId };
}
