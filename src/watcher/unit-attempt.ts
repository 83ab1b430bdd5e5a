/**
 * `readyWhen: 'marker'`: one attempt at a marker folder, one transaction for all its data files
 * (each by its own format's ingester), one ledger row per file under the folder's one claim id.
 * All of it commits, or none: a failure anywhere rolls every file back.
 */
import { fromDbError, IngestFailure, isIngestFailure } from '../errors.ts';
import { committedChecksums, ledgerByCopy, ledgerInsert, recordAllInLedger } from '../store/ledger.ts';
import type { ColumnSpec } from '../types.ts';
import type { OpenedFile } from '../protocol/files.ts';
import { type Attempted, columnsAdded, columnsKept, dropIfCreatedEmptyQuietly } from './attempt.ts';
import { epochOf, ingestContext, ledgerEntry, ledgerFileOf } from './env.ts';
import { unitChanged } from './fail.ts';
import { fence, takeSlot } from './lease.ts';
import type { Described } from './table-knowledge.ts';
import { type ClaimedUnit, unitChangedSinceClaim } from './unit-claim.ts';
import type { Watch } from './watch.ts';

/**
 * The folder's transaction. With `skipDuplicateContent`, files whose content the table already
 * has (or an earlier file of the folder has) are not loaded: their ledger rows say 0 rows, in the
 * same transaction; `duplicates` is filled with them for the caller's counts.
 */
export async function attemptUnit(
  w: Watch,
  unit: ClaimedUnit,
  attempt: number,
  fileState: Map<string, unknown>,
  duplicates: Map<OpenedFile, string>,
): Promise<Attempted<readonly number[]>> {
  const { env, known } = w;
  const added: ColumnSpec[] = [];
  const pctx = ingestContext(env, attempt, fileState, added);
  const epoch = epochOf(env);
  const files = unit.files.map((f) => f.file);
  const described: Described = { columns: undefined, usedCache: false };
  const entries = (rows: readonly number[]) => files.map((f, i) => ledgerEntry(env, f, rows[i]!));
  const byCopy = ledgerByCopy(files.length);
  // The first file of a table that is not there yet creates it, under the schema lock (as attemptOne).
  const release = known.exists ? undefined : await known.lockSchema();
  const existedBefore = release ? await known.isThere(w.pool.get()) : true;
  const slot = takeSlot(w.lease);
  let current = files[0]?.name;
  try {
    duplicates.clear();
    if (env.options.skipDuplicateContent) await findDuplicates(w, files, duplicates);
    const rows = await w.pool.get().transaction(
      async (raw) => {
        const conn = known.describing(raw, described);
        const rows: number[] = [];
        for (const [index, { file, match }] of unit.files.entries()) {
          if (duplicates.has(file)) {
            rows.push(0);
            continue;
          }
          current = file.name;
          const appended = await match.plugin.append(conn, file, env.table, pctx);
          if (appended.isErr()) throw new IngestFailure(appended.error, index);
          rows.push(appended.value.rows);
          if (!known.exists && (described.columns !== undefined || (await raw.describeTable(env.table)) !== null)) known.found();
        }
        const changed = unitChangedSinceClaim(unit);
        if (changed) throw new IngestFailure(unitChanged(unit.folder, changed, env.options.marker));
        // The ledger's COPY before the fence, as a group's (see attemptGroup).
        if (byCopy) await recordAllInLedger(raw, entries(rows), ledgerFileOf(env, `${unit.claimId}-${attempt}`));
        await fence(w, raw, slot.slot);
        return rows;
      },
      byCopy ? undefined : { last: (rows) => ledgerInsert(entries(rows)) },
    );
    if (described.columns) known.remember(described.columns);
    columnsAdded(w, added, files);
    return { state: 'committed', rows, epoch };
  } catch (error) {
    known.forget();
    await columnsKept(w, added, files);
    const failure = isIngestFailure(error) ? error.error : fromDbError(error, current);
    if (!existedBefore && failure.kind !== 'transient') await dropIfCreatedEmptyQuietly(w);
    return { state: 'failed', error: failure, usedCache: described.usedCache };
  } finally {
    slot.release();
    release?.();
  }
}

/** The files of the folder whose content the table already has, or an earlier file of it: each with the name it has there. */
async function findDuplicates(w: Watch, files: readonly OpenedFile[], out: Map<OpenedFile, string>): Promise<void> {
  const sums = files.flatMap((f) => (f.checksum === undefined ? [] : [f.checksum]));
  if (sums.length === 0) return;
  const known = await committedChecksums(w.pool.get(), w.env.target, sums);
  const firstOf = new Map<string, string>();
  for (const f of files) {
    if (f.checksum === undefined) continue;
    const same = known.get(f.checksum) ?? firstOf.get(f.checksum);
    if (same !== undefined) out.set(f, same);
    else firstOf.set(f.checksum, f.name);
  }
}
