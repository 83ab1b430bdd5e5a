/**
 * One attempt: `ingesting` → one transaction (a file alone, or a group) → `committed`, or a
 * failure for retry.ts to judge. Also what the watcher knows about its target table: whether it
 * exists, and its columns as last committed (a catalog query spared per file).
 */
import { BATCH_FILE_MAX_BYTES } from '../constants.ts';
import { ingestError, IngestFailure, fromDbError, isIngestFailure } from '../errors.ts';
import type { OpenedFile } from '../files.ts';
import { readLeases } from '../lease.ts';
import { ledgerByCopy, ledgerInsert, recordAllInLedger } from '../ledger.ts';
import { Mutex } from '../mutex.ts';
import { dropIfCreatedEmpty } from '../schema.ts';
import type { ColumnSpec, DbConnection, IngesterPlugin, IngestError, TableColumn, TableName } from '../types.ts';
import { takeEarly } from './claim.ts';
import { epochOf, ingestContext, ledgerEntry, ledgerFileOf, poolOf, type WatchContext } from './context.ts';
import { changedAfterReady } from './fail.ts';
import { badRowsOf, checkBadRows } from './skip.ts';
import { fence, takeSlot } from './lease.ts';

/** What the watcher knows about its target table. */
export interface TableKnowledge {
  /** Once the table is known to exist, files no longer serialize on the schema lock. */
  exists: boolean;
  /**
   * The target table's columns as last committed: describing it costs a catalog query (about
   * 5 ms on hyperd) per file. Dropped on any failed transaction; a file that fails while using it
   * is tried once more with a fresh description, so a table changed behind our back costs a
   * retry, never a wrongly failed file.
   */
  described: TableColumn[] | undefined;
  /** Until the table exists, files take turns: two transactions creating it would conflict. */
  readonly schemaLock: Mutex;
  /** Columns schema evolution added (and a committed file used), each logged and counted once. */
  readonly added: Set<string>;
}

export function newTableKnowledge(): TableKnowledge {
  return { exists: false, described: undefined, schemaLock: new Mutex(), added: new Set() };
}

/** How one attempt ended. `usedCache`: it failed while using the cached table description. */
export type Attempted<R> =
  | { readonly state: 'committed'; readonly rows: R; readonly epoch: number; readonly rejected?: number }
  | { readonly state: 'failed'; readonly error: IngestError; readonly index?: number; readonly usedCache: boolean };

/** What one transaction learned about the target table; kept only if it commits. */
interface Described {
  columns: TableColumn[] | undefined;
  usedCache: boolean;
}

function sameTable(a: TableName, b: TableName): boolean {
  return a.name === b.name && (a.schema ?? 'public') === (b.schema ?? 'public');
}

/**
 * `conn` with the target table's description served from the cache (see `TableKnowledge`); what
 * a transaction reads from the database lands in `described`, kept only if it commits.
 * `afterExecute` runs right after each `execute` was handed to the connection, before its reply.
 */
function describing(ctx: WatchContext, conn: DbConnection, described: Described, afterExecute?: () => void): DbConnection {
  return {
    query: (sql, params) => conn.query(sql, params),
    execute: (sql, params) => {
      const done = conn.execute(sql, params);
      afterExecute?.();
      return done;
    },
    copyFrom: (sql, source) => conn.copyFrom(sql, source),
    describeTable: async (table) => {
      if (!sameTable(table, ctx.table)) return conn.describeTable(table);
      const cached = ctx.known.described;
      if (cached) {
        described.usedCache = true;
        return cached.map((c) => ({ ...c }));
      }
      const columns = await conn.describeTable(table);
      if (columns) described.columns = columns.map((c) => ({ ...c }));
      return columns;
    },
  };
}

/** One transaction for one file: its rows, then its ledger row sent with the COMMIT. */
export async function attemptOne(ctx: WatchContext, file: OpenedFile, plugin: IngesterPlugin, attempt: number, fileState: Map<string, unknown>): Promise<Attempted<number>> {
  const { known } = ctx;
  const added: ColumnSpec[] = [];
  const badRows = badRowsOf(ctx, file);
  const pctx = { ...ingestContext(ctx, attempt, fileState, added), ...(badRows ? { badRows } : {}) };
  const epoch = epochOf(ctx);
  const early = takeEarly(ctx, file, known.exists);
  const release = known.exists ? undefined : await known.schemaLock.acquire();
  const existedBefore = release ? await tableIsThere(ctx) : true;
  const described: Described = { columns: undefined, usedCache: false };
  const slot = takeSlot(ctx.lease, early?.sentAt);
  try {
    const rows = await (early?.begun ?? poolOf(ctx)).transaction(
      async (conn) => {
        const fencing = behindFirstStatement(ctx, conn, slot.slot, file.size <= BATCH_FILE_MAX_BYTES);
        const appended = await plugin.append(describing(ctx, conn, described, fencing.send), file, ctx.table, pctx);
        if (appended.isErr()) throw new IngestFailure(appended.error);
        const changed = file.changedSinceClaim();
        if (changed) throw new IngestFailure(changedAfterReady(file, changed));
        if (!known.exists) known.exists = described.columns !== undefined || (await conn.describeTable(ctx.table)) !== null;
        if (badRows) await checkBadRows(ctx, file, badRows, appended.value.rows);
        await fencing.passed();
        return appended.value.rows;
      },
      // The ledger row goes with the COMMIT, in one round trip.
      { last: (rows) => ledgerInsert([ledgerEntry(ctx, file, rows, badRows?.rejected)]) },
    );
    if (described.columns) known.described = described.columns;
    columnsAdded(ctx, added, [file]);
    return { state: 'committed', rows, epoch, ...(badRows ? { rejected: badRows.rejected } : {}) };
  } catch (error) {
    await badRows?.discard();
    known.described = undefined;
    await columnsKept(ctx, added, [file]);
    const failure = fromDbError(error, file.name);
    // Not after a transient failure: that may be another process creating the table right now.
    if (!existedBefore && failure.kind !== 'transient') await dropIfCreatedEmptyQuietly(ctx);
    return { state: 'failed', error: failure, usedCache: described.usedCache };
  } finally {
    slot.release();
    release?.();
  }
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
function behindFirstStatement(ctx: WatchContext, conn: DbConnection, slot: number, small: boolean): { send: (() => void) | undefined; passed: () => Promise<void> } {
  let sent: Promise<void> | undefined;
  return {
    send: small
      ? () => {
          if (sent) return;
          sent = fence(ctx, conn, slot);
          // Awaited by `passed`; when the ingester's statement failed first, this one fails too.
          sent.catch(() => {});
        }
      : undefined,
    passed: () => sent ?? fence(ctx, conn, slot),
  };
}

/**
 * One transaction for a group: all of it committed, or none. A failure that belongs to one file
 * names it (`index`); `usedCache` is never claimed (the group is split instead of retried).
 */
export async function attemptGroup(ctx: WatchContext, files: readonly OpenedFile[], plugin: IngesterPlugin, attempt: number): Promise<Attempted<readonly number[]>> {
  const added: ColumnSpec[] = [];
  const pctx = ingestContext(ctx, attempt, new Map(), added);
  const epoch = epochOf(ctx);
  const described: Described = { columns: undefined, usedCache: false };
  const entries = (rows: readonly number[]) => files.map((f, i) => ledgerEntry(ctx, f, rows[i]!));
  // Many rows go in by COPY inside the transaction; a few as an INSERT sent with the COMMIT.
  const byCopy = ledgerByCopy(files.length);
  const early = takeEarly(ctx, files[0]!, true);
  const slot = takeSlot(ctx.lease, early?.sentAt);
  try {
    const rows = await (early?.begun ?? poolOf(ctx)).transaction(
      async (raw) => {
        const conn = describing(ctx, raw, described);
        const rows = await appendAll(conn, files, plugin, ctx.table, pctx);
        const changed = files.map((f) => f.changedSinceClaim());
        const index = changed.findIndex((c) => c !== undefined);
        if (index >= 0) throw new IngestFailure(changedAfterReady(files[index]!, changed[index]!), index);
        // The ledger's COPY before the fence, never after it: a process killed in the middle of
        // a COPY FROM STDIN can leave, on hyperd, a session that never ends, and with the fence
        // row updated in it no takeover could ever bump that row's token.
        // On a shared server that reads our files, it reads the ledger rows from one too: no
        // COPY FROM STDIN that a kill could cut off (see ledgerFileOf).
        if (byCopy) await recordAllInLedger(raw, entries(rows), ledgerFileOf(ctx, `${files[0]!.claimId}-${attempt}`));
        await fence(ctx, raw, slot.slot);
        return rows;
      },
      byCopy ? undefined : { last: (rows) => ledgerInsert(entries(rows)) },
    );
    if (described.columns) ctx.known.described = described.columns;
    columnsAdded(ctx, added, files);
    return { state: 'committed', rows, epoch };
  } catch (error) {
    ctx.known.described = undefined;
    await columnsKept(ctx, added, files);
    if (isIngestFailure(error)) return { state: 'failed', error: error.error, ...(error.index === undefined ? {} : { index: error.index }), usedCache: false };
    return { state: 'failed', error: fromDbError(error), usedCache: false };
  } finally {
    slot.release();
  }
}

/** Each file's rows: by the plugin's `appendMany` when it has one, else file by file. */
async function appendAll(conn: DbConnection, files: readonly OpenedFile[], plugin: IngesterPlugin, table: TableName, pctx: ReturnType<typeof ingestContext>): Promise<number[]> {
  if (plugin.appendMany) {
    const appended = await plugin.appendMany(conn, files, table, pctx);
    if (appended.isErr()) throw new IngestFailure(appended.error.error, appended.error.index);
    const rows = appended.value.map((r) => r.rows);
    if (rows.length !== files.length) {
      throw new IngestFailure(ingestError('io', 'PLUGIN_RESULT', `plugin ${plugin.name} returned ${rows.length} results for ${files.length} files`, 'A bug in the plugin; the files are retried one by one.'));
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
 * Columns a committed transaction added (schema evolution): the cached description lacks them,
 * so it is dropped; each column is logged and counted once, however many files brought it.
 */
function columnsAdded(ctx: WatchContext, added: readonly ColumnSpec[], files: readonly OpenedFile[]): void {
  if (added.length === 0) return;
  ctx.known.described = undefined;
  for (const column of added) {
    if (ctx.known.added.has(column.name)) continue;
    ctx.known.added.add(column.name);
    ctx.stats.columnsAdded++;
    ctx.log.info('added column', { table: ctx.target, column: column.name, type: column.type.kind, files: files.map((f) => f.name) });
  }
}

/**
 * A transaction that added columns failed: Hyper keeps DDL even so (PostgreSQL does not), so the
 * columns the table now has were added all the same, and are counted.
 */
async function columnsKept(ctx: WatchContext, added: readonly ColumnSpec[], files: readonly OpenedFile[]): Promise<void> {
  if (added.length === 0) return;
  try {
    const present = new Set((await poolOf(ctx).transaction((conn) => conn.describeTable(ctx.table)))?.map((c) => c.name));
    columnsAdded(
      ctx,
      added.filter((c) => present.has(c.name)),
      files,
    );
  } catch {
    // Not counted then; the table is what it is.
  }
}

/** Knowing the table before the first file spares that file the schema lock and catalog queries. */
export async function describeAtStart(ctx: WatchContext): Promise<void> {
  try {
    const columns = await poolOf(ctx).transaction((conn) => conn.describeTable(ctx.table));
    if (columns) {
      ctx.known.exists = true;
      ctx.known.described = columns;
    }
  } catch {
    // The first file finds out, under the schema lock.
  }
}

export async function tableIsThere(ctx: WatchContext): Promise<boolean> {
  return (await poolOf(ctx).transaction((conn) => conn.describeTable(ctx.table))) !== null;
}

async function dropIfCreatedEmptyQuietly(ctx: WatchContext): Promise<void> {
  try {
    // PostgreSQL rolled the CREATE TABLE back with the transaction: a table there now is another
    // process's, perhaps with rows about to commit (a DROP would wait for them, then drop them).
    if (ctx.db.name === 'postgres') return;
    // Hyper: a DROP after an empty count can still drop rows another process commits in between
    // (checked: count 0, another session inserts and commits, the DROP succeeds). Only when no
    // other live process writes this table.
    if (await othersWriting(ctx)) {
      ctx.log.warn('a failed file created the table; it is left in place since other processes write to it', { table: ctx.target });
      return;
    }
    await dropIfCreatedEmpty(poolOf(ctx), ctx.table);
  } catch (error) {
    ctx.log.warn('could not drop the empty table a failed file created', { table: ctx.target, error: String(error) });
  }
}

/** Another live process (of any directory) has this table as its target. */
async function othersWriting(ctx: WatchContext): Promise<boolean> {
  const rows = await readLeases(poolOf(ctx));
  return rows.some((r) => r.target === ctx.target && r.owner !== ctx.lease.me.owner && !r.expired && r.takenBy === null);
}
