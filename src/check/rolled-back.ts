/**
 * The scratch target of a check on PostgreSQL: one transaction on the user's server, rolled back
 * at the end (its DDL with it: the table the file creates, hyperwatch's own tables and rows). The
 * watcher is given an adapter whose pool runs each of its transactions, and each statement
 * outside one, as a savepoint of that transaction, one at a time on its one connection: what
 * fails is undone as a transaction of its own would be, and the rest is seen by what follows.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { DbAdapter, DbConnection, DbPool, Row, TransactionOptions } from '../types.ts';

/** Thrown through the outer transaction to end it with a ROLLBACK, whatever happened inside. */
const ROLL_BACK = new Error('check: rolled back');

/** Runs `fn` with an adapter on one transaction of `db` that is rolled back when `fn` is done. */
export async function inRolledBackTransaction<T>(db: DbAdapter, fn: (scratch: DbAdapter) => Promise<T>): Promise<T> {
  const pool = await db.openPool({ maxConnections: 1 });
  let result: { value: T } | undefined;
  try {
    await pool.transaction(async (conn) => {
      result = { value: await fn(savepointAdapter(db, conn)) };
      throw ROLL_BACK;
    });
  } catch (error) {
    if (error !== ROLL_BACK) throw error;
  } finally {
    await pool.close();
  }
  if (!result) throw new Error('check: the rolled-back transaction ended without a result');
  return result.value;
}

function savepointAdapter(db: DbAdapter, conn: DbConnection): DbAdapter {
  const pool = savepointPool(conn);
  return {
    name: db.name,
    capabilities: db.capabilities,
    sqlType: (type) => db.sqlType(type),
    openPool: async () => pool,
    ...(db.limitLockWait ? { limitLockWait: db.limitLockWait.bind(db) } : {}),
    describe: () => `${db.describe()} (in a transaction rolled back at the end)`,
    close: async () => {},
  };
}

function savepointPool(conn: DbConnection): DbPool {
  // One statement at a time on the one connection; a pool statement made inside a transaction
  // (its turn already held) runs at once, in a savepoint of its own within that one.
  const inTurn = new AsyncLocalStorage<true>();
  let queue: Promise<unknown> = Promise.resolve();
  let next = 0;
  const turn = <T>(work: () => Promise<T>): Promise<T> => {
    if (inTurn.getStore()) return work();
    const run = queue.then(() => inTurn.run(true, work));
    queue = run.catch(() => {});
    return run;
  };
  const savepoint = <T>(work: () => Promise<T>): Promise<T> =>
    turn(async () => {
      const name = `hyperwatch_check_${next++}`;
      await conn.query(`SAVEPOINT ${name}`);
      try {
        const value = await work();
        await conn.query(`RELEASE SAVEPOINT ${name}`);
        return value;
      } catch (error) {
        await conn.query(`ROLLBACK TO SAVEPOINT ${name}`);
        await conn.query(`RELEASE SAVEPOINT ${name}`);
        throw error;
      }
    });
  return {
    transaction: <T>(fn: (c: DbConnection) => Promise<T>, options?: TransactionOptions<T>) =>
      savepoint(async () => {
        const value = await fn(conn);
        const last = options?.last?.(value);
        if (last) await conn.query(last.text, last.params);
        return value;
      }),
    query: <T extends Row = Row>(sql: string, params?: readonly unknown[]) => savepoint(() => conn.query<T>(sql, params)),
    close: async () => {},
  };
}
