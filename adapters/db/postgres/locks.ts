/**
 * What only PostgreSQL needs about row locks: an UPDATE of a row another open transaction has
 * updated waits for that transaction to end (Hyper fails it at once instead). So a process frozen
 * between the update of its fence row and its COMMIT would hold a takeover of its lease for as
 * long as it stays frozen: the takeover bounds its wait, and the session holding the lock can be
 * ended (see src/store/lease.ts).
 */
import { quoteIdent, quoteLiteral } from '../../../src/columns/sql.ts';
import type { DbConnection, DbPool, RowsOf } from '../../../src/types.ts';

/** Statements of this transaction that wait longer than `ms` for a lock fail (55P03). */
export async function limitLockWait(conn: DbConnection, ms: number): Promise<void> {
  await conn.query(`SET LOCAL lock_timeout = '${Math.max(1, Math.trunc(ms))}ms'`);
}

/**
 * Ends the sessions (not ours) holding a lock on one of `rows`. A row locked by an open UPDATE
 * carries that transaction's id as `xmax`; `pg_locks` names the session holding it.
 */
export async function endRowLockHolders(pool: DbPool, rows: RowsOf): Promise<number> {
  const ended = await pool.query<{ ended: unknown }>(
    `SELECT pg_terminate_backend(l.pid) AS ended
       FROM ${rows.table} f JOIN pg_locks l ON l.locktype = 'transactionid' AND l.transactionid = f.xmax AND l.granted
      WHERE f.${quoteIdent(rows.column)} = ${quoteLiteral(rows.value)} AND l.pid <> pg_backend_pid()`,
  );
  return ended.filter((r) => r.ended === true).length;
}
