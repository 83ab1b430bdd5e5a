/**
 * Recovery: claims found in staging (left by a dead process and taken over, see takeover.ts, or
 * committed before a server restart lost them, see durability.ts) are settled by the ledger: committed
 * ones are only removed, the others claimed again
 * and ingested under their claim id.
 */
import { join } from 'node:path';
import { READY_SUFFIX } from '../constants.ts';
import { exists, removeIfPresent, reopenStaged } from '../protocol/files.ts';
import { committedClaims } from '../store/ledger.ts';
import { parseStagedName, stagedName } from '../protocol/names.ts';
import type { ClaimedFile, CommittedFile } from '../protocol/record.ts';
import { unclaimSentinel } from './claim.ts';
import { settleStaged } from './durability.ts';
import { batchLimit, type WatchEnv } from './env.ts';
import { finishAll } from './group.ts';
import { dropStagesOfClaim } from './modes.ts';
import { recoverUnits } from './unit-recover.ts';
import { dataNameOfRejected, rejectedSuffix, settleRejected } from './rejected.ts';
import type { Watch } from './watch.ts';

/** A claim in staging: its id and the names staged under it (the data file and its sentinel). */
export interface StagedClaim {
  readonly claimId: string;
  readonly names: readonly string[];
  /** Already counted as committed (a commit a server restart may have lost): counted again when it lands. */
  readonly counted?: CommittedFile;
  /** `readyWhen: 'marker'`: a claimed folder (`names` then empty), see unit-recover.ts. */
  readonly unit?: string;
}

/** Staged names (`<claimId>~<name>`) grouped by claim. */
export function claimsOf(names: readonly string[]): StagedClaim[] {
  const claims = new Map<string, string[]>();
  for (const staged of names) {
    const parsed = parseStagedName(staged);
    if (!parsed) continue;
    claims.set(parsed.claimId, [...(claims.get(parsed.claimId) ?? []), parsed.name]);
  }
  return [...claims].map(([claimId, names]) => ({ claimId, names }));
}

/**
 * Settles staged claims by the ledger: committed ones are only removed, the others ingested
 * again (small ones in groups), under their claim id: at start-up (before the sweep), and after
 * a server restart lost commits that were not yet checkpointed (dispatch is paused meanwhile).
 */
export async function recoverClaims(w: Watch, all: readonly StagedClaim[]): Promise<void> {
  let claims = all;
  await recoverUnits(
    w,
    claims.flatMap((c) =>
      c.unit === undefined ? [] : [{ claimId: c.claimId, folder: c.unit, ...(c.counted ? { counted: c.counted } : {}) }],
    ),
  );
  // In the order they were claimed (a claim id begins with its time): the modes other than append
  // and `order: 'name'` apply files one after the other, and a dead process's files go on so.
  claims = claims.filter((c) => c.unit === undefined).sort((a, b) => (a.claimId < b.claimId ? -1 : a.claimId > b.claimId ? 1 : 0));
  if (claims.length === 0) return;
  const { env } = w;
  const committed = await committedClaims(
    w.pool.get(),
    claims.map((c) => c.claimId),
  );
  const reclaimed: ClaimedFile[] = [];
  for (const { claimId, names, counted } of claims) {
    // The data file has the shortest name: its sentinel is `<data>.ready`.
    const name = names.reduce((a, b) => (a.length <= b.length ? a : b));
    const stagedPath = join(env.staging, stagedName(claimId, name));
    if (
      names.length === 1 &&
      name.endsWith(READY_SUFFIX) &&
      !exists(join(env.staging, stagedName(claimId, name.slice(0, -READY_SUFFIX.length))))
    ) {
      // Only a sentinel: the run stopped between taking it and claiming its data file.
      unclaimSentinel(stagedPath, join(env.dir, name));
      continue;
    }
    const rejectedOf = names.length === 1 ? dataNameOfRejected(name) : undefined;
    if (rejectedOf !== undefined && committed.has(claimId)) {
      // Only the rejected rows of a commit whose files are gone: they still belong in failed/.
      settleRejected(env, { stagedPath: join(env.staging, stagedName(claimId, rejectedOf)), name: rejectedOf, claimId });
      continue;
    }
    if (committed.has(claimId)) {
      // Its rejected rows (onBadRows 'skip') are staged beside it (a commit re-checked after a
      // server restart does not list them): into failed/ before it goes.
      settleStaged(
        env,
        { stagedPath, name, claimId },
        names.includes(name + rejectedSuffix(name)) || exists(stagedPath + rejectedSuffix(name)),
      );
      await dropStagesOfClaim(w, claimId);
      env.log.info('recovered: already committed, cleaned up', { file: name, claimId });
      env.stats.recovered++;
      continue;
    }
    // Rejected rows of an attempt that never committed: the attempt now writes them anew.
    if (names.includes(name + rejectedSuffix(name))) removeIfPresent(stagedPath + rejectedSuffix(name));
    const match = env.plugins.match(name);
    const reopened = reopenStaged(stagedPath, name, { claimId, extension: match?.extension ?? '' });
    if (reopened.status !== 'claimed') {
      removeIfPresent(stagedPath + READY_SUFFIX);
      continue;
    }
    await dropStagesOfClaim(w, claimId);
    env.log.info('recovered: ingesting a file whose commit was not durable', { file: name, claimId });
    env.stats.recovered++;
    if (counted) uncount(env, counted);
    reclaimed.push({ state: 'claimed', file: reopened.file, match });
    // A few groups' worth at a time: each reopened file holds a descriptor until it settles.
    if (reclaimed.length >= batchLimit(env)) await finishAll(w, reclaimed.splice(0));
  }
  await finishAll(w, reclaimed);
}

/** Counted when it first committed; counted again when it lands this time. */
function uncount(env: WatchEnv, counted: CommittedFile): void {
  const { stats } = env;
  if (counted.duplicate) {
    stats.duplicatesSkipped--;
    return;
  }
  stats.filesIngested--;
  stats.rowsIngested -= counted.rows;
  if (counted.rejected) stats.rowsRejected -= counted.rejected;
  stats.bytesIngested -= counted.bytes;
}
