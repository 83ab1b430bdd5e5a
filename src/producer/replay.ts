/**
 * Replaying a failed file: once its problem is fixed (in place, in `failed/`), the file goes back
 * into the watched directory under its original name (a file of a subfolder, `failed/a/b/x.csv`,
 * into `a/b/`), its old sentinel and `.error` report are removed, and a new sentinel is created
 * last, so the watcher sees a complete drop.
 */
import { mkdir, open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { ERROR_SUFFIX, FAILED_DIR, READY_SUFFIX } from '../constants.ts';
import { DropError, existingDrop, fsyncDirectory, invalidDropName } from './drop.ts';
import { exists, isGone } from '../protocol/files.ts';

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
 * A file of a subfolder that failed under `recursive` (`failed/a/b/x.csv`): its report says the
 * path it was dropped at (`file`) and the one it has in failed/ (`failedAs`); the watched directory
 * is what is left of the path. Undefined unless the report says so and the path agrees with it.
 */
async function nestedFailure(failedPath: string): Promise<{ dir: string; name: string; failedAs: string } | undefined> {
  let report: { file?: unknown; failedAs?: unknown };
  try {
    report = JSON.parse(await readFile(failedPath + ERROR_SUFFIX, 'utf8')) as { file?: unknown; failedAs?: unknown };
  } catch {
    return undefined;
  }
  const { file, failedAs } = report;
  if (typeof file !== 'string' || typeof failedAs !== 'string' || !file.includes('/') || !validRelative(file)) return undefined;
  const tail = join(sep, FAILED_DIR, ...failedAs.split('/'));
  if (!validRelative(failedAs) || !failedPath.endsWith(tail)) return undefined;
  return { dir: failedPath.slice(0, -tail.length), name: file, failedAs };
}

/** `a/b/x.csv`: folders that are neither empty, `.`/`..` nor dot-folders, and a usable drop name last. */
function validRelative(path: string): boolean {
  const segments = path.split('/');
  const last = segments.pop()!;
  return segments.every((s) => s !== '' && !s.startsWith('.')) && invalidDropName(last) === undefined;
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
  const nested = basename(failedDir) === FAILED_DIR ? undefined : await nestedFailure(failedPath);
  if (basename(failedDir) !== FAILED_DIR && !nested) {
    throw new DropError(
      'REPLAY_NOT_FAILED',
      `${failedFile} is not in a ${FAILED_DIR}/ folder; give the path of a file in <watched dir>/${FAILED_DIR}/.`,
    );
  }
  if (!exists(failedPath)) {
    throw new DropError('REPLAY_MISSING', `${failedPath} does not exist; list ${failedDir} for the failed files.`);
  }
  const failedAs = nested?.failedAs ?? basename(failedPath);
  const dir = nested?.dir ?? dirname(failedDir);
  const name = nested?.name ?? (await originalName(failedPath + ERROR_SUFFIX)) ?? failedAs;
  const path = join(dir, name);
  // A file of a subfolder (`recursive`) goes back to its folder, which may have gone since.
  if (nested) await mkdir(dirname(path), { recursive: true });
  const readyPath = path + READY_SUFFIX;
  const taken = existingDrop(path);
  if (taken) {
    throw new DropError(
      'REPLAY_EXISTS',
      `${taken} already exists (a newer drop of ${name}); nothing was moved. Wait until the watcher has taken it, then replay again.`,
    );
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
