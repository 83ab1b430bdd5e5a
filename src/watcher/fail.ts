/**
 * The `failed` state: a file and its sentinel go to failed/ with a `.error` report next to them.
 * Also the reports the protocol itself gives (the plugins and the database give the others).
 */
import { join } from 'node:path';
import { ERROR_SUFFIX, FAILED_DIR, READY_SUFFIX } from '../constants.ts';
import { errorReport, ingestError } from '../errors.ts';
import { ensureParentOf, exists, type OpenedFile, renameIfPresent, writeNewFile } from '../protocol/files.ts';
import { failedNameCandidates } from '../protocol/names.ts';
import type { FailedFile } from '../protocol/record.ts';
import { lastErrorOf } from '../observe/stats.ts';
import type { IngestError } from '../types.ts';
import type { Watch } from './watch.ts';

/**
 * Moves a failed file and its sentinel into failed/, under a name no earlier failure holds, and
 * writes the `.error` report next to them. Serialized, so two failures never pick one name.
 */
export async function fail(w: Pick<Watch, 'env' | 'failLock'>, failed: FailedFile): Promise<void> {
  const { env } = w;
  const { error } = failed;
  const release = await w.failLock.acquire();
  try {
    const [plain, unique] = failedNameCandidates(failed.name, failed.claimId, failed.extension);
    const taken = (n: string) =>
      exists(join(env.failedDir, n)) || exists(join(env.failedDir, n + ERROR_SUFFIX)) || exists(join(env.failedDir, n + READY_SUFFIX));
    const name = taken(plain) ? unique : plain;
    const target = join(env.failedDir, name);
    // A file of a subfolder keeps its path: failed/a/b/x.csv, its .error beside it.
    ensureParentOf(env.failedDir, name);
    // Sentinel before data, as everywhere: a sentinel alone in staging means an unfinished claim.
    renameIfPresent(failed.readyPath, target + READY_SUFFIX);
    if (failed.dataPath) renameIfPresent(failed.dataPath, target);
    const report = {
      ...errorReport(error),
      file: failed.name,
      failedAs: name,
      claimId: failed.claimId,
      table: env.target,
      directory: env.dir,
      time: new Date().toISOString(),
    };
    await writeNewFile(target + ERROR_SUFFIX, `${JSON.stringify(report, null, 2)}\n`);
    env.stats.filesFailed++;
    env.stats.lastError = lastErrorOf(error, failed.name);
    env.log.error('failed', {
      file: failed.name,
      movedTo: join(FAILED_DIR, name),
      code: error.code,
      error: error.message,
      hint: error.hint,
    });
  } catch (moveError) {
    env.log.error('could not move a failed file aside', { file: failed.name, error: String(moveError), cause: error.message });
  } finally {
    release();
  }
}

/** A marker folder changed between its claim and its commit (`readyWhen: 'marker'`). */
export function unitChanged(folder: string, how: string, marker: string): IngestError {
  return ingestError(
    'data',
    'CHANGED_AFTER_READY',
    `folder ${folder} changed after its ${marker} appeared (${how}); nothing of it was committed`,
    `Producers must finish every file of the folder before writing ${marker} last; then drop the complete folder again.`,
    { file: folder },
  );
}

/** `stableMs`: the file was taken as stable (`readyWhen: 'stable'`), not by its `.ready`. */
export function changedAfterReady(file: OpenedFile, how: string, stableMs?: number): IngestError {
  if (stableMs !== undefined)
    return ingestError(
      'data',
      'CHANGED_AFTER_READY',
      `${file.name} changed after it had stayed the same for ${stableMs} ms (${how}); nothing was committed`,
      'Its producer paused longer than stableMs while writing: raise stableMs (--stable-ms), or have it write to a temporary ' +
        'name (*.tmp, *.part) and rename the file when done; then drop the complete file again.',
      { file: file.name },
    );
  return ingestError(
    'data',
    'CHANGED_AFTER_READY',
    `${file.name} changed after its .ready appeared (${how}); nothing was committed`,
    'Producers must finish writing (write to a temporary name, then rename) before creating the .ready file; then drop the ' +
      'complete file again.',
    { file: file.name },
  );
}

/** `unit`: the file is a member of that marker folder (`readyWhen: 'marker'`), which fails whole. */
export function unknownExtension(file: { readonly name: string }, known: readonly string[], unit?: string): IngestError {
  if (unit !== undefined)
    return ingestError(
      'data',
      'UNKNOWN_EXTENSION',
      `${file.name}: no ingester for this file's extension (known: ${known.join(', ')}), so nothing of folder ${unit} was committed`,
      `Remove or rename that file (names starting with _ or . and *.crc files are set aside), or add an ingester plugin for it; ` +
        `then drop the folder ${unit} again with its marker.`,
      { file: file.name },
    );
  return ingestError(
    'config',
    'UNKNOWN_EXTENSION',
    `${file.name}: no ingester for this file's extension (known: ${known.join(', ')})`,
    'Rename the file with one of the known extensions, or add an ingester plugin for it (WatchOptions.plugins), then replay it.',
    { file: file.name },
  );
}

/** `unit`: as for `unknownExtension`. */
export function notRegularFile(dataName: string, reason: string, unit?: string): IngestError {
  if (unit !== undefined)
    return ingestError(
      'security',
      'NOT_A_REGULAR_FILE',
      `${dataName} ${reason}; only regular files are ingested, so nothing of folder ${unit} was committed`,
      `Put only regular files in the folder (no symlinks, pipes or devices), then drop the folder ${unit} again with its marker.`,
      { file: dataName },
    );
  return ingestError(
    'security',
    'NOT_A_REGULAR_FILE',
    `${dataName} ${reason}; only regular files are ingested`,
    'Write the data to a temporary name and rename it to its final name (no symlinks, pipes or directories), then create the .ready file.',
    { file: dataName },
  );
}

export function orphanReady(readyName: string, dataName: string, seconds: number): IngestError {
  return ingestError(
    'data',
    'ORPHAN_READY',
    `${readyName} has no data file ${dataName} (waited ${seconds} s)`,
    `Write ${dataName} completely (to a temporary name, then rename it) before creating ${readyName}; then drop both again.`,
    { file: dataName },
  );
}
