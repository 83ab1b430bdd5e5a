/**
 * `readyWhen: 'marker'`: recovery of claimed folders (a dead owner's, taken over, or commits a
 * server restart may have lost). The ledger decides for the folder as a whole, its files having
 * committed in one transaction under its one claim id: committed, it is only removed (or
 * archived); not, every file of it is ingested again, together, under that claim id.
 */
import { join } from 'node:path';
import { exists } from '../protocol/files.ts';
import { unitStagedName } from '../protocol/names.ts';
import type { CommittedFile } from '../protocol/record.ts';
import { committedClaims } from '../store/ledger.ts';
import { settleStaged } from './durability.ts';
import type { WatchEnv } from './env.ts';
import { readUnit } from './unit-claim.ts';
import { failUnit } from './unit-fail.ts';
import { finishUnit } from './unit-finish.ts';
import type { Watch } from './watch.ts';

/** A claimed folder in this process's staging folder; `counted`: as for `StagedClaim`. */
export interface StagedUnit {
  readonly claimId: string;
  readonly folder: string;
  readonly counted?: CommittedFile;
}

export async function recoverUnits(w: Watch, units: readonly StagedUnit[]): Promise<void> {
  if (units.length === 0) return;
  const { env } = w;
  const committed = await committedClaims(
    w.pool.get(),
    units.map((u) => u.claimId),
  );
  for (const { claimId, folder, counted } of units) {
    const stagedPath = join(env.staging, unitStagedName(claimId, folder));
    if (!exists(stagedPath)) continue;
    env.stats.recovered++;
    if (committed.has(claimId)) {
      settleStaged(env, { stagedPath, name: folder, claimId, unit: { files: 0 } }, false);
      env.log.info('recovered: already committed, cleaned up', { folder, claimId });
      continue;
    }
    env.log.info('recovered: ingesting a folder whose commit was not durable, or never happened', { folder, claimId });
    if (counted) uncount(env, counted);
    const read = readUnit(env, folder, claimId, stagedPath);
    if (read.state === 'failed') await failUnit(w, read);
    else await finishUnit(w, read.unit);
  }
}

/** Counted when it first committed; counted again when it lands this time. */
function uncount(env: WatchEnv, counted: CommittedFile): void {
  const { stats } = env;
  stats.filesIngested -= counted.unit?.files ?? 1;
  stats.rowsIngested -= counted.rows;
  stats.bytesIngested -= counted.bytes;
}
