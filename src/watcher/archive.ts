/**
 * `onSuccess: 'archive'`: a committed file and its sentinel go to the archive folder instead of
 * being removed, once their commit is durable (the same moment a delete would happen, so a crash
 * in between is finished by recovery the same way). The archive is never watched: discovery reads
 * only the watched directory itself, or with `recursive` its subfolders but the archive's.
 */
import { cpSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ARCHIVE_DIR, READY_SUFFIX } from '../constants.ts';
import { ensureParentOf, exists, moveWithoutReplacing } from '../protocol/files.ts';
import { failedNameCandidates } from '../protocol/names.ts';
import type { SettledFile } from '../protocol/record.ts';
import type { WatchEnv } from './env.ts';

/** The archive folder of a watched directory (`archiveDir`, default `<dir>/archive`). */
export function archiveRoot(dir: string, archiveDir: string | undefined): string {
  return resolve(dir, archiveDir ?? ARCHIVE_DIR);
}

/**
 * Why `archiveDir` cannot hold a watched directory's archive, or undefined: the watched directory
 * itself would ingest its archive again.
 */
export function archiveDirProblem(dir: string, archiveDir: string | undefined): string | undefined {
  const root = archiveRoot(dir, archiveDir);
  if (root === resolve(dir))
    return `archiveDir ${JSON.stringify(archiveDir)} is the watched directory itself: archived files would be ingested again`;
  return undefined;
}

/** Where a file archived at `now` goes: the archive, or its subfolder of the day (UTC). */
export function archiveFolder(env: WatchEnv, now = new Date()): string {
  const root = archiveRoot(env.dir, env.options.archiveDir);
  return env.options.archiveByDate ? join(root, now.toISOString().slice(0, 10)) : root;
}

/**
 * Moves a committed file's staged copy and sentinel into the archive, under its own name when
 * that is free, else with its claim id before the extension (`orders.<claimId>.csv`). Sentinel
 * first, as everywhere. A failure to move leaves both in staging, committed: the next start
 * archives them (recovery finds them in the ledger).
 */
export function archiveStaged(
  env: WatchEnv,
  committed: { readonly stagedPath: string; readonly name: string; readonly claimId: string },
): SettledFile {
  const { name, claimId, stagedPath } = committed;
  const settled: SettledFile = { state: 'settled', name, claimId };
  try {
    const folder = archiveFolder(env);
    mkdirSync(folder, { recursive: true });
    const [plain, unique] = failedNameCandidates(name, claimId, env.plugins.match(name)?.extension ?? '');
    const taken = (n: string) => exists(join(folder, n)) || exists(join(folder, n + READY_SUFFIX));
    let target = taken(plain) ? unique : plain;
    ensureParentOf(folder, name); // a file of a subfolder keeps its path: archive/a/b/x.csv
    if (moveWithoutReplacing(stagedPath + READY_SUFFIX, join(folder, target + READY_SUFFIX)) === 'taken') {
      target = unique;
      moveWithoutReplacing(stagedPath + READY_SUFFIX, join(folder, target + READY_SUFFIX));
    }
    if (moveWithoutReplacing(stagedPath, join(folder, target)) === 'taken') moveWithoutReplacing(stagedPath, join(folder, unique));
    env.log.debug('archived', { file: name, claimId, to: join(folder, target) });
  } catch (error) {
    env.log.error('could not archive an ingested file; it stays in staging until the next start archives it', {
      file: name,
      claimId,
      error: String(error),
    });
  }
  return settled;
}

/**
 * `readyWhen: 'marker'`: a committed folder goes to the archive whole (`archive/<folder>/`, or
 * `<folder>.<claimId>/` when the name is taken), by one rename; on another filesystem copied, then
 * removed. A failure leaves it in staging, committed: the next start archives it.
 */
export function archiveUnit(
  env: WatchEnv,
  committed: { readonly stagedPath: string; readonly name: string; readonly claimId: string },
): SettledFile {
  const { name, claimId, stagedPath } = committed;
  try {
    const folder = archiveFolder(env);
    mkdirSync(folder, { recursive: true });
    const target = join(folder, exists(join(folder, name)) ? `${name}.${claimId}` : name);
    try {
      renameSync(stagedPath, target);
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EXDEV') throw error;
      cpSync(stagedPath, target, { recursive: true, errorOnExist: true, force: false });
      rmSync(stagedPath, { recursive: true, force: true });
    }
    env.log.debug('archived', { folder: name, claimId, to: target });
  } catch (error) {
    env.log.error('could not archive an ingested folder; it stays in staging until the next start archives it', {
      folder: name,
      claimId,
      error: String(error),
    });
  }
  return { state: 'settled', name, claimId };
}
