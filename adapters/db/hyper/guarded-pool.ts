/**
 * The pool a Hyper adapter hands out: every transaction and statement passes the database's gate
 * (a checkpoint holds new work back), counts as work for the idle release, and on the embedded
 * hyperd records the file as it was after each writing transaction (see written.ts).
 */
import type { DbConnection, DbPool, Row, TransactionOptions } from '../../../src/types.ts';
import type { ResettablePool } from '../postgres-js/pool.ts';
import { type BusyRetry, explainAccessDenied, whileBusy } from './busy.ts';
import type { DatabaseEntry } from './databases.ts';
import { watchedBy } from './idle.ts';
import { fileSignature, trackingWrites } from './written.ts';

export interface PoolGuard {
  readonly database: string;
  readonly user: string;
  readonly shared: DatabaseEntry;
  /** The embedded hyperd: its writes are tracked (an endpoint's file is not ours to look at). */
  readonly embedded: boolean;
  /** How many times the embedded hyperd has started. */
  readonly starts: () => number;
  readonly busy: BusyRetry;
  readonly onClose: () => void;
}

type Transaction<T> = (fn: (conn: DbConnection) => Promise<T>, options?: TransactionOptions<T>) => Promise<T>;

export function guardedPool(inner: ResettablePool, guard: PoolGuard): DbPool {
  const { shared, database, user, busy } = guard;
  const { gate } = shared;
  const watched = <T>(run: () => Promise<T>) => watchedBy(shared.idle, run);
  const tracked =
    <T>(run: Transaction<T>): Transaction<T> =>
    async (fn, options) => {
      if (!guard.embedded) return run(fn, options);
      let wrote = options?.last !== undefined;
      const result = await run((conn) => fn(trackingWrites(conn, () => (wrote = true))), options);
      if (wrote) shared.written = { signature: fileSignature(database), epoch: guard.starts() };
      return result;
    };
  return {
    transaction: (fn, options) => gate.run(() => watched(() => tracked(inner.transaction.bind(inner))(fn, options))),
    // A begun transaction holds the gate from its BEGIN until it ends: a checkpoint waits for it.
    begin: () => {
      const entered = gate.tryEnter();
      if (!entered) return undefined;
      const done = shared.idle?.begin();
      const leave = () => {
        entered();
        done?.();
      };
      const begun = inner.begin();
      if (!begun) {
        leave();
        return undefined;
      }
      return {
        transaction: (fn, options) => watched(() => tracked(begun.transaction.bind(begun))(fn, options)).finally(leave),
        release: () => begun.release().finally(leave),
      };
    },
    // A statement outside a transaction that found the database busy did nothing: run it again.
    query: <T extends Row = Row>(text: string, params?: readonly unknown[]) =>
      gate
        .run(() => watched(() => whileBusy('a statement', () => inner.query<T>(text, params), busy)))
        .catch((error: unknown) => {
          throw explainAccessDenied(error, database, user);
        }),
    close: async () => {
      guard.onClose();
      await inner.close();
    },
  };
}
