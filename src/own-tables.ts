/**
 * hyperwatch's own tables (the ledger, the leases, the fences): created when missing, never
 * touched when present. A role allowed to write them but not to create tables (a loader role in
 * a database other programs use) then runs as well as an owner, once an owner created them; a
 * role that may not create them where they are missing is told what to ask for.
 */
import { fromDbError } from './errors.ts';
import { quoteIdent } from './sql.ts';
import type { DbPool } from './types.ts';

/** The one-time set-up a role without CREATE on the schema needs. */
export class OwnTablesDeniedError extends Error {
  readonly code = 'OWN_TABLES_DENIED';
  constructor(
    readonly table: string,
    override readonly cause: unknown,
  ) {
    super(
      `this database role may not create hyperwatch's table ${table} (${cause instanceof Error ? cause.message : String(cause)}). ` +
        'Run hyperwatch once as a role that may create tables there (it creates hyperwatch_ingest_log, hyperwatch_leases and hyperwatch_fences), ' +
        'then GRANT SELECT, INSERT, UPDATE, DELETE ON those tables to this role; or GRANT CREATE ON the schema to it.',
    );
    this.name = 'OwnTablesDeniedError';
  }
}

/**
 * Runs a `CREATE ... IF NOT EXISTS`, retried a few times: PostgreSQL can fail one of two concurrent
 * ones (23505 on its catalog), Hyper one of two concurrent transactions (40001).
 */
export async function createRacing(pool: DbPool, sql: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await pool.query(sql);
      return;
    } catch (error) {
      if (attempt >= 5 || !isCreateRace(error)) throw error;
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  }
}

/** A concurrent creation of the same table or schema: the next try finds it there. */
export function isCreateRace(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === '42P07' || code === '40001') return true;
  return fromDbError(error).kind === 'transient' && (code === '23505' || code === '42P06' || code === '42710');
}

/** Creates table `name` with `columns` (the SQL between the parentheses) unless it exists. */
export async function ensureOwnTable(pool: DbPool, name: string, columns: string): Promise<void> {
  if ((await pool.transaction((conn) => conn.describeTable({ name }))) !== null) return;
  try {
    await createRacing(pool, `CREATE TABLE IF NOT EXISTS ${quoteIdent(name)} (${columns})`);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === '42501') throw new OwnTablesDeniedError(name, error);
    throw error;
  }
}
