/**
 * Discovery when `readyWhen` is `'stable'`: there is no sentinel, so every data file seen (by an
 * event or a rescan) is looked at, and queued once it has stayed the same for `stableMs` and no
 * process holds it open for writing (open-writers.ts). Rescans look at every file again, so a
 * file that changes without events (NFS, SMB, a lost event) is seen changing too; the cost is one
 * `lstat` per file per rescan, and one pass over /proc per batch of files coming due.
 */
import { type Dirent, lstatSync, realpathSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { READY_SUFFIX } from '../constants.ts';
import { isStableCandidate } from '../protocol/names.ts';
import { heldForWriting } from './open-writers.ts';
import { lookOf } from './settling.ts';
import type { Watch } from './watch.ts';

/** A name stable mode may take: not in progress by its name, and selected by include/exclude. */
export function isStableFile(w: Watch, name: string): boolean {
  return isStableCandidate(name) && w.env.selected(name);
}

/** Names the filesystem adapter reported: each changed, so each is looked at again. */
export function onStableNames(w: Watch, names: readonly string[]): void {
  if (w.life.stopping) return;
  const now = Date.now();
  for (const name of names) if (isStableFile(w, name)) look(w, name, now);
}

/** One entry of a rescan's listing (`name` relative to the watched directory); false when it is not a file stable mode takes. */
export function listedStable(w: Watch, entry: Dirent, name: string, now: number): boolean {
  if (entry.isDirectory() || !isStableFile(w, name)) return false;
  look(w, name, now);
  return true;
}

/** After a complete listing: names tracked but no longer there went without an event. */
export function forgetUnlisted(w: Watch, listed: ReadonlySet<string>): void {
  for (const name of w.settling.names()) if (!listed.has(name)) w.settling.forget(name);
}

/** One look; a directory is none of ours, a name gone is forgotten. */
function look(w: Watch, name: string, now: number): void {
  const st = statOf(join(w.env.dir, name));
  if (st === undefined) w.settling.forget(name);
  else if (!st.isDirectory()) w.settling.saw(name, lookOf(st), now);
}

function statOf(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}

/**
 * The files due now: each looked at once more (a change starts its wait again), the ones still the
 * same checked for writers in one pass, the rest queued. Then the counters, the timer for the next
 * due file, and a log line for each file that has waited long (it never stops changing, or stays
 * open).
 */
export function takeDue(w: Watch): void {
  const { env, settling, inbox } = w;
  if (w.life.stopping) return;
  const now = Date.now();
  const same: string[] = [];
  for (const name of settling.due(now)) {
    const st = statOf(join(env.dir, name));
    if (st === undefined) {
      settling.forget(name);
      continue;
    }
    const before = settling.last(name);
    settling.saw(name, lookOf(st), now);
    // `saw` keeps the very record for an unchanged file and makes a new one for a changed one.
    if (before === settling.last(name)) same.push(name);
  }
  if (same.length > 0) {
    const real = realDir(env.dir);
    const held = heldForWriting(new Set(same.map((n) => join(real, n))));
    let found = false;
    for (const name of same) {
      if (held.has(join(real, name))) {
        env.log.debug('file still open for writing; waiting', { file: name });
        settling.waitAgain(name, now);
      } else if (inbox.enqueue(name + READY_SUFFIX) || inbox.pending(name + READY_SUFFIX)) {
        settling.queued(name);
        found = true;
      } else {
        settling.waitAgain(name, now); // the queue is full: found again once it drains
      }
    }
    if (found) env.stats.lastEventAt = new Date().toISOString();
  }
  for (const { name, waitedMs, size } of settling.settle(now)) {
    env.log.warn('waiting for a file to stop changing (or to be closed by its writer)', {
      file: name,
      waitingSeconds: Math.round(waitedMs / 1000),
      size,
      stableMs: settling.stableMs,
    });
  }
}

/** The directory as /proc names open files: symbolic links resolved. */
function realDir(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}
