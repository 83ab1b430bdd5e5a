/**
 * Groups: small claimed files of one plugin are ingested together, up to `batchFiles` in one
 * transaction (each with its own ledger row); a group that fails is split until every bad file
 * has failed alone, with the report it would get on its own.
 */
import { BATCH_FILE_MAX_BYTES } from '../constants.ts';
import type { OpenedFile } from '../protocol/files.ts';
import type { ClaimedFile } from '../protocol/record.ts';
import type { IngesterPlugin } from '../types.ts';
import { attemptGroup } from './attempt.ts';
import { checksum, withoutDuplicates } from './duplicates.ts';
import type { EarlyBegin } from './early.ts';
import { batchLimit } from './env.ts';
import { finishOne, landedTogether } from './ingest.ts';
import { POISON_GROUP_ATTEMPTS, withRetries } from './retry.ts';
import type { Watch } from './watch.ts';

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

/** How a batch of claimed files is ingested: these one by one, those in groups (one transaction each, of one plugin). */
export interface Grouping {
  readonly alone: readonly ClaimedFile[];
  readonly groups: readonly { readonly plugin: IngesterPlugin; readonly files: readonly OpenedFile[] }[];
}

/** A file that may share a transaction: a plugin takes it, it is small, the table is known and groups are on. */
function groupable(
  c: ClaimedFile,
  tableExists: boolean,
  batchFiles: number,
): c is ClaimedFile & { readonly match: NonNullable<ClaimedFile['match']> } {
  return c.match !== undefined && tableExists && batchFiles > 1 && c.file.size <= BATCH_FILE_MAX_BYTES;
}

/**
 * Small files of one plugin go together, in groups of up to `batchFiles`; the rest alone (a file
 * no plugin takes, a large one, or any file while the table is not known to exist: the first one
 * creates it, under the schema lock).
 */
export function grouping(claimed: readonly ClaimedFile[], tableExists: boolean, batchFiles: number): Grouping {
  const byPlugin = new Map<IngesterPlugin, OpenedFile[]>();
  const alone: ClaimedFile[] = [];
  for (const c of claimed) {
    if (groupable(c, tableExists, batchFiles)) {
      const group = byPlugin.get(c.match.plugin) ?? [];
      group.push(c.file);
      byPlugin.set(c.match.plugin, group);
    } else {
      alone.push(c);
    }
  }
  const groups: { plugin: IngesterPlugin; files: OpenedFile[] }[] = [];
  for (const [plugin, files] of byPlugin) {
    for (let i = 0; i < files.length; i += batchFiles) groups.push({ plugin, files: files.slice(i, i + batchFiles) });
  }
  return { alone, groups };
}

/** A batch's files as units in their order: a file alone, or a group of one plugin's files. */
export type OrderedUnit = { readonly alone: ClaimedFile } | { readonly plugin: IngesterPlugin; readonly files: readonly OpenedFile[] };

/**
 * `grouping` for files that must land in their order (the modes other than append): a group is
 * a run of consecutive small files of one plugin, up to `batchFiles`; any other file ends the
 * run and goes alone, in its place.
 */
export function orderedGrouping(claimed: readonly ClaimedFile[], tableExists: boolean, batchFiles: number): OrderedUnit[] {
  const units: OrderedUnit[] = [];
  let run: { plugin: IngesterPlugin; files: OpenedFile[] } | undefined;
  for (const c of claimed) {
    if (!groupable(c, tableExists, batchFiles)) {
      run = undefined;
      units.push({ alone: c });
    } else if (run && run.plugin === c.match.plugin && run.files.length < batchFiles) {
      run.files.push(c.file);
    } else {
      run = { plugin: c.match.plugin, files: [c.file] };
      units.push(run);
    }
  }
  return units;
}

/**
 * How a failed group goes on: the file the failure belongs to (`index`) alone and the others as a
 * group; else `GROUP_SPLIT_WAYS` parts (single files once it is `SPLIT_TO_SINGLES` or fewer).
 */
export function splitAfterFailure<T>(files: readonly T[], index: number | undefined): { readonly alone?: T; readonly parts: T[][] } {
  if (index !== undefined && index >= 0 && index < files.length)
    return { alone: files[index]!, parts: [[...files.slice(0, index), ...files.slice(index + 1)]] };
  return { parts: splitInto(files, files.length <= SPLIT_TO_SINGLES ? files.length : GROUP_SPLIT_WAYS) };
}

/**
 * Ingests claimed files, as `grouping` says; a table created by an earlier run (recovery, the
 * initial sweep) is looked up first, so that they can form groups from the start. `early`: the
 * task's early BEGIN (see early.ts), for whichever transaction comes first.
 */
export async function finishAll(w: Watch, all: readonly ClaimedFile[], early?: EarlyBegin): Promise<void> {
  await checksum(w, all);
  if (!w.env.options.skipDuplicateContent) return finishDistinct(w, all, early);
  await withoutDuplicates(w, all, (fresh) => finishDistinct(w, fresh, early));
}

/** `finishAll` for files whose content is not a duplicate (or not checked). */
async function finishDistinct(w: Watch, claimed: readonly ClaimedFile[], early: EarlyBegin | undefined): Promise<void> {
  const { known } = w;
  const batchFiles = batchLimit(w.env);
  if (!known.exists && claimed.length > 1 && batchFiles > 1) await known.lookUp(w.pool.get());
  if (inOrder(w)) {
    for (const unit of orderedGrouping(claimed, known.exists, batchFiles))
      await ('alone' in unit ? finishOne(w, unit.alone, early) : finishGroup(w, unit.files, unit.plugin, early));
    return;
  }
  const { alone, groups } = grouping(claimed, known.exists, batchFiles);
  for (const c of alone) await finishOne(w, c, early);
  for (const { plugin, files } of groups) await finishGroup(w, files, plugin, early);
}

/** Files are applied in their order (the modes other than append): groups are split in order, one part after the other. */
function inOrder(w: Watch): boolean {
  return w.env.options.mode !== 'append';
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
async function finishGroup(w: Watch, files: readonly OpenedFile[], plugin: IngesterPlugin, early?: EarlyBegin): Promise<void> {
  if (files.length === 0) return;
  if (files.length === 1)
    return finishOne(w, { state: 'claimed', file: files[0]!, match: { plugin, extension: files[0]!.extension } }, early);
  const started = performance.now();
  const outcome = await withRetries(
    w,
    {
      claimId: files[0]!.claimId,
      rowsIfCommittedEarlier: files.map(() => 0),
      pluginRetries: 0,
      poisonAttempts: POISON_GROUP_ATTEMPTS,
      fields: { files: files.length },
      label: `${files.length} files`,
    },
    (attempt) => attemptGroup(w, files, plugin, attempt, early),
  );
  switch (outcome.state) {
    case 'committed':
      for (const f of files) f.close();
      landedTogether(w, files, outcome.rows, outcome.epoch, performance.now() - started);
      return;
    case 'claimed':
      for (const f of files) f.close();
      w.env.log.info('stopping: files left claimed for the next start', { files: files.length });
      return;
    case 'failed': {
      w.env.log.debug('group failed; splitting it', {
        files: files.length,
        first: files[0]!.name,
        index: outcome.index,
        error: outcome.error.message,
      });
      const { alone, parts } = splitAfterFailure(files, outcome.index);
      if (inOrder(w)) {
        // The files before the one the failure belongs to, it alone, then the files after it
        // (or, naming none, the parts), one after the other: never two parts at once.
        // `alone` is set exactly when the failure names a file of the group (`index`).
        const at = outcome.index!;
        for (const part of alone ? [files.slice(0, at), [alone], files.slice(at + 1)] : parts) await finishGroup(w, part, plugin);
        return;
      }
      await Promise.all([
        ...(alone ? [finishOne(w, { state: 'claimed', file: alone, match: { plugin, extension: alone.extension } })] : []),
        ...parts.map((part) => finishGroup(w, part, plugin)),
      ]);
    }
  }
}
