/**
 * Replaying a failed file: once its problem is fixed (in place, in `failed/`), the file goes back
 * into the watched directory under its original name, its old sentinel and `.error` report are
 * removed, and a new sentinel is created last, so the watcher sees a complete drop.
 */
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ERROR_SUFFIX, FAILED_DIR, READY_SUFFIX } from './constants.ts';
import { DropError, existingDrop, fsyncDirectory, invalidDropName } from './drop.ts';
import { exists, isGone } from './files.ts';

export interface ReplayResult {
  /** Where the file is now (in the watched directory). */
  readonly path: string;
  readonly readyPath: string;
  /** The name it had in failed/ (differs when an earlier failure held the original name). */
  readonly failedAs: string;
}


async function removeIfThere(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (!isGone(error)) throw error;
  }
}

/** The original name from the `.error` report, when it is readable and a usable name. */
async function originalName(errorPath: string): Promise<string | undefined> {
  try {
    const report = JSON.parse(await readFile(errorPath, 'utf8')) as { file?: unknown };
    return typeof report.file === 'string' && invalidDropName(report.file) === undefined ? report.file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Moves `failedFile` (a path inside `<dir>/failed/`; its `.error` or `.ready` is accepted too) back
 * into `<dir>` under the name it was dropped as, and creates its sentinel. Refuses with a
 * DropError when the file is not in a failed/ folder, is missing, or its name is taken in `<dir>`.
 *
 * @example
 * import { replayFailed } from 'hyperwatch';
 * await replayFailed('./inbox/failed/orders.csv'); // after fixing the file
 */
export async function replayFailed(failedFile: string): Promise<ReplayResult> {
  let failedPath = resolve(failedFile);
  for (const suffix of [ERROR_SUFFIX, READY_SUFFIX]) {
    if (failedPath.endsWith(suffix) && exists(failedPath.slice(0, -suffix.length))) failedPath = failedPath.slice(0, -suffix.length);
  }
  const failedDir = dirname(failedPath);
  if (basename(failedDir) !== FAILED_DIR) {
    throw new DropError('REPLAY_NOT_FAILED', `${failedFile} is not in a ${FAILED_DIR}/ folder; give the path of a file in <watched dir>/${FAILED_DIR}/.`);
  }
  if (!exists(failedPath)) {
    throw new DropError('REPLAY_MISSING', `${failedPath} does not exist; list ${failedDir} for the failed files.`);
  }
  const failedAs = basename(failedPath);
  const dir = dirname(failedDir);
  const name = (await originalName(failedPath + ERROR_SUFFIX)) ?? failedAs;
  const path = join(dir, name);
  const readyPath = path + READY_SUFFIX;
  const taken = existingDrop(path);
  if (taken) {
    throw new DropError('REPLAY_EXISTS', `${taken} already exists (a newer drop of ${name}); nothing was moved. Wait until the watcher has taken it, then replay again.`);
  }
  // Data first, sentinel last: the watcher must never see the sentinel before the data.
  await rename(failedPath, path);
  await fsyncDirectory(dir);
  await removeIfThere(failedPath + READY_SUFFIX);
  await removeIfThere(failedPath + ERROR_SUFFIX);
  await fsyncDirectory(failedDir);
  await (await open(readyPath, 'wx')).close();
  await fsyncDirectory(dir);
  return { path, readyPath, failedAs };
}
