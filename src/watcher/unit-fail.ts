/**
 * `readyWhen: 'marker'`: a folder that fails goes to failed/ whole, as `failed/<folder>/` (or
 * `failed/<folder>.<claimId>/` when an earlier failure holds the name), with one report beside it,
 * `failed/<folder>.error`, naming the member at fault. Nothing of it was committed.
 */
import { join } from 'node:path';
import { ERROR_SUFFIX, FAILED_DIR } from '../constants.ts';
import { errorReport } from '../errors.ts';
import { exists, renameIfPresent, writeNewFile } from '../protocol/files.ts';
import { lastErrorOf } from '../observe/stats.ts';
import type { FailedUnit } from './unit-claim.ts';
import type { Watch } from './watch.ts';

export async function failUnit(w: Pick<Watch, 'env' | 'failLock'>, failed: FailedUnit): Promise<void> {
  const { env } = w;
  const { error, folder, claimId } = failed;
  const release = await w.failLock.acquire();
  try {
    const taken = (n: string) => exists(join(env.failedDir, n)) || exists(join(env.failedDir, n + ERROR_SUFFIX));
    const name = taken(folder) ? `${folder}.${claimId}` : folder;
    const target = join(env.failedDir, name);
    renameIfPresent(failed.stagedPath, target);
    const report = {
      ...errorReport(error),
      folder,
      failedAs: `${name}/`,
      claimId,
      table: env.target,
      directory: env.dir,
      time: new Date().toISOString(),
    };
    await writeNewFile(target + ERROR_SUFFIX, `${JSON.stringify(report, null, 2)}\n`);
    env.stats.filesFailed++;
    env.stats.lastError = lastErrorOf(error, folder);
    env.log.error('failed', { folder, movedTo: join(FAILED_DIR, `${name}/`), code: error.code, error: error.message, hint: error.hint });
  } catch (moveError) {
    env.log.error('could not move a failed folder aside', { folder, error: String(moveError), cause: error.message });
  } finally {
    release();
  }
}
