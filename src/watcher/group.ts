/**
 * Groups: small claimed files of one plugin are ingested together, up to `batchFiles` in one
 * transaction (each with its own ledger row); a group that fails is split until every bad file
 * has failed alone, with the report it would get on its own.
 */
import { BATCH_FILE_MAX_BYTES } from '../constants.ts';
import type { OpenedFile } from '../files.ts';
import type { ClaimedFile } from '../protocol/record.ts';
import type { IngesterPlugin } from '../types.ts';
import { attemptGroup, tableIsThere } from './attempt.ts';
import type { WatchContext } from './context.ts';
import { checksum, withoutDuplicates } from './duplicates.ts';
import { finishOne, landedTogether } from './ingest.ts';
import { POISON_GROUP_ATTEMPTS, withRetries } from './retry.ts';

/**
 * A group that fails without naming its bad file is split into this many parts, tried at once:
 * one bad file among 100 is found in 2 rounds (see `SPLIT_TO_SINGLES`) instead of the 7 of
 * halving (each round a transaction of some milliseconds, in a row), and the good parts commit
 * meanwhile.
 */
const GROUP_SPLIT_WAYS = 8;

/** A failed group this small is split into single files at once: one round instead of two. */
const SPLIT_TO_SINGLES = 16;

/** `items` in `ways` parts of nearly equal size (fewer when there are fewer items). */
export function splitInto<T>(items: readonly T[], ways: number): T[][] {
  const parts = Math.max(1, Math.min(ways, items.length));
  const size = Math.ceil(items.length / parts);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Ingests claimed files: small ones of one plugin together, in groups of up to `batchFiles` (one
 * transaction each), the rest one by one. Until the table exists, every file goes alone (the
 * first one creates it, under the schema lock).
 */
export async function finishAll(ctx: WatchContext, all: readonly ClaimedFile[]): Promise<void> {
  await checksum(ctx, all);
  if (!ctx.options.skipDuplicateContent) return finishDistinct(ctx, all);
  await withoutDuplicates(ctx, all, (fresh) => finishDistinct(ctx, fresh));
}

/** `finishAll` for files whose content is not a duplicate (or not checked). */
async function finishDistinct(ctx: WatchContext, claimed: readonly ClaimedFile[]): Promise<void> {
  const { options, known } = ctx;
  // A table created by an earlier run (recovery, the initial sweep): groups from the start.
  if (!known.exists && claimed.length > 1 && options.batchFiles > 1) known.exists = await tableIsThere(ctx).catch(() => false);
  const groups = new Map<IngesterPlugin, OpenedFile[]>();
  const alone: ClaimedFile[] = [];
  for (const c of claimed) {
    if (c.match && known.exists && options.batchFiles > 1 && c.file.size <= BATCH_FILE_MAX_BYTES) {
      const group = groups.get(c.match.plugin) ?? [];
      group.push(c.file);
      groups.set(c.match.plugin, group);
    } else {
      alone.push(c);
    }
  }
  for (const c of alone) await finishOne(ctx, c);
  for (const [plugin, group] of groups) {
    for (let i = 0; i < group.length; i += options.batchFiles) await finishGroup(ctx, group.slice(i, i + options.batchFiles), plugin);
  }
}

/**
 * Ingests a group in one transaction and settles each file. When it fails for a reason other
 * than the database being away, the group is split until each bad file has failed on its own:
 * the file the failure belongs to goes alone and the others go on as a group; when the failure
 * names no file, the group is split in `GROUP_SPLIT_WAYS` parts (single files once it is
 * `SPLIT_TO_SINGLES` or fewer), tried at once. Every good file is committed once, every bad one
 * fails alone, with the same report it would get on its own.
 *
 * A plugin's request for a fresh transaction is not retried here, nor a failure while using the
 * cached table description: the group is split at once, and each part, the cache dropped,
 * describes the table afresh (a group of 100 tried whole twice cost 100 ms or more).
 */
async function finishGroup(ctx: WatchContext, files: readonly OpenedFile[], plugin: IngesterPlugin): Promise<void> {
  if (files.length === 0) return;
  if (files.length === 1) return finishOne(ctx, { state: 'claimed', file: files[0]!, match: { plugin, extension: files[0]!.extension } });
  const started = performance.now();
  const outcome = await withRetries(
    ctx,
    { claimId: files[0]!.claimId, rowsIfCommittedEarlier: files.map(() => 0), pluginRetries: 0, poisonAttempts: POISON_GROUP_ATTEMPTS, fields: { files: files.length }, label: `${files.length} files` },
    (attempt) => attemptGroup(ctx, files, plugin, attempt),
  );
  switch (outcome.state) {
    case 'committed':
      for (const f of files) f.close();
      landedTogether(ctx, files, outcome.rows, outcome.epoch, performance.now() - started);
      return;
    case 'claimed':
      for (const f of files) f.close();
      ctx.log.info('stopping: files left claimed for the next start', { files: files.length });
      return;
    case 'failed': {
      ctx.log.debug('group failed; splitting it', { files: files.length, first: files[0]!.name, index: outcome.index, error: outcome.error.message });
      const { index } = outcome;
      if (index !== undefined && index >= 0 && index < files.length) {
        await Promise.all([
          finishOne(ctx, { state: 'claimed', file: files[index]!, match: { plugin, extension: files[index]!.extension } }),
          finishGroup(ctx, [...files.slice(0, index), ...files.slice(index + 1)], plugin),
        ]);
      } else {
        const ways = files.length <= SPLIT_TO_SINGLES ? files.length : GROUP_SPLIT_WAYS;
        await Promise.all(splitInto(files, ways).map((part) => finishGroup(ctx, part, plugin)));
      }
    }
  }
}
