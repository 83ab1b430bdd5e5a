/**
 * One file alone: `claimed → ingesting → committed → settled`, or `failed`; and what every
 * committed file (alone or in a group) adds to the stats and the log, written once.
 */
import type { OpenedFile } from '../protocol/files.ts';
import { type ClaimedFile, type CommittedFile, committedClaim, failedClaim, type IngestingFile } from '../protocol/record.ts';
import { observe } from '../observe/stats.ts';
import { attemptOne } from './attempt.ts';
import type { EarlyBegin } from './early.ts';
import { fail, unknownExtension } from './fail.ts';
import { stillOurs } from './lease.ts';
import { MAX_PLUGIN_RETRIES, POISON_FILE_ATTEMPTS, type Retried, withRetries } from './retry.ts';
import type { Watch } from './watch.ts';

/** Ingests a claimed file and settles it: removed when committed, failed/ when not. `early`: see early.ts. */
export async function finishOne(w: Watch, claimed: ClaimedFile, early?: EarlyBegin): Promise<void> {
  const { file, match } = claimed;
  const started = performance.now();
  const ingesting: IngestingFile = { state: 'ingesting', file, match, startedAt: Date.now() };
  w.active.begin(file, ingesting.startedAt);
  let outcome: Retried<number>;
  try {
    outcome = await ingest(w, ingesting, early);
  } finally {
    w.active.end(file);
    file.close();
  }
  switch (outcome.state) {
    case 'committed':
      landed(w, committedClaim(file, outcome.rows, outcome.epoch, false, outcome.rejected), performance.now() - started);
      return;
    case 'claimed':
      w.env.log.info('stopping: file left claimed for the next start', { file: file.name, claimId: file.claimId });
      return;
    case 'failed':
      if (await claimTakenOver(w)) {
        w.env.log.warn('not failing a file whose claim was taken over: the process that took it finishes it', {
          file: file.name,
          claimId: file.claimId,
          error: outcome.error.message,
        });
        return;
      }
      await fail(w, failedClaim(file, outcome.error));
  }
}

/**
 * Whether another process took this one's claims: a load that failed may have failed because that
 * process made its own attempt meanwhile (its staging tables, its files), and the file is its now.
 * The database away: not known, so the failure stands, as before leases.
 */
export async function claimTakenOver(w: Watch): Promise<boolean> {
  if (w.lease.fenced) return true;
  // No lease held (not yet taken, or given back at a stop): no other process can have taken the claim.
  if (!w.lease.registered || w.lease.released) return false;
  try {
    return !(await stillOurs(w));
  } catch {
    return false;
  }
}

function ingest(w: Watch, { file, match }: IngestingFile, early: EarlyBegin | undefined): Promise<Retried<number>> {
  if (!match) return Promise.resolve({ state: 'failed', error: unknownExtension(file, w.env.plugins.extensions()) });
  const fileState = new Map<string, unknown>();
  return withRetries(
    w,
    {
      claimId: file.claimId,
      rowsIfCommittedEarlier: 0,
      pluginRetries: MAX_PLUGIN_RETRIES,
      poisonAttempts: POISON_FILE_ATTEMPTS,
      fields: { file: file.name },
      label: file.name,
    },
    (attempt) => attemptOne(w, file, match.plugin, attempt, fileState, early),
  );
}

/**
 * A committed file: counted, logged, and on its way to `settled` (durability.ts). `ms`: its
 * time from claim to commit (a group's time for each of its files: the histogram counts files,
 * as the counters do).
 */
export function landed(w: Pick<Watch, 'env' | 'checkpoints'>, committed: CommittedFile, ms: number, group?: number): void {
  const { stats, log } = w.env;
  w.checkpoints.settle(committed);
  stats.filesIngested++;
  stats.rowsIngested += committed.rows;
  if (committed.rejected) stats.rowsRejected += committed.rejected;
  stats.bytesIngested += committed.bytes;
  observe(stats.ingestSeconds, ms / 1000);
  log.info('ingested', {
    file: committed.name,
    rows: committed.rows,
    ...(committed.rejected ? { rejected: committed.rejected } : {}),
    bytes: committed.bytes,
    ms: Math.round(ms),
    ...(group ? { group } : {}),
    claimId: committed.claimId,
  });
}

/** The files of a group that committed together. */
export function landedTogether(
  w: Pick<Watch, 'env' | 'checkpoints'>,
  files: readonly OpenedFile[],
  rows: readonly number[],
  epoch: number,
  ms: number,
): void {
  for (const [i, file] of files.entries()) landed(w, committedClaim(file, rows[i] ?? 0, epoch), ms, files.length);
}
