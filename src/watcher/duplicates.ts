/**
 * Content: each claimed file's checksum for its ledger row, and with `skipDuplicateContent`,
 * `claimed → settled` for a file whose content the table already has (a ledger row of 0 rows).
 */
import { CHEAP_CHECKSUM_BYTES, sha256OfFile } from '../util/checksum.ts';
import { splitRepeats } from './content-gate.ts';
import { fromDbError } from '../errors.ts';
import { committedChecksums, committedClaims, recordAllInLedger } from '../store/ledger.ts';
import { mapLimit } from '../util/map-limit.ts';
import { type ClaimedFile, committedClaim } from '../protocol/record.ts';
import { epochOf, ledgerEntry, ledgerFileOf } from './env.ts';
import { fence, takeSlot } from './lease.ts';
import { CLAIM_PARALLEL } from './limits.ts';
import { backoff } from './retry.ts';
import type { Watch } from './watch.ts';

/**
 * SHA-256 of each file's content for its ledger row: of every file with skipDuplicateContent,
 * otherwise of small files only, where it costs microseconds (see CHEAP_CHECKSUM_BYTES).
 */
export async function checksum(w: Pick<Watch, 'env'>, claimed: readonly ClaimedFile[]): Promise<void> {
  const every = w.env.options.skipDuplicateContent;
  await mapLimit(claimed, CLAIM_PARALLEL, async ({ file }) => {
    if (file.checksum !== undefined || (!every && file.size > CHEAP_CHECKSUM_BYTES)) return;
    try {
      file.checksum = await sha256OfFile(file);
    } catch (error) {
      // Without it the file is still ingested; it just cannot be recognized as a duplicate.
      w.env.log.warn('cannot compute the checksum of a claimed file', { file: file.name, error: String(error) });
    }
  });
}

/**
 * With skipDuplicateContent: `ingest` runs for the files whose content is new, one of each
 * content at a time (the same content twice in this batch: the repeat goes after the first has
 * settled, and another task holding one waits), after the duplicates were settled.
 */
export async function withoutDuplicates(
  w: Watch,
  all: readonly ClaimedFile[],
  ingest: (fresh: ClaimedFile[]) => Promise<void>,
): Promise<void> {
  const { first, repeats } = splitRepeats(all, (c) => (c.match ? c.file.checksum : undefined));
  const release = await w.contentGate.hold(first.flatMap((c) => (c.match && c.file.checksum ? [c.file.checksum] : [])));
  try {
    const fresh = await skipDuplicates(w, first);
    if (fresh) await ingest(fresh);
  } finally {
    release();
  }
  if (repeats.length > 0) await withoutDuplicates(w, repeats, ingest);
}

/**
 * Settles the files whose content the table already has (a ledger row of 0 rows each, in one
 * transaction, then removed as if ingested) and returns the others; `undefined` when the
 * watcher stopped first (the files stay claimed for the next start).
 */
async function skipDuplicates(w: Watch, claimed: readonly ClaimedFile[]): Promise<ClaimedFile[] | undefined> {
  const { env } = w;
  const candidates = claimed.filter((c) => c.match && c.file.checksum !== undefined);
  if (candidates.length === 0) return [...claimed];
  let known: Map<string, string> | undefined;
  let epoch = 0;
  let delay = env.options.retryInitialMs;
  for (let attempt = 1; ; attempt++) {
    try {
      known ??= await committedChecksums(
        w.pool.get(),
        env.target,
        candidates.map((c) => c.file.checksum!),
      );
      const duplicates = candidates.filter((c) => known!.has(c.file.checksum!));
      if (duplicates.length === 0) return [...claimed];
      epoch = epochOf(env);
      // The last attempt may have committed before its connection broke (one transaction: all or none).
      if (attempt > 1 && (await committedClaims(w.pool.get(), [duplicates[0]!.file.claimId])).size > 0) break;
      const slot = takeSlot(w.lease);
      await w.pool
        .get()
        .transaction(async (conn) => {
          // The ledger rows before the fence, as a group's (see attemptGroup): a COPY FROM STDIN
          // cut off after the fence holds its row for good on a shared hyperd.
          await recordAllInLedger(
            conn,
            duplicates.map((c) => ledgerEntry(env, c.file, 0)),
            ledgerFileOf(env, `${duplicates[0]!.file.claimId}-duplicates-${attempt}`),
          );
          await fence(w, conn, slot.slot);
        })
        .finally(slot.release);
      break;
    } catch (error) {
      if (w.lease.fenced) {
        for (const c of claimed) c.file.close();
        return undefined;
      }
      const failure = fromDbError(error);
      if (failure.kind !== 'transient' && known !== undefined) {
        // The ledger row could not be written for a reason of its own: ingest them normally.
        env.log.warn('cannot record skipped duplicates; ingesting them', { files: candidates.length, error: failure.message });
        return [...claimed];
      }
      const next = await backoff(w, delay, { files: candidates.length, attempt }, failure.message);
      if (next === undefined) {
        for (const c of claimed) c.file.close();
        return undefined;
      }
      delay = next;
    }
  }
  const skipped = new Set(candidates.filter((c) => known.has(c.file.checksum!)));
  for (const { file } of skipped) {
    file.close();
    w.checkpoints.settle(committedClaim(file, 0, epoch, true));
    env.stats.duplicatesSkipped++;
    env.log.info('skipped: the table already has this content', {
      file: file.name,
      sameAs: known.get(file.checksum!),
      checksum: file.checksum,
      claimId: file.claimId,
    });
  }
  return claimed.filter((c) => !skipped.has(c));
}
