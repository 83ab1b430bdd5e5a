/**
 * One file alone: `claimed → ingesting → committed → settled`, or `failed`; and what every
 * committed file (alone or in a group) adds to the stats and the log, written once.
 */
import type { OpenedFile } from '../files.ts';
import { type ClaimedFile, type CommittedFile, committedClaim, failedClaim, type IngestingFile } from '../protocol/record.ts';
import { observe } from '../stats.ts';
import { attemptOne } from './attempt.ts';
import type { WatchContext } from './context.ts';
import { settle } from './durability.ts';
import { fail, unknownExtension } from './fail.ts';
import { MAX_PLUGIN_RETRIES, POISON_FILE_ATTEMPTS, type Retried, withRetries } from './retry.ts';

/** Ingests a claimed file and settles it: removed when committed, failed/ when not. */
export async function finishOne(ctx: WatchContext, claimed: ClaimedFile): Promise<void> {
  const { file, match } = claimed;
  const started = performance.now();
  const ingesting: IngestingFile = { state: 'ingesting', file, match, startedAt: Date.now() };
  ctx.active.set(file, ingesting.startedAt);
  let outcome: Retried<number>;
  try {
    outcome = await ingest(ctx, ingesting);
  } finally {
    ctx.active.delete(file);
    file.close();
  }
  switch (outcome.state) {
    case 'committed':
      landed(ctx, committedClaim(file, outcome.rows, outcome.epoch, false, outcome.rejected), performance.now() - started);
      return;
    case 'claimed':
      ctx.log.info('stopping: file left claimed for the next start', { file: file.name, claimId: file.claimId });
      return;
    case 'failed':
      await fail(ctx, failedClaim(file, outcome.error));
  }
}

function ingest(ctx: WatchContext, { file, match }: IngestingFile): Promise<Retried<number>> {
  if (!match) return Promise.resolve({ state: 'failed', error: unknownExtension(file, ctx.plugins.extensions()) });
  const fileState = new Map<string, unknown>();
  return withRetries(
    ctx,
    { claimId: file.claimId, rowsIfCommittedEarlier: 0, pluginRetries: MAX_PLUGIN_RETRIES, poisonAttempts: POISON_FILE_ATTEMPTS, fields: { file: file.name }, label: file.name },
    (attempt) => attemptOne(ctx, file, match.plugin, attempt, fileState),
  );
}

/**
 * A committed file: counted, logged, and on its way to `settled` (durability.ts). `ms`: its
 * time from claim to commit (a group's time for each of its files: the histogram counts files,
 * as the counters do).
 */
export function landed(ctx: WatchContext, committed: CommittedFile, ms: number, group?: number): void {
  settle(ctx, committed);
  ctx.stats.filesIngested++;
  ctx.stats.rowsIngested += committed.rows;
  if (committed.rejected) ctx.stats.rowsRejected += committed.rejected;
  ctx.stats.bytesIngested += committed.bytes;
  observe(ctx.stats.ingestSeconds, ms / 1000);
  ctx.log.info('ingested', { file: committed.name, rows: committed.rows, ...(committed.rejected ? { rejected: committed.rejected } : {}), bytes: committed.bytes, ms: Math.round(ms), ...(group ? { group } : {}), claimId: committed.claimId });
}

/** The files of a group that committed together. */
export function landedTogether(ctx: WatchContext, files: readonly OpenedFile[], rows: readonly number[], epoch: number, ms: number): void {
  for (const [i, file] of files.entries()) landed(ctx, committedClaim(file, rows[i] ?? 0, epoch), ms, files.length);
}
