/**
 * `recursive`: one listing of the watched directory's tree for a rescan. Each subfolder is
 * subscribed before it is listed, so a file made in it after the listing has its event; a folder
 * found empty, and unchanged for `orphanGraceMs`, is removed (never the watched directory), and
 * a parent left empty by that goes in the same pass. Symbolic links to folders are not followed:
 * a listing's entry for a link is not a directory, so it is judged like any other file.
 */
import type { Dirent } from 'node:fs';
import { lstatSync, rmdirSync } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Watch } from './watch.ts';

/** One entry found: the Dirent and its path relative to the watched directory. False stops the walk. */
export type Visit = (entry: Dirent, name: string) => boolean;

/**
 * Lists the tree, calling `visit` for every entry but the folders it goes into. True when the
 * listing was complete (not stopped, and every folder read); then the watches of folders no
 * longer there end.
 */
export async function walkTree(w: Watch, visit: Visit): Promise<boolean> {
  const seen = new Set<string>();
  const now = Date.now();
  const result = await listFolder(w, '', visit, seen, now);
  if (result === 'stopped') return false;
  if (result !== 'incomplete') w.folders.keepOnly(seen);
  return result !== 'incomplete';
}

type Outcome = 'kept' | 'removed' | 'stopped' | 'incomplete';

async function listFolder(w: Watch, rel: string, visit: Visit, seen: Set<string>, now: number): Promise<Outcome> {
  const { env, life, folders } = w;
  const path = rel === '' ? env.dir : join(env.dir, rel);
  // Taken before the listing: removing an empty child changes the folder's own time.
  const changedAt = rel === '' ? 0 : lstatSync(path, { throwIfNoEntry: false })?.mtimeMs;
  if (changedAt === undefined) return 'kept'; // gone meanwhile
  if (rel !== '') {
    seen.add(rel);
    await folders.ensure(rel);
  }
  let left = 0;
  let complete = true;
  const children: { rel: string; name: string }[] = [];
  try {
    const dir = await opendir(path, { bufferSize: 256 });
    for await (const entry of dir) {
      const name = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory() && folders.isWatchable(name, entry.name)) {
        children.push({ rel: name, name: entry.name });
        continue;
      }
      left++;
      if (!visit(entry, name)) return 'stopped'; // the directory handle closes when the loop exits
    }
  } catch (error) {
    if (rel === '') throw error;
    env.log.warn('cannot list a subfolder; retried on the next rescan', { folder: rel, error: String(error) });
    return 'incomplete';
  }
  for (const child of children) {
    if (life.stopping) return 'stopped';
    const outcome = await listFolder(w, child.rel, visit, seen, now);
    if (outcome === 'stopped') return outcome;
    if (outcome === 'incomplete') complete = false;
    if (outcome !== 'removed') left++;
  }
  if (rel !== '' && left === 0 && now - changedAt >= env.options.orphanGraceMs && removeEmpty(w, path)) {
    folders.drop(rel);
    seen.delete(rel);
    return 'removed';
  }
  return complete ? 'kept' : 'incomplete';
}

/** rmdir removes only an empty folder: a file made in it since the listing keeps it. */
function removeEmpty(w: Watch, path: string): boolean {
  try {
    rmdirSync(path);
    w.env.log.debug('removed an empty subfolder', { folder: path });
    return true;
  } catch {
    return false;
  }
}
