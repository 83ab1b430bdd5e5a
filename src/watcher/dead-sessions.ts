/**
 * What dead processes left running in the database. On a shared hyperd, a COPY FROM STDIN cut
 * off by its client's death stays active for good and blocks its table: every COPY and COMMIT
 * into it, and DDL (a starting process's CREATE TABLE IF NOT EXISTS) wait behind it, each of them
 * holding one of hyperd's few worker threads (two on a 2-core host), so a dead process's COPYs
 * soon stall every statement on that hyperd, heartbeats included. A cancel does not end such a
 * COPY at once: hyperd looks at it when the COPY's read times out, every 10 s after its last
 * message, so a cancel sent within those 10 s frees the server 10 s after the death, and one
 * sent later only at the next 10 s tick (its log: `connection-cancel-async-ops`, `"reason":
 * "time limit exceeded"`, `"timeout-ms": 10000`).
 *
 * So a reaper cancels the sessions of owners that look dead from the moment the watcher has a
 * pool until it stops, every half heartbeat, on its own timer: never behind a heartbeat or a
 * takeover that waits on the stalled server. Who looks dead is decided without the database when
 * it can be (an owner on this host whose pid is gone; owner ids and staging folders name host and
 * pid), else by the lease rows last read. A cancelled statement never commits anything, so this
 * needs no lease; a process whose lease merely expired (frozen) gets a cancelled statement,
 * retried, and then fails its fence as it would anyway.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { SESSIONS_DIR } from '../constants.ts';
import { within } from '../util/within.ts';
import { type LeaseRow, readLeases } from '../store/lease.ts';
import type { WatchEnv } from './env.ts';
import { expiryTrusted, heartbeatMs, type LeaseState, leasePoolOf, noteLeases } from './lease.ts';
import type { Watch } from './watch.ts';

/** Whether `pid` runs on this host (EPERM: it runs, as another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
}

/** An owner id (`<host>-<pid>-<random>`, see lease.ts) on this very host whose process is gone. */
export function goneFromThisHost(lease: LeaseState, owner: string): boolean {
  const match = /^(.+)-(\d+)-[0-9a-f]+$/.exec(owner);
  if (!match || match[1] !== lease.me.owner.replace(/-\d+-[0-9a-f]+$/, '')) return false;
  const pid = Number(match[2]);
  return pid !== lease.me.pid && !pidAlive(pid);
}

/** Gone, taken over, or expired while the database answered heartbeats: none of its transactions may commit from here on. */
export function looksDead(lease: LeaseState, row: LeaseRow | undefined): boolean {
  if (!row || row.takenBy !== null) return true;
  if (row.expired && expiryTrusted(lease)) return true;
  return row.host === lease.me.host && row.pid !== lease.me.pid && !pidAlive(row.pid);
}

/** Ends the sessions `owner` left (when the database can and needs to), logging what it did. */
async function endSessions(env: WatchEnv, owner: string): Promise<void> {
  const started = performance.now();
  const ended = await env.db.endSessionsOf?.(owner).catch((error: unknown) => {
    env.log.warn('could not end the database sessions of a dead process', { owner, error: String(error) });
    return 0;
  });
  if (ended)
    env.log.info('ended the database sessions a dead process left open', {
      owner,
      sessions: ended,
      ms: Math.round(performance.now() - started),
    });
}

/** Ends the sessions of every owner in `rows` that looks dead, and of `ownerless` (folders without a lease row). */
export async function endDeadSessions(
  w: Pick<Watch, 'env' | 'lease'>,
  rows: Iterable<LeaseRow>,
  ownerless: readonly string[] = [],
): Promise<void> {
  if (!w.env.db.endSessionsOf) return;
  const owners = new Set(ownerless);
  for (const row of rows) if (row.owner !== w.lease.me.owner && looksDead(w.lease, row)) owners.add(row.owner);
  for (const owner of owners) await endSessions(w.env, owner);
}

/**
 * Where the Hyper adapter lists each process's session keys (`.hyperwatch/sessions/<owner>`, beside
 * the staging folder): a dead owner's file is removed once its files are taken over.
 */
export function keysFileOf(lease: LeaseState, owner: string): string {
  return join(keysDirOf(lease), owner);
}

function keysDirOf(lease: LeaseState): string {
  return join(lease.me.directory, SESSIONS_DIR);
}

/** Removes a dead owner's keys file (see `keysFileOf`). */
export async function forgetKeys(lease: LeaseState, owner: string): Promise<void> {
  await rm(keysFileOf(lease, owner), { force: true }).catch(() => {});
}

/** How soon the reaper cancels an owner's sessions again (it looks every half heartbeat). */
const AGAIN_MS = 2000;

/** The reaper (see above): started by the start, before its first CREATE TABLE IF NOT EXISTS; stopped by the stop. */
export class Reaper {
  #timer: ReturnType<typeof setInterval> | undefined;

  /** Starts the ticks and runs the first pass (which a dead COPY would otherwise block). */
  async start(w: Watch): Promise<void> {
    if (!w.env.db.endSessionsOf) return;
    const { lease, env, life } = w;
    const everyMs = Math.max(100, Math.floor(heartbeatMs(lease.leaseMs) / 2));
    /** Per owner: a pass running for it, or when its sessions were last cancelled. */
    const last = new Map<string, number | 'running'>();
    /** The lease rows into `lease.seen`, one read at a time (the heartbeat reads them once there is one). */
    let reading: Promise<void> | undefined;
    const read = () =>
      (reading ??= readLeases(leasePoolOf(w))
        .then((rows) => noteLeases(lease, rows))
        .catch(() => {})
        .finally(() => (reading = undefined)));
    const tick = async (): Promise<unknown> => {
      if (life.stopping) return;
      // Never awaited here: it may stall.
      if (!lease.registered) void read();
      const folders = (await readdir(lease.stagingRoot, { withFileTypes: true }).catch(() => []))
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
      // Also owners that died before their folder existed (their start-up's statements can block too).
      const listed = (await readdir(keysDirOf(lease)).catch(() => [])).filter((name) => !name.endsWith('.tmp'));
      const owners = new Set([...folders, ...listed, ...lease.seen.map((r) => r.owner)]);
      const rows = new Map(lease.seen.map((r) => [r.owner, r]));
      const now = performance.now();
      const passes: Promise<void>[] = [];
      for (const owner of owners) {
        if (owner === lease.me.owner) continue;
        const at = last.get(owner);
        if (at === 'running' || (at !== undefined && now - at < AGAIN_MS)) continue;
        const row = rows.get(owner);
        if (!goneFromThisHost(lease, owner) && !(row && looksDead(lease, row))) continue;
        last.set(owner, 'running');
        // Nothing of a dead owner without a folder or a lease is left to take over: its keys file goes.
        const orphan = listed.includes(owner) && !folders.includes(owner) && !row && goneFromThisHost(lease, owner);
        passes.push(
          endSessions(env, owner)
            .then(() => (orphan ? forgetKeys(lease, owner) : undefined))
            .finally(() => last.set(owner, performance.now())),
        );
      }
      return Promise.all(passes);
    };
    this.#timer = setInterval(() => void tick(), everyMs);
    this.#timer.unref?.();
    // The lease rows for the first pass (none yet on a new database: nobody to be dead). A server
    // stalled by dead sessions holds this read up, so it waits a while at most: the pass then goes
    // by the folders and keys files, and the ticks go on meanwhile.
    await within(read(), everyMs * 2);
    await tick();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
