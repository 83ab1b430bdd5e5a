/**
 * `order: 'name'` across processes: a file never overtakes a ready file whose name sorts before
 * it, whichever process on the inbox has it. Each process takes its own queue in name order
 * (inbox.ts); this gate, asked before a file is claimed, makes the rule hold between processes:
 *
 * - a ready file with an earlier name is in the watched directory (one this process has not
 *   queued yet, or one it lost the race for and another process is claiming): this process
 *   queues it and takes the earliest next;
 * - a file with an earlier name is staged, by any process, live or dead, and the ledger does not
 *   list its claim: its transaction has not committed, so this file waits until it has (or the
 *   file failed), taken over first if its process died. A committed file may stay staged a while
 *   (on Hyper until the next checkpoint): the ledger, not the staging folder, says it is done.
 *
 * The directory is listed before staging, so a file being claimed meanwhile is seen in one or the
 * other: a claim renames it from the first to the second. A file that becomes ready after the
 * listing is applied when it comes, as within one process. Each process applies one file at a
 * time in this order (resolve.ts), and the wait happens before the file's transaction begins, so
 * its statements see the earlier file's commit.
 */
import { type Dirent, lstatSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { dataNameOf, isStableCandidate, parseStagedName } from '../protocol/names.ts';
import { committedClaims } from '../store/ledger.ts';
import { dataNameOfRejected } from './rejected.ts';
import { stagedNamesUnder } from './staged-listing.ts';
import type { Watch } from './watch.ts';

/** What keeps a file from going now. */
export type Earlier =
  /** Ready files (their queue names) with earlier names: queue them, take the earliest. */
  | { readonly ready: readonly string[] }
  /** A staged file with an earlier name (its data name): wait until it has settled. */
  | { readonly staged: string };

/** Between two looks at staging while an earlier file settles elsewhere. */
export const EARLIER_POLL_MS = 100;

/** What comes before `queueName` (a sentinel's name, or a stable file's), or undefined: it may go. */
export async function earlierThan(w: Watch, queueName: string): Promise<Earlier | undefined> {
  const name = dataNameOf(queueName) ?? queueName;
  const ready = await readyBefore(w, name);
  if (ready.length > 0) return { ready };
  const staged = await stagedNamesUnder(w.env.stagingRoot);
  // Staging kept changing for five listings in a row: a takeover is moving files; look again.
  if (!staged) return { staged: '(staging is changing)' };
  const before = new Map<string, string>();
  for (const entry of staged) {
    const parsed = parseStagedName(entry);
    const data = parsed && dataNameOfStaged(parsed.name);
    if (parsed && data !== undefined && data < name) before.set(parsed.claimId, data);
  }
  if (before.size === 0) return undefined;
  const committed = await committedClaims(w.pool.get(), [...before.keys()]);
  const open = [...before].filter(([claimId]) => !committed.has(claimId)).map(([, data]) => data);
  return open.length === 0 ? undefined : { staged: open.sort()[0]! };
}

/** A staged name's data file: `x.csv.ready` and `x.csv.rejected.csv` are `x.csv`'s. */
function dataNameOfStaged(staged: string): string {
  return dataNameOf(staged) ?? dataNameOfRejected(staged) ?? staged;
}

/**
 * The queue names of ready files in the watched directory (its subfolders too, with `recursive`)
 * whose names sort before `name`: in sentinel mode a data file with its sentinel, in stable mode
 * a file unchanged for `stableMs` (the settling itself is this process's: it queues the file when
 * it is due; here it only keeps the later file back).
 */
async function readyBefore(w: Watch, name: string): Promise<string[]> {
  const { env } = w;
  const stable = env.options.readyWhen === 'stable';
  const found: string[] = [];
  const now = Date.now();
  const visit = (folder: string, entries: readonly Dirent[]): string[] => {
    const subfolders: string[] = [];
    const names = new Set(entries.map((e) => e.name));
    for (const e of entries) {
      const rel = folder === '' ? e.name : `${folder}/${e.name}`;
      if (e.isDirectory()) {
        // Every path under `rel/` sorts after `name` once `rel/` does: not listed.
        if (env.options.recursive && w.folders.isWatchable(rel, e.name) && `${rel}/` < name) subfolders.push(rel);
        continue;
      }
      if (stable) {
        if (rel < name && isStableCandidate(rel) && env.selected(rel) && settled(join(env.dir, rel), now, env.options.stableMs))
          found.push(rel);
        continue;
      }
      const data = dataNameOf(e.name);
      if (data === undefined || !names.has(data)) continue;
      const relData = folder === '' ? data : `${folder}/${data}`;
      if (relData < name && env.selected(relData)) found.push(folder === '' ? e.name : `${folder}/${e.name}`);
    }
    return subfolders;
  };
  const folders = [''];
  while (folders.length > 0) {
    const folder = folders.shift()!;
    const entries = await readdir(folder === '' ? env.dir : join(env.dir, folder), { withFileTypes: true }).catch(() => []);
    folders.push(...visit(folder, entries));
  }
  return found.sort();
}

/** Unchanged for `stableMs` by its modification time (this process's own looks decide when it is taken). */
function settled(path: string, now: number, stableMs: number): boolean {
  const st = lstatSync(path, { throwIfNoEntry: false });
  return st !== undefined && st.isFile() && now - st.mtimeMs >= stableMs;
}
