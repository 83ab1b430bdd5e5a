/**
 * One attempt: `ingesting` → one transaction (a file alone, or a group) → `committed`, or a
 * failure for retry.ts to judge.
 */
import { BATCH_FILE_MAX_BYTES } from '../constants.ts';
import { ingestError, IngestFailure, fromDbError, isIngestFailure } from '../errors.ts';
import type { OpenedFile } from '../protocol/files.ts';
import { readLeases } from '../store/lease.ts';
import { ledgerByCopy, ledgerInsert, recordAllInLedger } from '../store/ledger.ts';
import { dropIfCreatedEmpty } from '../columns/schema.ts';
import type { ColumnSpec, DbConnection, IngesterPlugin, IngestError, TableName } from '../types.ts';
import { type EarlyBegin, takeEarly } from './early.ts';
import { epochOf, ingestContext, ledgerEntry, ledgerFileOf, stableMsOf, type WatchEnv } from './env.ts';
import { changedAfterReady } from './fail.ts';
import { fence, takeSlot } from './lease.ts';
import { applyApart, dropApart, modeLoad, type StagedApart, stageApart, stagesApart } from './modes.ts';
import { badRowsOf, checkBadRows } from './skip.ts';
import type { Described } from './table-knowledge.ts';
import type { Watch } from './watch.ts';

/** How one attempt ended. `usedCache`: it failed while using the cached table description. */
export type Attempted<R> =
  | { readonly state: 'committed'; readonly rows: R; readonly epoch: number; readonly rejected?: number }
  | { readonly state: 'failed'; readonly error: IngestError; readonly index?: number; readonly usedCache: boolean };

/**
 * One transaction for one file: its rows, then its ledger row sent with the COMMIT. `early`: its
 * task's early BEGIN (see early.ts), taken if still unused and the table is known.
 */
export async function attemptOne(
  w: Watch,
  file: OpenedFile,
  plugin: IngesterPlugin,
  attempt: number,
  fileState: Map<string, unknown>,
  early?: EarlyBegin,
): Promise<Attempted<number>> {
  const { env, known } = w;
  const added: ColumnSpec[] = [];
  const badRows = badRowsOf(env.options, file);
  const pctx = { ...ingestContext(env, attempt, fileState, added), ...(badRows ? { badRows } : {}) };
  const epoch = epochOf(env);
  // A file staged apart uses the pool first (its pool may have one connection only).
  const begun = takeEarly(early, known.exists && !stagesApart(env));
  const release = known.exists ? undefined : await known.lockSchema();
  const existedBefore = release ? await known.isThere(w.pool.get()) : true;
  const described: Described = { columns: undefined, usedCache: false };
  const slot = takeSlot(w.lease, begun?.sentAt);
  let apart: StagedApart | undefined;
  try {
    // On Hyper the keyed modes load the file in a transaction of their own first (modes.ts).
    if (stagesApart(env)) apart = await stageApart(w, file, plugin, pctx, described, (conn) => fence(w, conn, slot.slot));
    const rows = await (begun?.begun ?? w.pool.get()).transaction(
      async (conn) => {
        const fencing = behindFirstStatement(w, conn, slot.slot, file.size <= BATCH_FILE_MAX_BYTES);
        const rows = apart
          ? await applyApart(env, conn, apart, file.name)
          : await loadFile(env, known.describing(conn, described, fencing.send), conn, file, plugin, pctx);
        const changed = file.changedSinceClaim();
        if (changed) throw new IngestFailure(changedAfterReady(file, changed, stableMsOf(env)));
        if (!known.exists && (described.columns !== undefined || (await conn.describeTable(env.table)) !== null)) known.found();
        if (badRows) await checkBadRows(env.options, file, badRows, rows);
        await fencing.passed();
        return rows;
      },
      // The ledger row goes with the COMMIT, in one round trip.
      { last: (rows) => ledgerInsert([ledgerEntry(env, file, rows, badRows?.rejected)]) },
    );
    if (described.columns) known.remember(described.columns);
    columnsAdded(w, added, [file]);
    return { state: 'committed', rows, epoch, ...(badRows ? { rejected: badRows.rejected } : {}) };
  } catch (error) {
    await badRows?.discard();
    known.forget();
    await columnsKept(w, added, [file]);
    const failure = fromDbError(error, file.name);
    // Not after a transient failure: that may be another process creating the table right now.
    if (!existedBefore && failure.kind !== 'transient') await dropIfCreatedEmptyQuietly(w);
    return { state: 'failed', error: failure, usedCache: described.usedCache };
  } finally {
    if (apart) await dropApart(w, apart);
    slot.release();
    release?.();
  }
}

/**
 * One file's rows in its transaction, by the plugin: appended, or through the mode (modes.ts).
 * `inner` is the connection the plugin reads the table's description through; `raw` the
 * transaction's own.
 */
async function loadFile(
  env: WatchEnv,
  inner: DbConnection,
  raw: DbConnection,
  file: OpenedFile,
  plugin: IngesterPlugin,
  pctx: ReturnType<typeof ingestContext>,
): Promise<number> {
  const mode = env.options.mode === 'append' ? undefined : modeLoad(env, inner, raw);
  await mode?.prepare();
  const appended = await plugin.append(mode?.conn ?? inner, file, mode?.table ?? env.table, pctx);
  if (appended.isErr()) throw new IngestFailure(appended.error);
  return mode ? mode.finish(appended.value.rows, file.name) : appended.value.rows;
}

/**
 * A file transaction's fence (see lease.ts). For a small file it goes out right behind the
 * ingester's first `execute` (its load, for a file hyperd reads itself), without waiting for
 * that statement's reply: one round trip fewer per file. Where in the transaction the fence runs
 * does not matter to what it proves: it is the transaction's write of its fence row, and the
 * COMMIT is sent only once it came back with that row updated (`passed`). Only small files, so
 * that a transaction holds its fence row a few milliseconds at most before its COMMIT, as with a
 * fence run last (a stopped process holding it would hold off its takeover); larger files run
 * it last.
 */
function behindFirstStatement(
  w: Watch,
  conn: DbConnection,
  slot: number,
  small: boolean,
): { send: (() => void) | undefined; passed: () => Promise<void> } {
  let sent: Promise<void> | undefined;
  return {
    send: small
      ? () => {
          if (sent) return;
          sent = fence(w, conn, slot);
          // Awaited by `passed`; when the ingester's statement failed first, this one fails too.
          sent.catch(() => {});
        }
      : undefined,
    passed: () => sent ?? fence(w, conn, slot),
  };
}

/**
 * One transaction for a group: all of it committed, or none. A failure that belongs to one file
 * names it (`index`); `usedCache` is never claimed (the group is split instead of retried).
 */
export async function attemptGroup(
  w: Watch,
  files: readonly OpenedFile[],
  plugin: IngesterPlugin,
  attempt: number,
  early?: EarlyBegin,
): Promise<Attempted<readonly number[]>> {
  const { env, known } = w;
  const added: ColumnSpec[] = [];
  const pctx = ingestContext(env, attempt, new Map(), added);
  const epoch = epochOf(env);
  const described: Described = { columns: undefined, usedCache: false };
  const entries = (rows: readonly number[]) => files.map((f, i) => ledgerEntry(env, f, rows[i]!));
  // Many rows go in by COPY inside the transaction; a few as an INSERT sent with the COMMIT.
  const byCopy = ledgerByCopy(files.length);
  const begun = takeEarly(early, true);
  const slot = takeSlot(w.lease, begun?.sentAt);
  try {
    const rows = await (begun?.begun ?? w.pool.get()).transaction(
      async (raw) => {
        const conn = known.describing(raw, described);
        const rows =
          env.options.mode === 'append'
            ? await appendAll(conn, files, plugin, env.table, pctx)
            : await applyAll(env, conn, raw, files, plugin, pctx);
        const changed = files.map((f) => f.changedSinceClaim());
        const index = changed.findIndex((c) => c !== undefined);
        if (index >= 0) throw new IngestFailure(changedAfterReady(files[index]!, changed[index]!, stableMsOf(env)), index);
        // The ledger's COPY before the fence, never after it: a process killed in the middle of
        // a COPY FROM STDIN can leave, on hyperd, a session that never ends, and with the fence
        // row updated in it no takeover could ever bump that row's token.
        // On a shared server that reads our files, it reads the ledger rows from one too: no
        // COPY FROM STDIN that a kill could cut off (see ledgerFileOf).
        if (byCopy) await recordAllInLedger(raw, entries(rows), ledgerFileOf(env, `${files[0]!.claimId}-${attempt}`));
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
    if (isIngestFailure(error))
      return { state: 'failed', error: error.error, ...(error.index === undefined ? {} : { index: error.index }), usedCache: false };
    return { state: 'failed', error: fromDbError(error), usedCache: false };
  } finally {
    slot.release();
  }
}

/** Each file's rows: by the plugin's `appendMany` when it has one, else file by file. */
async function appendAll(
  conn: DbConnection,
  files: readonly OpenedFile[],
  plugin: IngesterPlugin,
  table: TableName,
  pctx: ReturnType<typeof ingestContext>,
): Promise<number[]> {
  if (plugin.appendMany) {
    const appended = await plugin.appendMany(conn, files, table, pctx);
    if (appended.isErr()) throw new IngestFailure(appended.error.error, appended.error.index);
    const rows = appended.value.map((r) => r.rows);
    if (rows.length !== files.length) {
      throw new IngestFailure(
        ingestError(
          'io',
          'PLUGIN_RESULT',
          `plugin ${plugin.name} returned ${rows.length} results for ${files.length} files`,
          'A bug in the plugin; the files are retried one by one.',
        ),
      );
    }
    return rows;
  }
  const rows: number[] = [];
  for (const [index, file] of files.entries()) {
    const appended = await plugin.append(conn, file, table, pctx);
    if (appended.isErr()) throw new IngestFailure(appended.error, index);
    rows.push(appended.value.rows);
  }
  return rows;
}

/**
 * A group in a mode other than append (modes.ts): each file through the mode in turn, in the
 * group's order, so that each acts on the table as the files before it left it (the database
 * reads back what its own transaction wrote: see `batchLimit`). A file's failure names it.
 */
async function applyAll(
  env: WatchEnv,
  inner: DbConnection,
  raw: DbConnection,
  files: readonly OpenedFile[],
  plugin: IngesterPlugin,
  pctx: ReturnType<typeof ingestContext>,
): Promise<number[]> {
  const rows: number[] = [];
  for (const [index, file] of files.entries()) {
    try {
      // What a plugin learns about one file is that file's alone.
      rows.push(await loadFile(env, inner, raw, file, plugin, { ...pctx, fileState: new Map() }));
    } catch (error) {
      if (isIngestFailure(error) && error.index === undefined) throw new IngestFailure(error.error, index);
      throw error;
    }
  }
  return rows;
}

/**
 * Columns a committed transaction added (schema evolution): the cached description lacks them,
 * so it is dropped; each column is logged and counted once, however many files brought it.
 */
export function columnsAdded(w: Watch, added: readonly ColumnSpec[], files: readonly OpenedFile[]): void {
  if (added.length === 0) return;
  const { env, known } = w;
  known.forget();
  for (const column of added) {
    if (!known.firstAdded(column.name)) continue;
    env.stats.columnsAdded++;
    env.log.info('added column', { table: env.target, column: column.name, type: column.type.kind, files: files.map((f) => f.name) });
  }
}

/**
 * A transaction that added columns failed: Hyper keeps DDL even so (PostgreSQL does not, see
 * `ddlSurvivesRollback`), so the columns the table now has were added all the same, and are counted.
 */
export async function columnsKept(w: Watch, added: readonly ColumnSpec[], files: readonly OpenedFile[]): Promise<void> {
  if (added.length === 0) return;
  try {
    const present = new Set((await w.pool.get().transaction((conn) => conn.describeTable(w.env.table)))?.map((c) => c.name));
    columnsAdded(
      w,
      added.filter((c) => present.has(c.name)),
      files,
    );
  } catch {
    // Not counted then; the table is what it is.
  }
}

export async function dropIfCreatedEmptyQuietly(w: Watch): Promise<void> {
  const { env } = w;
  try {
    // DDL rolled back with the transaction (PostgreSQL): a table there now is another process's,
    // perhaps with rows about to commit (a DROP would wait for them, then drop them).
    if (!env.db.capabilities.ddlSurvivesRollback) return;
    // Hyper kept the CREATE TABLE: a DROP after an empty count can still drop rows another process commits in between
    // (checked: count 0, another session inserts and commits, the DROP succeeds). Only when no
    // other live process writes this table.
    if (await othersWriting(w)) {
      env.log.warn('a failed file created the table; it is left in place since other processes write to it', { table: env.target });
      return;
    }
    await dropIfCreatedEmpty(w.pool.get(), env.table);
  } catch (error) {
    env.log.warn('could not drop the empty table a failed file created', { table: env.target, error: String(error) });
  }
}

/** Another live process (of any directory) has this table as its target. */
async function othersWriting(w: Watch): Promise<boolean> {
  const rows = await readLeases(w.pool.get());
  return rows.some((r) => r.target === w.env.target && r.owner !== w.env.me.owner && !r.expired && r.takenBy === null);
}
