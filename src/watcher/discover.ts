/**
 * Discovery: finds `ready` files (filesystem events, the initial sweep, periodic rescans) and
 * queues them in the inbox (inbox.ts) for a claim; sends the orphans (sentinels without their
 * data file) back to `ready` when their data file comes, to `failed` when their grace period ends.
 * With `readyWhen: 'stable'` the events and listings go to discover-stable.ts instead; with
 * `include` / `exclude`, what they leave out is not queued, only counted; with `recursive`, the
 * listing walks the subfolders (walk.ts) and the events come from each of them (subfolders.ts).
 * With `readyWhen: 'marker'`, folders are queued instead of sentinels (discover-marker.ts).
 */
import { type Dirent, lstatSync } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import { READY_SUFFIX } from '../constants.ts';
import { exists } from '../protocol/files.ts';
import { baseName, dataNameOf, isIgnoredName, newClaimId } from '../protocol/names.ts';
import { listMarkerFolders, onMarkerNames } from './discover-marker.ts';
import { forgetUnlisted, listedStable, onStableNames, takeDue } from './discover-stable.ts';
import { fail, orphanReady } from './fail.ts';
import { walkTree } from './walk.ts';
import type { Watch } from './watch.ts';

/** Names the filesystem adapter reported: sentinels are queued, a late data file wakes its orphan. */
export function onNames(w: Watch, names: readonly string[]): void {
  if (w.life.stopping) return;
  const { inbox, env } = w;
  if (env.options.readyWhen === 'marker') {
    onMarkerNames(w, names);
    return;
  }
  const files = env.options.recursive ? withoutNewFolders(w, names) : names;
  if (env.options.readyWhen === 'stable') {
    onStableNames(w, files);
    return;
  }
  let found = false;
  for (const name of files) {
    if (!selectedDrop(w, name)) continue;
    if (name.endsWith(READY_SUFFIX)) {
      // Our own claim's event, unless the producer has already dropped the name again.
      if (inbox.ownClaimEvent(name) && !exists(join(env.dir, name))) continue;
      // A known orphan's sentinel is retried when its data file shows up (below) or by the
      // rescan; its own events include the one of being put back after a claim found no data,
      // which would otherwise claim it again at once, in a loop.
      if (!inbox.isOrphan(name)) found = inbox.enqueue(name) || found;
    } else if (inbox.isOrphan(name + READY_SUFFIX)) {
      // The data file arrived after its sentinel: try again now.
      found = inbox.enqueue(name + READY_SUFFIX) || found;
    }
  }
  if (found) env.stats.lastEventAt = new Date().toISOString();
}

/**
 * `recursive`: the names that are not folders. A new folder is watched and listed by a rescan
 * (after the one running, if any, which may have passed it already): what was made in it before
 * its watch began has had no event.
 */
function withoutNewFolders(w: Watch, names: readonly string[]): readonly string[] {
  const files: string[] = [];
  let newFolder = false;
  for (const name of names) {
    if (name.endsWith(READY_SUFFIX) || !isFolder(join(w.env.dir, name))) files.push(name);
    else if (!w.folders.has(name) && w.folders.isWatchable(name, baseName(name))) newFolder = true;
  }
  if (newFolder) {
    const running = w.inbox.rescanning;
    void (running ? running.then(() => rescan(w)) : rescan(w));
  }
  return files;
}

function isFolder(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

/** Lists the directory and queues every sentinel; reports orphans past their grace period. */
export function rescan(w: Watch): Promise<void> {
  if (w.life.stopping) return Promise.resolve();
  return w.inbox.rescan(
    () => listDirectory(w),
    () => w.life.nudge(),
  );
}

async function listDirectory(w: Watch): Promise<void> {
  const { inbox, env, life } = w;
  env.stats.rescans++;
  inbox.listing();
  if (env.options.readyWhen === 'marker') {
    try {
      env.stats.ignored = await listMarkerFolders(w);
    } catch (error) {
      env.log.error('cannot list the watched directory', { dir: env.dir, error: String(error) });
    }
    return;
  }
  const stable = env.options.readyWhen === 'stable';
  const now = Date.now();
  const listed = new Set<string>();
  let found = false;
  let ignored = 0;
  let complete = false;
  // One entry of the listing, `name` relative to the watched directory; false: stop listing.
  const visit = (entry: Dirent, name: string): boolean => {
    if (life.stopping) return false;
    if (leftAlone(w, entry, name)) ignored++;
    if (stable) {
      if (listedStable(w, entry, name, now)) listed.add(name);
      return true;
    }
    // Known orphans are re-tried by reportOrphans, once their data file is there.
    if (!name.endsWith(READY_SUFFIX) || inbox.isOrphan(name) || !selectedDrop(w, name)) return true;
    found = inbox.enqueue(name) || found;
    return !inbox.overflow;
  };
  try {
    if (env.options.recursive) complete = await walkTree(w, visit);
    else {
      const dir = await opendir(env.dir, { bufferSize: 256 });
      for await (const entry of dir) if (!visit(entry, entry.name)) break; // the handle closes when the loop exits
      complete = true;
    }
    complete &&= !life.stopping && !inbox.overflow;
  } catch (error) {
    env.log.error('cannot list the watched directory', { dir: env.dir, error: String(error) });
  }
  env.stats.ignored = ignored;
  if (stable) {
    if (complete) forgetUnlisted(w, listed);
    takeDue(w);
    return;
  }
  if (found) env.stats.lastEventAt = new Date().toISOString();
  await reportOrphans(w);
}

/** Sentinel mode: a `.ready` (or a data file) whose data file include/exclude select. */
function selectedDrop(w: Watch, name: string): boolean {
  return w.env.selected(name.endsWith(READY_SUFFIX) ? name.slice(0, -READY_SUFFIX.length) : name);
}

/** A data file (not a folder, a sentinel, a dot-file or `*.tmp`) that include/exclude leave alone. */
function leftAlone(w: Watch, entry: Dirent, name: string): boolean {
  return !entry.isDirectory() && !name.endsWith(READY_SUFFIX) && !isIgnoredName(name) && !w.env.selected(name);
}

/** Orphans: back to `ready` when their data file came, to `failed` once their grace period is over. */
async function reportOrphans(w: Watch): Promise<void> {
  const { inbox, env } = w;
  const now = Date.now();
  for (const [readyName, orphan] of inbox.orphans()) {
    if (inbox.pending(readyName)) continue;
    const dataName = dataNameOf(readyName)!;
    if (!exists(join(env.dir, readyName))) {
      inbox.forgetOrphan(readyName);
      continue;
    }
    if (exists(join(env.dir, dataName))) {
      inbox.forgetOrphan(readyName);
      inbox.enqueue(readyName);
      continue;
    }
    if (now - orphan.since < env.options.orphanGraceMs) continue;
    inbox.forgetOrphan(readyName);
    const seconds = Math.round((now - orphan.since) / 1000);
    await fail(w, {
      state: 'failed',
      name: dataName,
      claimId: newClaimId(),
      extension: '',
      readyPath: join(env.dir, readyName),
      error: orphanReady(readyName, dataName, seconds),
    });
    env.stats.orphans++;
  }
}
