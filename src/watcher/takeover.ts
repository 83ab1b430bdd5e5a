/**
 * Takeover: several processes share one inbox, each staging its claims in a folder of its own
 * (`.hyperwatch/staging/<owner>/`). A process finishes only its own claims and those of owners
 * that are provably dead: their lease expired (and this process took it, bumping its token so
 * nothing more of theirs commits), or their process is gone from this very host, or their lease
 * is gone (already taken over). Their files are moved into this process's folder, one atomic
 * rename each (so each file has exactly one new owner), and the ledger settles them.
 */
import { readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { renameIfPresent } from '../protocol/files.ts';
import { dropLease, endFrozenSessions, type LeaseRow, readLeases, takeLease } from '../store/lease.ts';
import { isLedgerScratch } from '../store/ledger.ts';
import { parseStagedName, parseUnitStagedName } from '../protocol/names.ts';
import { endDeadSessions, forgetKeys, pidAlive } from './dead-sessions.ts';
import { expiryTrusted, heartbeatMs, leasePoolOf, noteLeases, stillOurs } from './lease.ts';
import { claimsOf, recoverClaims, type StagedClaim } from './recover.ts';
import type { Watch } from './watch.ts';

/** The entries of the staging root: other owners' folders, and claims staged by a version without owners. */
async function stagingEntries(w: Watch): Promise<{ folders: string[]; loose: string[] }> {
  const folders: string[] = [];
  const loose: string[] = [];
  let entries;
  try {
    entries = await readdir(w.env.stagingRoot, { withFileTypes: true });
  } catch {
    return { folders, loose };
  }
  for (const e of entries) {
    if (e.isDirectory()) {
      if (e.name !== w.env.me.owner) folders.push(e.name);
    } else if (parseStagedName(e.name)) {
      loose.push(e.name);
    }
  }
  return { folders, loose };
}

/** Why a folder may be taken now, or undefined while its owner may still be alive. */
async function verdict(w: Watch, owner: string, rows: ReadonlyMap<string, LeaseRow>): Promise<string | undefined> {
  const me = w.env.me;
  const row = rows.get(owner);
  if (!row) return 'its lease is gone';
  if (row.takenBy !== null) {
    if (row.takenBy === me.owner) return 'taken over earlier by this process';
    const taker = rows.get(row.takenBy);
    return !taker || (taker.expired && expiryTrusted(w.lease)) || taker.takenBy !== null
      ? 'the process that took it over is gone too'
      : undefined;
  }
  // Same host and the pid is not running: dead for sure, no need to wait for the lease.
  const gone = row.host === me.host && row.pid !== me.pid && !pidAlive(row.pid);
  if (!(row.expired && expiryTrusted(w.lease)) && !gone) return undefined;
  // Renewing ours may find that the database stalled (see `expiryTrusted`): ask again after it.
  if (!(await stillOurs(w)) || (!gone && !expiryTrusted(w.lease))) return undefined;
  const { db } = w.env;
  const took = await takeLease(leasePoolOf(w), db, owner, me.owner, gone);
  if (!took.taken) {
    w.env.log.debug('could not take the lease of a dead process yet; trying again next round', { owner, why: took.why });
    // Where row locks make others wait: a transaction of the dead process frozen between its
    // renewal or its fence and its COMMIT holds the row. End that session (the lease expired: it
    // is no longer the owner's), and try again next round.
    if (db.endRowLockHolders && row.expired) {
      const ended = await endFrozenSessions(leasePoolOf(w), db, owner).catch(() => 0);
      if (ended > 0)
        w.env.log.warn('ended the database sessions of a process whose lease expired while they held its lease or fence rows', {
          owner,
          sessions: ended,
        });
    }
    return undefined;
  }
  return gone ? `its process (pid ${row.pid}) is gone` : `its lease expired at ${row.expiresAt}`;
}

/**
 * Moves into this process's folder, then finishes, the claims of every owner that is provably
 * dead (see above), and claims staged directly in the staging root (by a version that had no
 * owners, which ran alone). Safe to run at any time and in several processes at once.
 */
export async function takeOverDead(w: Watch): Promise<void> {
  // Where a takeover's time went (ms per step), for its 'took over' line.
  const steps: Record<string, number> = {};
  let mark = performance.now();
  const step = (name: string) => {
    const now = performance.now();
    steps[name] = (steps[name] ?? 0) + Math.round(now - mark);
    mark = now;
  };
  const { folders, loose } = await stagingEntries(w);
  if (loose.length > 0) await adoptLoose(w, loose);
  step('list');
  // All directories' leases: another host may mount this inbox at another path, and a folder
  // must never look ownerless because its owner's row names the directory differently.
  const read = await readLeases(leasePoolOf(w));
  noteLeases(w.lease, read);
  const rows = new Map(read.map((r) => [r.owner, r]));
  step('readLeases');
  await dropStale(w, rows, folders);
  step('dropStale');
  // First, whatever the dead left running: a dead owner's COPY can hold the table that another
  // dead owner's COMMIT waits on, and taking that one's lease waits on its COMMIT. Cancelling
  // never commits anything, so it needs no lease.
  await endDeadSessions(
    w,
    [...rows.values()].filter((r) => folders.includes(r.owner)),
    folders.filter((owner) => !rows.has(owner)),
  );
  step('endDeadSessions');
  for (const owner of folders) {
    if (w.life.stopping || w.lease.fenced) return;
    const why = await verdict(w, owner, rows);
    step('verdicts');
    if (!why) continue;
    // The folder moves as a whole, one rename: one process wins it, with all its claims
    // together (a sentinel never ends up apart from its data file).
    const into = join(w.env.staging, `${ADOPTED_PREFIX}${owner}`);
    if (!renameIfPresent(join(w.env.stagingRoot, owner), into)) continue;
    await adopt(w, into, `process ${owner}: ${why}`, { ...steps });
    step('adopting');
    if (rows.has(owner)) await dropLease(leasePoolOf(w), owner).catch(() => {});
    await forgetKeys(w.lease, owner);
  }
  const total = Object.values(steps).reduce((a, b) => a + b, 0);
  if (total > heartbeatMs(w.lease.leaseMs)) w.env.log.debug('a check for dead processes was slow', { steps, total });
}

/**
 * Lease rows with no folder left: expired ones (a process that died before staging anything,
 * or whose folder was adopted), and ones taken over by a process that is gone too. Removing an
 * expired row also fences its owner, should it come back.
 */
async function dropStale(w: Watch, rows: ReadonlyMap<string, LeaseRow>, folders: readonly string[]): Promise<void> {
  for (const row of rows.values()) {
    if (row.owner === w.env.me.owner || row.directory !== w.env.dir || folders.includes(row.owner)) continue;
    const taker = row.takenBy === null ? undefined : rows.get(row.takenBy);
    const trusted = expiryTrusted(w.lease);
    if ((row.expired && trusted) || (row.takenBy !== null && (!taker || (taker.expired && trusted)))) {
      await dropLease(leasePoolOf(w), row.owner).catch(() => {});
      await forgetKeys(w.lease, row.owner);
    }
  }
}

/** A dead owner's folder inside ours while its claims are moved out of it. */
const ADOPTED_PREFIX = '.from-';

/**
 * Every entry under `folder` (folders adopted by a process that died while adopting them too):
 * staged files, and claimed marker folders (`readyWhen: 'marker'`), which are claims themselves,
 * moved whole, never gone into, and never taken for an adopted owner's folder.
 */
async function filesUnder(folder: string): Promise<{ dir: string; name: string; unit?: true }[]> {
  const out: { dir: string; name: string; unit?: true }[] = [];
  let entries;
  try {
    entries = await readdir(folder, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (e.isDirectory() && parseUnitStagedName(e.name)) out.push({ dir: folder, name: e.name, unit: true });
    else if (e.isDirectory()) out.push(...(await filesUnder(join(folder, e.name))));
    else out.push({ dir: folder, name: e.name });
  }
  return out;
}

/** Moves the claims under `folder` (now ours) into our folder and finishes them. */
async function adopt(w: Watch, folder: string, from: string, steps: Record<string, number>): Promise<void> {
  const files = await filesUnder(folder);
  const taken = files
    .filter((f) => (f.unit || parseStagedName(f.name)) && renameIfPresent(join(f.dir, f.name), join(w.env.staging, f.name)))
    .map((f) => f.name);
  // The ledger rows of a transaction it died in (never committed: its client is gone).
  await Promise.all(files.filter((f) => isLedgerScratch(f.name)).map((f) => rm(join(f.dir, f.name), { force: true })));
  // Folders the dead owner had itself taken over (it died before finishing them): named too, so
  // every dead owner's files have a 'took over' line saying who finished them.
  const nested = await adoptedUnder(folder);
  const claims = announce(w, taken, nested.length > 0 ? `${from}; with what it had taken over from ${nested.join(', ')}` : from, steps);
  // Only once the line is out does `folder` (`.from-<owner>`) go: killed before it, this process
  // leaves the folder in its own, and the one that takes it over names that owner as above. (It
  // went first, and a kill in between left an owner that no line ever named.)
  await removeTree(folder);
  await recoverClaims(w, claims);
}

/** The owners of the `.from-<owner>` folders anywhere under `folder`. */
async function adoptedUnder(folder: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
    if (!e.isDirectory() || parseUnitStagedName(e.name)) continue;
    if (e.name.startsWith(ADOPTED_PREFIX)) out.push(e.name.slice(ADOPTED_PREFIX.length));
    out.push(...(await adoptedUnder(join(folder, e.name))));
  }
  return out;
}

async function removeTree(folder: string): Promise<void> {
  for (const e of await readdir(folder, { withFileTypes: true }).catch(() => [])) {
    if (e.isDirectory()) await removeTree(join(folder, e.name));
  }
  await rmdir(folder).catch(() => {});
}

/** The 'took over' line and count for the claims among `names`, which it returns. */
function announce(w: Watch, names: readonly string[], from: string, steps?: Record<string, number>): StagedClaim[] {
  const claims = [...claimsOf(names.filter((n) => !parseUnitStagedName(n))), ...unitsOf(names)];
  w.env.log.info('took over', { from, files: claims.length, owner: w.env.me.owner, ...(steps ? { ms: steps } : {}) });
  w.env.stats.takenOver += claims.length;
  return claims;
}

/** The claimed marker folders among `names`. */
function unitsOf(names: readonly string[]): StagedClaim[] {
  return names.flatMap((n) => {
    const parsed = parseUnitStagedName(n);
    return parsed ? [{ claimId: parsed.claimId, names: [], unit: parsed.folder }] : [];
  });
}

/** Claims staged in the staging root by a version without owners (it ran alone): taken one by one. */
async function adoptLoose(w: Watch, names: readonly string[]): Promise<void> {
  const taken = names.filter((name) => renameIfPresent(join(w.env.stagingRoot, name), join(w.env.staging, name)));
  await recoverClaims(w, announce(w, taken, 'claims staged by an earlier version'));
}

/** Looks for dead processes' files while watching, as a task of its own (stop and checkpoints wait for it). */
export function startTakeoverChecks(w: Watch, everyMs: number): ReturnType<typeof setInterval> {
  let running = false;
  let lastRun = performance.now();
  const skipped = { running: 0, paused: 0 };
  return setInterval(() => {
    const { life, checkpoints } = w;
    if (running) skipped.running++;
    else if (checkpoints.paused) skipped.paused++;
    if (running || life.stopping || checkpoints.paused || w.lease.fenced) return;
    const gap = performance.now() - lastRun;
    // A check held back (by the last one, or a checkpoint) delays every takeover: say so.
    if (gap > everyMs * 2.5) w.env.log.debug('the check for dead processes ran late', { gapMs: Math.round(gap), ...skipped });
    skipped.running = 0;
    skipped.paused = 0;
    lastRun = performance.now();
    running = true;
    const task: Promise<void> = takeOverDead(w)
      .catch((error: unknown) => w.env.log.warn('could not check for dead processes; retrying', { error: String(error) }))
      .finally(() => {
        running = false;
        life.remove(task);
        life.nudge();
      });
    life.add(task);
  }, everyMs);
}
