/**
 * hyperwatch's own tables at start: created in their schema (own-tables.ts), and those of a
 * version before it (`public.hyperwatch_ingest_log`, `_leases`, `_fences`) moved in.
 *
 * The rows move in one transaction: for each old table, `INSERT INTO new SELECT ... FROM old`,
 * then `DELETE FROM old`, which must remove exactly the rows copied. The tables themselves are
 * made before it and the emptied old ones dropped after it, each on its own: Hyper commits DDL at
 * once whatever the transaction around it does, and refuses DDL after DML in one transaction
 * (`ALTER TABLE ... SET SCHEMA` and a rename into another schema it does not know at all). So at
 * any moment every row is in the old table or in the new one, never in both and never in
 * neither, and every start does the same steps again: after a crash at any point the next one
 * finishes the move (the old tables present, empty or not, are emptied into the new and dropped).
 *
 * Several processes may start at once: a second mover's DELETE meets the first one's (Hyper: a
 * conflict, 40001; PostgreSQL: it waits, then removes nothing, fewer rows than it copied), so it
 * rolls back and tries again, and then finds the old tables empty or gone. The fences go first:
 * a process of the earlier version still running holds its fence row while it commits, so the
 * move's DELETE waits for that commit (PostgreSQL) or conflicts with it (Hyper) before the ledger
 * is copied, and none of its transactions commits after the move (its fence row is gone).
 */
import { FENCE_TABLE, LEASE_TABLE, LEDGER_TABLE, OLD_FENCE_TABLE, OLD_LEASE_TABLE, OLD_LEDGER_TABLE, OWN_SCHEMA } from '../constants.ts';
import { ensureLeaseTables } from './lease.ts';
import { ensureLedger } from './ledger.ts';
import { deniedAs } from './own-tables.ts';
import { columnList } from '../columns/schema.ts';
import { qualifiedName, tableLabel } from '../columns/sql.ts';
import type { DbPool, Logger, TableColumn, TableName } from '../types.ts';

/** Old table → new, in the order their rows move (see above: fences first). */
const MOVES: readonly (readonly [TableName, TableName])[] = [
  [OLD_FENCE_TABLE, FENCE_TABLE],
  [OLD_LEASE_TABLE, LEASE_TABLE],
  [OLD_LEDGER_TABLE, LEDGER_TABLE],
];

/** The moments of a move a crash test stops at: `copied <old>` inside its transaction, the rest after. */
export type MoveStep = 'tables ready' | `copied ${string}` | 'rows moved' | `dropped ${string}`;

export interface MoveOptions {
  readonly log: Logger;
  /** Called after each step (tests kill the process there); awaited. */
  readonly afterStep?: (step: MoveStep) => Promise<void> | void;
}

/** What a move did, for its log line and for tests. */
export interface MoveResult {
  /** Rows moved per old table (its label), by this process's transaction. */
  readonly rows: Readonly<Record<string, number>>;
  /** Old tables this process dropped. */
  readonly dropped: readonly string[];
}

/** Creates the schema and tables when missing, then moves in an older version's (see above). */
export async function prepareOwnTables(pool: DbPool, options: MoveOptions): Promise<MoveResult | undefined> {
  await ensureLedger(pool);
  await ensureLeaseTables(pool);
  await options.afterStep?.('tables ready');
  return moveOldLayout(pool, options);
}

/** A move that lost to another (or to an older process writing meanwhile): tried again. */
class MoveRaced extends Error {
  readonly code = 'MOVE_RACED';
}

/** Another process moved or dropped the old tables meanwhile, or its transaction conflicted with ours. */
function isMoveRace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'MOVE_RACED' || code === '40001' || code === '40P01' || code === '55P03' || code === '42P01';
}

const MOVE_ATTEMPTS = 20;

interface OldTable {
  readonly from: TableName;
  readonly to: TableName;
  /** The columns both have (an old ledger may lack the later ones; they stay NULL). */
  readonly columns: readonly { name: string }[];
}

async function oldTables(pool: DbPool): Promise<OldTable[]> {
  // In one transaction, and the new table described only when the old one is there: nearly
  // every start finds none, and each catalog query costs hyperd a few ms of CPU.
  const described = await pool.transaction(async (conn) => {
    const pairs: [TableName, TableName, TableColumn[], TableColumn[] | null][] = [];
    for (const [from, to] of MOVES) {
      const old = await conn.describeTable(from);
      if (old) pairs.push([from, to, old, await conn.describeTable(to)]);
    }
    return pairs;
  });
  return described.map(([from, to, old, now]) => {
    if (!now) throw new Error(`hyperwatch's table ${tableLabel(to)} is missing while ${tableLabel(from)} is to be moved into it`);
    const names = new Set(now.map((c) => c.name));
    return { from, to, columns: old.filter((c) => names.has(c.name)) };
  });
}

/** Moves the rows of the old tables present into the new ones, then drops the old ones. */
export async function moveOldLayout(pool: DbPool, options: MoveOptions): Promise<MoveResult | undefined> {
  const { log, afterStep } = options;
  let old: OldTable[] = [];
  let rows: Record<string, number> = {};
  for (let attempt = 1; ; attempt++) {
    try {
      // Looked at again on every attempt: the one that beat us may have dropped them by now.
      old = await oldTables(pool);
      if (old.length === 0) break;
      if (attempt === 1)
        log.info(`moving hyperwatch's tables of an earlier version from public into the schema ${OWN_SCHEMA}`, {
          tables: old.map((t) => tableLabel(t.from)),
        });
      const tables = old;
      rows = await pool.transaction(async (conn) => {
        const moved: Record<string, number> = {};
        for (const t of tables) {
          const columns = columnList(t.columns);
          const copied = await conn.execute(
            `INSERT INTO ${qualifiedName(t.to)} (${columns}) SELECT ${columns} FROM ${qualifiedName(t.from)}`,
          );
          const removed = await conn.execute(`DELETE FROM ${qualifiedName(t.from)}`);
          if (removed !== copied) throw new MoveRaced(`${tableLabel(t.from)}: copied ${copied} rows, removed ${removed}`);
          moved[tableLabel(t.from)] = copied;
          await afterStep?.(`copied ${tableLabel(t.from)}`);
        }
        return moved;
      });
      break;
    } catch (error) {
      if (attempt >= MOVE_ATTEMPTS || !isMoveRace(error))
        throw deniedAs(`move hyperwatch's tables from public into the schema ${OWN_SCHEMA}`, error);
      log.debug('moving the old tables met another process; trying again', { attempt, error: String(error) });
      await new Promise((r) => setTimeout(r, 10 * attempt + Math.random() * 20));
    }
  }
  if (old.length === 0 && Object.keys(rows).length === 0) return undefined;
  await afterStep?.('rows moved');
  const dropped: string[] = [];
  for (const t of old) {
    try {
      await pool.query(`DROP TABLE IF EXISTS ${qualifiedName(t.from)}`);
      dropped.push(tableLabel(t.from));
      await afterStep?.(`dropped ${tableLabel(t.from)}`);
    } catch (error) {
      // Empty now, so nothing is lost: a role that may write the table but not drop it leaves it
      // (the next start tries again).
      log.warn(`could not drop ${tableLabel(t.from)}, now empty (its rows are in ${tableLabel(t.to)}); drop it as its owner`, {
        error: String(error),
      });
    }
  }
  log.info(`moved hyperwatch's tables into the schema ${OWN_SCHEMA}`, { rows, dropped });
  return { rows, dropped };
}
