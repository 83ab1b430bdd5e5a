/**
 * `readyWhen: 'marker'`: a claimed folder's way on, `claimed → committed → settled` (removed, or
 * archived whole, once its commit is durable) or `failed` (the whole folder into failed/, with one
 * `.error`). Counted as its data files: each is a file ingested, with its rows.
 */
import { observe } from '../observe/stats.ts';
import type { OpenedFile } from '../protocol/files.ts';
import type { ClaimedFile } from '../protocol/record.ts';
import { checksum } from './duplicates.ts';
import { epochOf } from './env.ts';
import { claimTakenOver } from './ingest.ts';
import { MAX_PLUGIN_RETRIES, POISON_FILE_ATTEMPTS, type Retried, withRetries } from './retry.ts';
import { attemptUnit } from './unit-attempt.ts';
import { type ClaimedUnit, claimUnit } from './unit-claim.ts';
import { failUnit } from './unit-fail.ts';
import type { Watch } from './watch.ts';

/** One task's folders, claimed and finished one after the other. */
export async function claimAndFinishUnits(w: Watch, folders: readonly string[]): Promise<void> {
  for (const folder of folders) {
    if (w.life.stopping) return;
    const outcome = claimUnit(w, folder);
    if (outcome === undefined) continue;
    w.inbox.claimed(folder);
    w.folders.drop(folder); // its watch (discover-marker.ts): the folder is ours now
    if (outcome.state === 'failed') await failUnit(w, outcome);
    else await finishUnit(w, outcome.unit);
  }
}

/** Ingests a claimed folder in one transaction and settles it. */
export async function finishUnit(w: Watch, unit: ClaimedUnit): Promise<void> {
  const files = unit.files.map((f) => f.file);
  const claimed: ClaimedFile[] = unit.files.map(({ file, match }) => ({ state: 'claimed', file, match }));
  const started = performance.now();
  const duplicates = new Map<OpenedFile, string>();
  let outcome: Retried<readonly number[]>;
  let release: (() => void) | undefined;
  try {
    await checksum(w, claimed);
    // The same content in two folders at once: one waits for the other (see withoutDuplicates).
    if (w.env.options.skipDuplicateContent) release = await w.contentGate.hold(files.flatMap((f) => (f.checksum ? [f.checksum] : [])));
    for (const f of files) w.active.begin(f, Date.now());
    outcome =
      files.length === 0
        ? { state: 'committed', rows: [], epoch: epochOf(w.env) }
        : await withRetries(
            w,
            {
              claimId: unit.claimId,
              rowsIfCommittedEarlier: files.map(() => 0),
              pluginRetries: MAX_PLUGIN_RETRIES,
              poisonAttempts: POISON_FILE_ATTEMPTS,
              fields: { folder: unit.folder, files: files.length },
              label: `folder ${unit.folder}`,
            },
            (attempt) => attemptUnit(w, unit, attempt, new Map(), duplicates),
          );
  } finally {
    for (const f of files) {
      w.active.end(f);
      f.close();
    }
    release?.();
  }
  switch (outcome.state) {
    case 'committed':
      landedUnit(w, unit, outcome.rows, outcome.epoch, duplicates, performance.now() - started);
      return;
    case 'claimed':
      w.env.log.info('stopping: folder left claimed for the next start', { folder: unit.folder, claimId: unit.claimId });
      return;
    case 'failed':
      if (await claimTakenOver(w)) {
        w.env.log.warn('not failing a folder whose claim was taken over: the process that took it finishes it', {
          folder: unit.folder,
          claimId: unit.claimId,
          error: outcome.error.message,
        });
        return;
      }
      await failUnit(w, { ...unit, error: outcome.error });
  }
}

/** A committed folder: each data file counted (or counted as a duplicate), one log line, then on to `settled`. */
function landedUnit(
  w: Watch,
  unit: ClaimedUnit,
  rows: readonly number[],
  epoch: number,
  duplicates: ReadonlyMap<OpenedFile, string>,
  ms: number,
): void {
  const { stats, log } = w.env;
  let total = 0;
  let bytes = 0;
  for (const [i, { file }] of unit.files.entries()) {
    if (duplicates.has(file)) {
      stats.duplicatesSkipped++;
      log.info('skipped: the table already has this content', { file: file.name, sameAs: duplicates.get(file), claimId: unit.claimId });
      continue;
    }
    stats.filesIngested++;
    stats.rowsIngested += rows[i] ?? 0;
    stats.bytesIngested += file.size;
    total += rows[i] ?? 0;
    bytes += file.size;
    observe(stats.ingestSeconds, ms / 1000);
  }
  const files = unit.files.length - duplicates.size;
  log.info('ingested', { folder: unit.folder, files, rows: total, bytes, ms: Math.round(ms), claimId: unit.claimId });
  w.checkpoints.settle({
    state: 'committed',
    stagedPath: unit.stagedPath,
    name: unit.folder,
    claimId: unit.claimId,
    epoch,
    rows: total,
    bytes,
    unit: { files },
  });
}
