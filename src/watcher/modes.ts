/**
 * Load modes other than append, inside the file's transaction (see src/options/load-modes.ts). The plugin
 * still only appends; what it appends to, and what happens before and after, is decided here:
 * - `replace`: the plugin appends to the table itself, and `DELETE FROM` the table runs right
 *   before its first data statement (after any DDL it runs: hyperd refuses DDL after DML in one
 *   transaction). Readers see the old table until the COMMIT, then the new one (checked on
 *   hyperd with a second session polling during replaces, and on PostgreSQL by its MVCC).
 * - `upsert`, `replace-keys`: the plugin appends to a temporary staging table with the table's
 *   columns, and modes-apply.ts moves the rows from there. DDL the plugin runs on the staging
 *   table (creating the table from the first file, schema evolution) is run on the table
 *   instead, and the staging table made again from the table's new description.
 *
 * hyperd 9.1 does not read back in full what one COPY of its own transaction wrote (a COPY of
 * 200,000 rows read back as 68,928 in the same transaction; all of them after the COMMIT). So on
 * Hyper the file goes into a real staging table in a transaction of its own, committed, and the
 * file's transaction (with its ledger row and fence) applies it from there (`stageApart`); the
 * staging table, named after the claim, is dropped after. On PostgreSQL all of it is one
 * transaction, through a temporary table.
 */
import { OWN_SCHEMA } from '../constants.ts';
import { ingestError, IngestFailure } from '../errors.ts';
import type { OpenedFile } from '../protocol/files.ts';
import { committedClaims } from '../store/ledger.ts';
import { qualifiedName, quoteIdent, quoteLiteral } from '../columns/sql.ts';
import { randomHex } from '../protocol/names.ts';
import type { DbConnection, IngestContext, IngesterPlugin, TableName } from '../types.ts';
import type { WatchEnv } from './env.ts';
import { applyStaged, createStage, STAGE, type StagedLoad } from './modes-apply.ts';
import type { Described } from './table-knowledge.ts';
import type { Watch } from './watch.ts';

const DDL = /^\s*(create|alter|drop)\b/i;

/** How one file's transaction loads in the watcher's mode. */
export interface ModeLoad {
  /** The connection to hand the plugin. */
  readonly conn: DbConnection;
  /** The table to hand the plugin. */
  readonly table: TableName;
  /** Runs first in the transaction (DDL: hyperd wants it before any DML). */
  prepare(): Promise<void>;
  /** After the plugin appended `rows`: applies them; resolves with the rows the file brought. */
  finish(rows: number, fileName: string): Promise<number>;
}

/**
 * `inner`: the connection the plugin would get in append mode (it serves the cached description
 * and sends the fence); `raw`: the transaction's own, for the statements of the mode.
 */
export function modeLoad(env: WatchEnv, inner: DbConnection, raw: DbConnection): ModeLoad {
  if (env.options.mode === 'replace') return replaceLoad(env, inner, raw);
  const load = stagedLoad(env, inner, raw, STAGE);
  return { ...load, finish: (rows, fileName) => applyStaged(env, raw, load.state, rows, fileName, STAGE) };
}

/** The keyed modes load the file in a transaction of their own first (Hyper, see above). */
export function stagesApart(env: WatchEnv): boolean {
  return (env.options.mode === 'upsert' || env.options.mode === 'replace-keys') && env.db.capabilities.partialReadBack === true;
}

/** A file staged apart: its committed staging table, what the load left to know, its rows. */
export interface StagedApart {
  readonly stage: TableName;
  readonly state: StagedLoad;
  readonly rows: number;
}

/**
 * Loads the file into a staging table of its own (`hyperwatch_internal.stage_<claim>_<attempt>`), in a
 * transaction that commits without a ledger row: nothing of the file is in the table yet, and a
 * crash before the file's transaction leaves only the staging table, made again on the next try.
 *
 * It commits behind the lease's fence (`fence`, run last, after the plugin's COPY, as in the
 * file's transaction): a process taken over while still running commits no staging table after
 * the process that took its claims dropped their tables (recover.ts), which nobody would drop if
 * it were then killed before dropping it itself (one was seen left behind in a mode-kill-hyper
 * run under load: this is the window found for it).
 */
export async function stageApart(
  w: Watch,
  file: OpenedFile,
  plugin: IngesterPlugin,
  ctx: IngestContext,
  described: Described,
  fence: (conn: DbConnection) => Promise<void>,
): Promise<StagedApart> {
  const stage = stageOfAttempt(file.claimId);
  return w.pool.get().transaction(async (raw) => {
    const load = stagedLoad(w.env, w.known.describing(raw, described), raw, stage);
    await load.prepare();
    const appended = await plugin.append(load.conn, file, load.table, ctx);
    if (appended.isErr()) throw new IngestFailure(appended.error);
    await fence(raw);
    return { stage, state: load.state, rows: appended.value.rows };
  });
}

/**
 * The file's transaction applies the rows staged apart. Its staging table gone (a process that
 * took this one's claims over cleaned up after it): the attempt is retried, never failed for its data.
 */
export async function applyApart(env: WatchEnv, conn: DbConnection, staged: StagedApart, fileName: string): Promise<number> {
  try {
    return await applyStaged(env, conn, staged.state, staged.rows, fileName, staged.stage);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code !== '42P01') throw error;
    throw new IngestFailure(
      ingestError(
        'transient',
        'STAGE_MISSING',
        `${fileName}: its staging table ${qualifiedName(staged.stage)} was dropped before its rows were applied (${String(error)})`,
        'Retried on its own; nothing of the file was applied.',
        { file: fileName },
      ),
    );
  }
}

const STAGE_PREFIX = 'stage_';

/**
 * A staging table of one attempt at a claim's file: named for the attempt, not only the claim,
 * because a process whose claims were taken over may still be in its attempt while the process
 * that took them makes its own; each drops only the table it made.
 */
function stageOfAttempt(claimId: string): TableName {
  return { schema: OWN_SCHEMA, name: `${STAGE_PREFIX}${claimId}_${randomHex(4)}` };
}

/**
 * The staging table of a file staged apart, once its transaction ended. A failure to drop it is
 * only logged: the next start drops it if the file committed (`dropStagesOfCommitted`), and
 * recovery if the claim is taken over.
 */
export async function dropApart(w: Watch, staged: StagedApart): Promise<void> {
  await dropStage(w, staged.stage);
}

/**
 * A claim found at recovery: a process that died may have left the staging tables of its
 * attempts (between their commit and the file's, or before it dropped them). Its claims are now
 * this process's, so no live attempt of another process needs them.
 */
export async function dropStagesOfClaim(w: Watch, claimId: string): Promise<void> {
  if (!stagesApart(w.env)) return;
  const stages = await stageTables(w, { claimId });
  for (const stage of stages.filter((s) => s.claimId === claimId)) await dropStage(w, stage.table);
}

/**
 * At start-up: the staging tables of claims that committed. Their attempt's own drop failed (it
 * is only logged) or never ran, and once the claim is settled no recovery looks at it again:
 * without this, such a table would stay for good. A claim that committed needs no staging table:
 * its file is in; an attempt of a process taken over that still holds one fails its fence.
 */
export async function dropStagesOfCommitted(w: Watch): Promise<void> {
  if (!stagesApart(w.env)) return;
  const stages = await stageTables(w, {});
  if (stages.length === 0) return;
  let committed: Set<string>;
  try {
    committed = await committedClaims(
      w.pool.get(),
      stages.map((s) => s.claimId),
    );
  } catch (error) {
    w.env.log.warn('could not look up the claims of staging tables', { error: String(error) });
    return;
  }
  for (const stage of stages.filter((s) => committed.has(s.claimId))) {
    if (await dropStage(w, stage.table)) {
      w.env.log.info('dropped the staging table of a file already committed', {
        table: qualifiedName(stage.table),
        claimId: stage.claimId,
      });
    }
  }
}

/** The claim a staging table was made for (`stage_<claim>_<attempt>`), or undefined for another table. */
function claimOfStage(name: string): string | undefined {
  if (!name.startsWith(STAGE_PREFIX)) return undefined;
  const attempt = name.lastIndexOf('_');
  return attempt > STAGE_PREFIX.length ? name.slice(STAGE_PREFIX.length, attempt) : undefined;
}

/** The staging tables in hyperwatch's schema (an empty list when they cannot be listed: logged). */
async function stageTables(w: Watch, context: { claimId?: string }): Promise<{ table: TableName; claimId: string }[]> {
  try {
    const rows = await w.pool.get().query<{ relname: string }>(
      `SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
        WHERE n.nspname = ${quoteLiteral(OWN_SCHEMA)} AND c.relkind = 'r'`,
    );
    return rows.flatMap(({ relname }) => {
      const claimId = claimOfStage(relname);
      return claimId === undefined ? [] : [{ table: { schema: OWN_SCHEMA, name: relname }, claimId }];
    });
  } catch (error) {
    w.env.log.warn('could not list staging tables', { ...context, error: String(error) });
    return [];
  }
}

/** Drops a staging table; false when it could not (logged: a later start drops it if its claim committed). */
async function dropStage(w: Watch, stage: TableName): Promise<boolean> {
  try {
    await w.pool.get().transaction((conn) => conn.query(`DROP TABLE IF EXISTS ${qualifiedName(stage)}`));
    return true;
  } catch (error) {
    w.env.log.warn('could not drop a staging table', { table: qualifiedName(stage), error: String(error) });
    return false;
  }
}

function replaceLoad(env: WatchEnv, inner: DbConnection, raw: DbConnection): ModeLoad {
  let emptied = false;
  const empty = async (sql: string): Promise<void> => {
    if (emptied || DDL.test(sql)) return;
    emptied = true;
    await raw.execute(`DELETE FROM ${qualifiedName(env.table)}`);
  };
  return {
    table: env.table,
    conn: {
      query: async (sql, params) => {
        if (/^\s*(insert|copy)\b/i.test(sql)) await empty(sql);
        return inner.query(sql, params);
      },
      execute: async (sql, params) => {
        await empty(sql);
        return inner.execute(sql, params);
      },
      copyFrom: async (sql, source) => {
        await empty(sql);
        return inner.copyFrom(sql, source);
      },
      describeTable: (table) => inner.describeTable(table),
    },
    prepare: () => Promise.resolve(),
    async finish(rows) {
      // An empty file empties the table: it is the table's whole content.
      await empty('DELETE');
      return rows;
    },
  };
}

function stagedLoad(
  env: WatchEnv,
  inner: DbConnection,
  raw: DbConnection,
  stageTable: TableName,
): Omit<ModeLoad, 'finish'> & { readonly state: StagedLoad } {
  const stage = qualifiedName(stageTable);
  const state: StagedLoad = { columns: null, brought: [] };
  const isStage = (t: TableName) => t.schema === stageTable.schema && t.name === stageTable.name;
  const temporary = stageTable.schema === STAGE.schema;

  /** The staging table made (again) from the table's columns as they are now. */
  const makeStage = async (fresh: boolean): Promise<void> => {
    state.columns = fresh ? await raw.describeTable(env.table) : await inner.describeTable(env.table);
    if (state.columns) await createStage(raw, stageTable, state.columns, temporary);
  };

  /** A statement on the staging table: DDL goes to the table; a load's column list is noted. */
  const route = async (sql: string): Promise<string | undefined> => {
    // Creating the table from the first file begins with its schema: the table's, not the staging table's.
    if (/^\s*create\s+schema\b/i.test(sql) && sql.includes(quoteIdent(stageTable.schema!))) {
      if (env.table.schema) await raw.query(sql.replaceAll(quoteIdent(stageTable.schema!), quoteIdent(env.table.schema)));
      return undefined;
    }
    if (!sql.includes(stage)) return sql;
    if (DDL.test(sql)) {
      await raw.query(sql.replaceAll(stage, qualifiedName(env.table)));
      await makeStage(true);
      return undefined;
    }
    state.brought.push(loadColumns(sql, stage));
    return sql;
  };

  return {
    table: stageTable,
    state,
    conn: {
      query: async (sql, params) => {
        const routed = await route(sql);
        return routed === undefined ? [] : inner.query(routed, params);
      },
      execute: async (sql, params) => {
        const routed = await route(sql);
        return routed === undefined ? 0 : inner.execute(routed, params);
      },
      copyFrom: async (sql, source) => {
        await route(sql);
        return inner.copyFrom(sql, source);
      },
      // The plugin sees the staging table as the table: the same columns, or none yet. The table
      // missing when the load began may have been made since by another process: the staging
      // table is made now, or the plugin would load into one that was never made.
      describeTable: async (table) => {
        if (!isStage(table)) return inner.describeTable(table);
        if (state.columns === null) await makeStage(true);
        return state.columns ?? null;
      },
    },
    prepare: () => makeStage(false),
  };
}

/**
 * The columns a load statement fills: its column list right after the table's name (`COPY t
 * ("a", "b") FROM ...`, `INSERT INTO t ("a") SELECT ...`), or `'all'` without one.
 */
export function loadColumns(sql: string, table: string): readonly string[] | 'all' {
  let i = sql.indexOf(table) + table.length;
  while (sql[i] === ' ') i++;
  if (sql[i] !== '(') return 'all';
  const names: string[] = [];
  const ident = /\s*"((?:[^"]|"")*)"\s*([,)])/y;
  ident.lastIndex = i + 1;
  for (;;) {
    const m = ident.exec(sql);
    if (!m) return 'all';
    names.push(m[1]!.replaceAll('""', '"'));
    if (m[2] === ')') return names;
  }
}
