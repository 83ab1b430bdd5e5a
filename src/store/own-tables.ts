/**
 * hyperwatch's own tables (the ledger, the leases, the fences), in a schema of their own
 * (`OWN_SCHEMA`): the schema and the tables are created when missing, never touched when present.
 * A role allowed to write them but not to create them (a loader role in a database other programs
 * use) then runs as well as an owner, once an owner created them; a role that may not create them
 * where they are missing, or may not reach them, is told what to ask for.
 */
import { FENCE_TABLE, LEASE_TABLE, LEDGER_TABLE, OWN_SCHEMA } from '../constants.ts';
import { fromDbError } from '../errors.ts';
import { qualifiedName, quoteIdent, quoteLiteral, tableLabel } from '../columns/sql.ts';
import type { DbPool, TableName } from '../types.ts';

const OWN_TABLE_NAMES = [LEDGER_TABLE, LEASE_TABLE, FENCE_TABLE].map(tableLabel).join(', ');

/** The one-time set-up a role without CREATE on the database (or USAGE on the schema) needs. */
export class OwnTablesDeniedError extends Error {
  readonly code = 'OWN_TABLES_DENIED';
  constructor(
    /** What it was refused, e.g. `create hyperwatch's schema hyperwatch`. */
    readonly refused: string,
    override readonly cause: unknown,
  ) {
    super(
      `this database role may not ${refused} (${cause instanceof Error ? cause.message : String(cause)}). ` +
        `Run hyperwatch once as a role that may create schemas in this database (it creates the schema ${OWN_SCHEMA} ` +
        `with ${OWN_TABLE_NAMES}, ` +
        `and moves those of an earlier version out of public), then GRANT USAGE ON SCHEMA ${OWN_SCHEMA} TO this role ` +
        `and GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${OWN_SCHEMA} TO this role; or GRANT CREATE ON DATABASE to it.`,
    );
    this.name = 'OwnTablesDeniedError';
  }
}

/** A refusal of the database's privileges (42501), as OwnTablesDeniedError saying what was refused. */
export function deniedAs(refused: string, error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code === '42501' ? new OwnTablesDeniedError(refused, error) : error;
}

/**
 * Runs `step` (a look at the catalog, then a `CREATE ... IF NOT EXISTS`), retried a few times
 * when it races another process doing the same: PostgreSQL can fail one of two concurrent
 * creations (23505 on its catalog), Hyper one of two concurrent transactions (40001), and on
 * Hyper even a read of pg_catalog fails with 40001 while another session changes it.
 */
export async function racing<T>(step: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await step();
    } catch (error) {
      if (attempt >= 8 || !isCreateRace(error)) throw error;
      await new Promise((r) => setTimeout(r, 10 * attempt + Math.random() * 20));
    }
  }
}

/** A concurrent creation of the same table or schema: the next try finds it there. */
export function isCreateRace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === '42P07' || code === '40001') return true;
  return fromDbError(error).kind === 'transient' && (code === '23505' || code === '42P06' || code === '42710');
}

/** Whether schema `name` exists (pg_catalog: the same on Hyper and PostgreSQL). */
export async function schemaExists(pool: DbPool, name: string): Promise<boolean> {
  const rows = await pool.query(`SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = ${quoteLiteral(name)}`);
  return rows.length > 0;
}

/**
 * Creates `OWN_SCHEMA` unless it exists. Looked up first: PostgreSQL checks the right to create
 * a schema before it looks whether one exists, so a loader role would be refused even then.
 */
export async function ensureOwnSchema(pool: DbPool): Promise<void> {
  try {
    await racing(async () => {
      if (!(await schemaExists(pool, OWN_SCHEMA))) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(OWN_SCHEMA)}`);
    });
  } catch (error) {
    throw deniedAs(`create hyperwatch's schema ${OWN_SCHEMA}`, error);
  }
}

/** Creates `table` (in `OWN_SCHEMA`) with `columns` (the SQL between the parentheses) unless it exists. */
export async function ensureOwnTable(pool: DbPool, table: TableName, columns: string): Promise<void> {
  try {
    await racing(async () => {
      if ((await pool.transaction((conn) => conn.describeTable(table))) === null)
        await pool.query(`CREATE TABLE IF NOT EXISTS ${qualifiedName(table)} (${columns})`);
    });
  } catch (error) {
    throw deniedAs(`create hyperwatch's table ${tableLabel(table)}`, error);
  }
}
