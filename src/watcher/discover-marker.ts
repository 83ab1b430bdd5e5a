/**
 * Discovery when `readyWhen` is `'marker'`: the units are the subfolders of the watched directory
 * (not `failed/`, the archive or dot-folders), each queued once it holds its marker. Each
 * subfolder still waiting for its marker has an event subscription of its own (subfolders.ts), so
 * the marker's arrival is seen at once; rescans find what events missed. Loose files of the
 * watched directory are left alone (counted as ignored).
 */
import { lstatSync } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import { isIgnoredName } from '../protocol/names.ts';
import { hasMarker } from './unit-claim.ts';
import type { Watch } from './watch.ts';

/** The top folder of each name an event named (`job-7/_SUCCESS` → `job-7`): queued once its marker is there. */
export function onMarkerNames(w: Watch, names: readonly string[]): void {
  const tops = new Set(names.map((n) => n.split('/')[0]!));
  let found = false;
  for (const top of tops) found = look(w, top) || found;
  if (found) w.env.stats.lastEventAt = new Date().toISOString();
}

/** Queues `folder` if it is a unit with its marker; else, if a folder, watches it for the marker. */
function look(w: Watch, folder: string): boolean {
  const { env, inbox, folders } = w;
  if (!folders.isWatchable(folder, folder) || inbox.pending(folder)) return false;
  if (hasMarker(env, folder)) return inbox.enqueueName(folder);
  if (!folders.has(folder) && isFolder(w, folder)) {
    // The marker may have come between the look and the subscription: look again once subscribed.
    void folders.ensure(folder).then(() => {
      if (!w.life.stopping && hasMarker(env, folder) && inbox.enqueueName(folder)) env.stats.lastEventAt = new Date().toISOString();
    });
  }
  return false;
}

function isFolder(w: Watch, folder: string): boolean {
  try {
    return lstatSync(join(w.env.dir, folder), { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

/**
 * A rescan's listing: every subfolder holding its marker is queued, the others watched; the
 * watches of folders no longer there end. Returns how many loose files were left alone.
 */
export async function listMarkerFolders(w: Watch): Promise<number> {
  const { env, life, inbox, folders } = w;
  const seen = new Set<string>();
  let ignored = 0;
  let complete = true;
  let found = false;
  const dir = await opendir(env.dir, { bufferSize: 256 });
  for await (const entry of dir) {
    if (life.stopping || inbox.overflow) {
      complete = false;
      break; // the handle closes when the loop exits
    }
    const name = entry.name;
    if (!entry.isDirectory()) {
      if (!isIgnoredName(name)) ignored++;
      continue;
    }
    if (!folders.isWatchable(name, name)) continue;
    seen.add(name);
    if (inbox.pending(name)) continue;
    if (hasMarker(env, name)) {
      found = inbox.enqueueName(name) || found;
      continue;
    }
    await folders.ensure(name);
    // Subscribed now: a marker made from here on has its event; one made meanwhile is seen here.
    if (hasMarker(env, name)) found = inbox.enqueueName(name) || found;
  }
  if (complete) folders.keepOnly(seen);
  if (found) env.stats.lastEventAt = new Date().toISOString();
  return ignored;
}
