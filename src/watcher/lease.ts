/**
 * This process's lease on its directory (see lease.ts): its identity, the heartbeat that keeps
 * the lease, the fence each file transaction passes, and the loss of the lease (fenced: the
 * watcher stops at once and touches none of its claims, which another process has taken).
 */
import { rmdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { STAGING_DIR } from '../constants.ts';
import { checkFence, type Identity, type LeaseRow, readLeases, registerLease, releaseLease, renewLease } from '../store/lease.ts';
import { randomHex } from '../protocol/names.ts';
import type { DbConnection, DbPool } from '../types.ts';
import type { Watch } from './watch.ts';

/**
 * What the watcher knows of its own lease. Changed only by the functions of this file (through
 * `own`); the other steps read it. Its renewal clock (`renewingSince`, `stalledUntil`) is plain
 * data that unit tests set to stage a case.
 */
export interface LeaseState {
  readonly me: Identity;
  /** `.hyperwatch/staging`: every process's folder is in here. */
  readonly stagingRoot: string;
  readonly leaseMs: number;
  /** Fence slots not in use by a transaction, least recently used first (see `takeSlot`). */
  readonly freeSlots: number[];
  /** When each slot's last transaction ended (`performance.now()`); -Infinity for never. */
  readonly releasedAt: number[];
  readonly slots: number;
  /** Taken over: nothing more is committed; the watcher stops. */
  readonly fenced: boolean;
  readonly registered: boolean;
  /** The live processes of this directory (this one too), as the last heartbeat read them. */
  readonly peers: readonly LeaseRow[];
  /** Every lease row (all directories), as last read: the reaper judges by them without waiting for a read. */
  readonly seen: readonly LeaseRow[];
  /** Removed on stop: a transaction still in flight then fails its fence, as meant. */
  readonly released: boolean;
  readonly heartbeat: ReturnType<typeof setInterval> | undefined;
  /**
   * Connections of its own for heartbeats and takeovers: they must never wait behind file
   * transactions (a long COPY, or one blocked on a table by a dead process's session that only
   * a takeover can end).
   */
  readonly pool: DbPool | undefined;
  /** The renewal in flight, or undefined. */
  readonly renewal: Promise<boolean> | undefined;
  /** When the renewal in flight was sent (`performance.now()`), or undefined. */
  renewingSince: number | undefined;
  /**
   * Until then (`performance.now()`) other processes' expired leases are not taken as a sign of
   * death: our own renewal was held up, so the database was (the others' renewals with it).
   */
  stalledUntil: number;
  /** Told once when the lease is lost. */
  readonly onFenced: () => void;
}

/** The lease as this file changes it. */
type Own = { -readonly [K in keyof LeaseState]: LeaseState[K] };

function own(lease: LeaseState): Own {
  return lease;
}

/** Host names can hold anything; an owner id is also a folder name. */
function safe(text: string): string {
  return text.replace(/[^A-Za-z0-9.-]/g, '_').slice(0, 64) || 'host';
}

/** `onFenced`: told once when the lease is lost (the watcher then stops). */
export function newLeaseState(
  dir: string,
  target: string,
  leaseMs: number,
  maxConcurrent: number,
  onFenced: () => void = () => {},
): LeaseState {
  const host = hostname();
  const pid = process.pid;
  // Twice the transactions that can be open at once: a slot is reused only well after its last
  // transaction ended (on Hyper, one begun before that commit would conflict and be retried).
  const slots = maxConcurrent * 2 + 2;
  return {
    me: { owner: `${safe(host)}-${pid}-${randomHex(4)}`, host, pid, directory: dir, target },
    stagingRoot: join(dir, STAGING_DIR),
    leaseMs,
    freeSlots: Array.from({ length: slots - 1 }, (_, i) => i),
    releasedAt: Array.from({ length: slots }, () => Number.NEGATIVE_INFINITY),
    slots,
    fenced: false,
    registered: false,
    peers: [],
    seen: [],
    released: false,
    heartbeat: undefined,
    pool: undefined,
    renewal: undefined,
    renewingSince: undefined,
    // Nothing known of the database yet: see `expiryTrusted`.
    stalledUntil: Number.POSITIVE_INFINITY,
    onFenced,
  };
}

/** Heartbeats this often: three chances to renew before the lease runs out. */
export function heartbeatMs(leaseMs: number): number {
  return Math.max(100, Math.floor(leaseMs / 3));
}

/** The lease's own connection (the watcher's pool before it is open). */
export function leasePoolOf(w: Pick<Watch, 'lease' | 'pool'>): DbPool {
  return w.lease.pool ?? w.pool.get();
}

/** Every lease row, as just read (by a takeover, or the reaper): kept for the reaper's next judgement. */
export function noteLeases(lease: LeaseState, rows: readonly LeaseRow[]): void {
  own(lease).seen = rows;
}

/** Registers the lease (before the staging folder exists, see takeover.ts) and starts heartbeats. */
export async function startLease(w: Watch): Promise<void> {
  const lease = own(w.lease);
  const { env } = w;
  // Two: a takeover's transaction may wait (on Hyper, for a dead process's COMMIT to be let
  // through) while the heartbeat must go on.
  lease.pool ??= await env.db.openPool({ maxConnections: 2, owner: lease.me.owner });
  // The lease tables exist: start-up made them (own-layout.ts).
  await registerLease(leasePoolOf(w), lease.me, lease.leaseMs, lease.slots);
  lease.registered = true;
  env.log.info('lease taken', { owner: lease.me.owner, leaseMs: lease.leaseMs, dir: env.dir });
  lease.heartbeat = setInterval(() => void beat(w), heartbeatMs(lease.leaseMs));
}

/**
 * Whether an expired lease of another process says it is dead. Not while our own renewal is held
 * up long enough for a lease to run out meanwhile (longer than the lease less a heartbeat: the
 * others renew every heartbeat), nor for a heartbeat and a half after one was (or failed): a
 * database that stalled (on a shared hyperd, a dead process's COPY holding its worker threads)
 * held everyone's renewals alike, and once it answers again the others' renewals land within a
 * heartbeat. Reads done meanwhile show every lease expired; taking them over would fence live
 * processes, cancelling them would fail their files' transactions. Nor before our first renewal
 * answered in time (and a heartbeat and a half after it): a process starting while the database
 * stalls knows nothing of it yet.
 */
export function expiryTrusted(lease: LeaseState, now = performance.now()): boolean {
  if (lease.renewingSince !== undefined && now - lease.renewingSince > heldUpMs(lease.leaseMs)) return false;
  return now >= lease.stalledUntil;
}

/** A renewal that took longer than this was held up long enough for another's lease to run out. */
export function heldUpMs(leaseMs: number): number {
  return Math.max(heartbeatMs(leaseMs), leaseMs - heartbeatMs(leaseMs));
}

/**
 * Renews our lease, noting how long the database took (see `expiryTrusted`). One renewal at a
 * time (two of ours on the same row would conflict with each other): a caller while one is in
 * flight gets its answer.
 */
function renew(w: Watch): Promise<boolean> {
  const lease = own(w.lease);
  lease.renewal ??= renewOnce(w).finally(() => (lease.renewal = undefined));
  return lease.renewal;
}

async function renewOnce(w: Watch): Promise<boolean> {
  const lease = own(w.lease);
  const started = performance.now();
  lease.renewingSince = started;
  let answered = false;
  try {
    const ours = await renewLease(leasePoolOf(w), lease.me.owner, lease.leaseMs, w.active.size + w.checkpoints.unsettledCount);
    answered = true;
    return ours;
  } finally {
    const now = performance.now();
    const beat = heartbeatMs(lease.leaseMs);
    lease.renewingSince = undefined;
    // Held up, or failed (the database away): the others could not renew either.
    if (!answered || now - started > heldUpMs(lease.leaseMs)) {
      lease.stalledUntil = Math.max(lease.stalledUntil, now + beat * 1.5);
      w.env.log.debug('the lease renewal waited on the database; expired leases of others are not trusted for now', {
        ms: Math.round(now - started),
      });
    } else if (lease.stalledUntil === Number.POSITIVE_INFINITY) {
      lease.stalledUntil = now + beat * 1.5;
    }
  }
}

async function beat(w: Watch): Promise<void> {
  const lease = own(w.lease);
  // The last one still waits for the database: no second one behind it.
  if (lease.fenced || !w.pool.opened || lease.renewal) return;
  try {
    const ours = await renew(w);
    if (!ours) return fenced(w, 'the lease was taken over by another process');
    const rows = await readLeases(leasePoolOf(w));
    lease.seen = rows;
    lease.peers = rows.filter((r) => r.directory === w.env.dir && !r.expired && r.takenBy === null);
  } catch (error) {
    // The database is away: keep trying. If it stays away past the lease, another process may
    // take our files over; the next renewal then finds out and the watcher stops.
    w.env.log.warn('could not renew the lease; retrying', { owner: lease.me.owner, error: String(error) });
  }
}

/**
 * Renews our own lease before taking another's: after the database was away longer than the
 * lease, every lease looks expired, and a process whose own lease was taken meanwhile must not
 * take anyone else's. False (and fenced) when ours is gone.
 */
export async function stillOurs(w: Watch): Promise<boolean> {
  if (w.lease.fenced) return false;
  if (await renew(w)) return true;
  fenced(w, 'the lease was taken over by another process');
  return false;
}

/** The lease is lost: stop, leaving every claim to the process that took them. */
function fenced(w: Watch, why: string): void {
  const lease = own(w.lease);
  if (lease.fenced) return;
  lease.fenced = true;
  if (lease.released) return;
  w.env.log.error(
    `lease lost (${why}): stopping without committing anything more; the files this process had claimed are finished by the ` +
      `process that took them over. Restart it (it starts with a new identity). A process that pauses longer than the lease (a ` +
      `stopped VM, a long GC) loses its files this way: raise the lease if that is expected.`,
    {
      owner: lease.me.owner,
    },
  );
  lease.onFenced();
}

/**
 * Stops heartbeats and removes the lease (unless it was taken over): nothing of this process
 * commits after that (a transaction still in flight fails its fence), so whatever it left in
 * its folder may be taken over at once, by another process or the next start of this one.
 */
export async function endLease(w: Watch, clean: boolean): Promise<void> {
  const lease = own(w.lease);
  clearInterval(lease.heartbeat);
  try {
    // A renewal still in flight is let finish first: on hyperd an UPDATE racing the DELETE
    // below could leave the row behind (seen: about one stop in eight kept its lease).
    await lease.renewal?.catch(() => {});
    if (!lease.registered || lease.fenced || !w.pool.opened) return;
    // Empty after a clean stop: one folder less for the others to look at.
    if (clean) await rmdir(w.env.staging).catch(() => {});
    try {
      await releaseLease(leasePoolOf(w), lease.me.owner);
      lease.released = true;
    } catch (error) {
      w.env.log.warn('could not remove the lease; it expires on its own', { owner: lease.me.owner, error: String(error) });
    }
  } finally {
    const { pool } = lease;
    lease.pool = undefined;
    await pool?.close().catch(() => {});
  }
}

/**
 * A fence slot for one transaction, held until it ends (`release`): on Hyper two open
 * transactions updating the same fence row conflict, so each of ours has its own.
 *
 * The slot taken is the one most recently used whose last transaction ended before this one's
 * BEGIN went out (`begunAt`, `performance.now()`; now when BEGIN is still to be sent). Its fence
 * statement is then the one this connection ran last, which hyperd answers from its plan cache
 * (0.3 ms instead of 1 ms compiled afresh, per transaction); and Hyper takes a transaction's
 * snapshot at BEGIN, so a slot whose last commit came before it cannot conflict. Failing that,
 * the least recently used one.
 */
export function takeSlot(lease: LeaseState, begunAt = performance.now()): { slot: number; release: () => void } {
  const { freeSlots, releasedAt } = lease;
  let at = freeSlots.length - 1;
  while (at > 0 && !(releasedAt[freeSlots[at]!]! < begunAt)) at--;
  const free = at >= 0 ? freeSlots.splice(at, 1)[0] : undefined;
  // None free (a split group's parts wait for connections holding theirs): share the last one;
  // on Hyper a conflict there is a retry, never a wrong commit.
  if (free === undefined) return { slot: lease.slots - 1, release: () => {} };
  let released = false;
  return {
    slot: free,
    release: () => {
      if (released) return;
      released = true;
      releasedAt[free] = performance.now();
      freeSlots.push(free);
    },
  };
}

/**
 * The fence, run inside a file's transaction just before its commit: throws (and stops the
 * watcher) when this process was taken over, so the transaction rolls back.
 */
export async function fence(w: Watch, conn: DbConnection, slot: number): Promise<void> {
  const { lease } = w;
  if (lease.fenced) throw leaseLost();
  if (!(await checkFence(conn, lease.me.owner, slot))) {
    fenced(w, 'a file transaction found the fence token changed');
    throw leaseLost();
  }
}

export function leaseLost(): Error {
  return Object.assign(new Error('this process was taken over by another (its lease expired); nothing was committed'), {
    code: 'LEASE_LOST',
  });
}
