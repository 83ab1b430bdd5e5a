/**
 * `readyWhen: 'marker'`: the claim of a folder. The folder is renamed into this process's staging
 * folder as a whole (`<claimId>@<folder>`, one rename: whoever moves it owns it, as with a
 * sentinel), then its members are read: every data file (recursively, by extension) opened
 * without following links, the marker and the other non-data files (see `isUnitExtra`) set
 * aside. A member that is not a regular file, or that no ingester takes, fails the whole folder.
 */
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { ingestError } from '../errors.ts';
import { type OpenedFile, renameIfPresent, reopenStaged } from '../protocol/files.ts';
import { isUnitExtra, newClaimId, unitStagedName } from '../protocol/names.ts';
import type { PluginMatch } from '../plugins.ts';
import type { IngestError } from '../types.ts';
import type { WatchEnv } from './env.ts';
import { notRegularFile, unknownExtension } from './fail.ts';
import type { Watch } from './watch.ts';

/** A folder in staging, with its data files held open (named `<folder>/<path inside>`). */
export interface ClaimedUnit {
  readonly folder: string;
  readonly claimId: string;
  readonly stagedPath: string;
  readonly files: readonly { readonly file: OpenedFile; readonly match: PluginMatch }[];
  /** Every entry inside at the claim (`path`, or `path/` for a folder): a listing before the commit must find the same. */
  readonly members: readonly string[];
}

/** Where a staged folder is, and why it fails as a whole. */
export interface FailedUnit {
  readonly folder: string;
  readonly claimId: string;
  readonly stagedPath: string;
  readonly error: IngestError;
}

/** How reading a staged folder ended: its files, or the failure of the whole folder. */
export type UnitOutcome = { readonly state: 'claimed'; readonly unit: ClaimedUnit } | ({ readonly state: 'failed' } & FailedUnit);

/** Claims `folder` (a subfolder of the watched directory); undefined: not to be taken (no marker, gone, another process's). */
export function claimUnit(w: Watch, folder: string): UnitOutcome | undefined {
  const { env } = w;
  if (w.life.stopping || !hasMarker(env, folder)) return undefined;
  const source = join(env.dir, folder);
  if (lstatSync(source, { throwIfNoEntry: false })?.isDirectory() !== true) return undefined;
  const claimId = newClaimId();
  const stagedPath = join(env.staging, unitStagedName(claimId, folder));
  try {
    // One rename of the folder: atomic, staging being on the watched directory's filesystem (mount.ts).
    if (!renameIfPresent(source, stagedPath)) return undefined;
  } catch (error) {
    env.log.warn('cannot claim a marker folder; retried on the next rescan', { folder, error: String(error) });
    return undefined;
  }
  return readUnit(env, folder, claimId, stagedPath);
}

/** The folder holds its marker. */
export function hasMarker(env: WatchEnv, folder: string): boolean {
  try {
    return lstatSync(join(env.dir, folder, env.options.marker), { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}

/** Opens the data files of a staged folder (at its claim, and again in recovery). */
export function readUnit(env: WatchEnv, folder: string, claimId: string, stagedPath: string): UnitOutcome {
  const files: { file: OpenedFile; match: PluginMatch }[] = [];
  const failed = (error: IngestError): UnitOutcome => {
    for (const f of files) f.file.close();
    return { state: 'failed', folder, claimId, stagedPath, error };
  };
  let listed: Listed[];
  try {
    listed = listMembers(stagedPath);
  } catch (error) {
    return failed(unreadable(folder, error));
  }
  for (const entry of listed) {
    if (entry.stats.isDirectory() || isUnitExtra(entry.rel, env.options.marker)) continue;
    const name = `${folder}/${entry.rel}`;
    if (!entry.stats.isFile()) return failed(notRegularFile(name, `is ${typeOf(entry.stats)}`, folder));
    const match = env.plugins.match(entry.rel);
    if (!match) return failed(unknownExtension({ name }, env.plugins.extensions(), folder));
    const opened = reopenStaged(join(stagedPath, entry.rel), name, { claimId, extension: match.extension });
    if (opened.status === 'claimed') files.push({ file: opened.file, match });
    else if (opened.status === 'unsafe') return failed(notRegularFile(name, opened.reason, folder));
    else return failed(unreadable(name, opened.status === 'error' ? opened.error : 'gone while being read'));
  }
  files.sort((a, b) => (a.file.name < b.file.name ? -1 : 1));
  return { state: 'claimed', unit: { folder, claimId, stagedPath, files, members: membersOf(listed) } };
}

interface Listed {
  readonly rel: string;
  readonly stats: Stats;
}

/**
 * Every entry under `root` (lstat: links are not followed), but inside the folders that are
 * themselves not data (`_temporary/`, dot-folders).
 */
function listMembers(root: string, rel = ''): Listed[] {
  const out: Listed[] = [];
  for (const name of readdirSync(rel === '' ? root : join(root, rel)).sort()) {
    const path = rel === '' ? name : `${rel}/${name}`;
    const stats = lstatSync(join(root, path));
    out.push({ rel: path, stats });
    if (stats.isDirectory() && !name.startsWith('_') && !name.startsWith('.')) out.push(...listMembers(root, path));
  }
  return out;
}

function membersOf(listed: readonly Listed[]): string[] {
  return listed.map((e) => (e.stats.isDirectory() ? `${e.rel}/` : e.rel));
}

/** What is in the staged folder now differs from what its claim found: undefined when the same. */
export function unitChangedSinceClaim(unit: ClaimedUnit): string | undefined {
  let now: string[];
  try {
    now = membersOf(listMembers(unit.stagedPath));
  } catch (error) {
    return `cannot be listed again (${String(error)})`;
  }
  const before = new Set(unit.members);
  const added = now.find((m) => !before.has(m));
  if (added !== undefined) return `${added} appeared in it after it was claimed`;
  const after = new Set(now);
  const gone = unit.members.find((m) => !after.has(m));
  if (gone !== undefined) return `${gone} went away after it was claimed`;
  for (const { file } of unit.files) {
    const changed = file.changedSinceClaim();
    if (changed) return `${file.name}: ${changed}`;
  }
  return undefined;
}

function typeOf(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isBlockDevice() || st.isCharacterDevice()) return 'a device';
  return 'not a regular file';
}

function unreadable(name: string, error: unknown): IngestError {
  return ingestError(
    'io',
    'UNIT_UNREADABLE',
    `${name}: cannot be read (${String(error)}); nothing was committed`,
    'Make the folder and its files readable by the watcher, then drop the folder again with its marker.',
    { file: name },
  );
}
