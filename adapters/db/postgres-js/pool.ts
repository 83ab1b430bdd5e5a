/**
 * A `DbPool` over postgres.js, shared by the Hyper and PostgreSQL adapters (both speak the
 * PostgreSQL wire protocol). One postgres.js instance per watcher, `max` = its maxConcurrent.
 */
import type postgres from 'postgres';
import { isConnectionError } from '../../../src/errors.ts';
import type { BegunTransaction, DbConnection, DbPool, Row, TransactionOptions } from '../../../src/types.ts';
import { commit, connectionOf, lastWithCommit } from './connection.ts';
import { type CloseWatch, createInstance, endInstance, type Instance, type InstanceHooks, isConnected, watchClose } from './instance.ts';
import type { Sql } from './sql.ts';

export { describeTable } from './connection.ts';
export { copyFrom } from './copy-from.ts';
export type { InstanceHooks } from './instance.ts';
export type { Sql } from './sql.ts';

/** A `DbPool` whose connections can all be closed and later reopened on demand. */
export interface ResettablePool extends DbPool {
  begin(): BegunTransaction | undefined;
  /**
   * Ends every connection (after their queries finish); the next use opens new ones. `farewell`
   * runs first on each connection that was opened, and must succeed for the reset to succeed.
   */
  reset(farewell?: (sql: Sql) => Promise<unknown>): Promise<void>;
}

/** Ends a begun transaction that was not used (see `begin`): rolled back, not an error. */
const UNUSED = new Error('begun transaction released unused');

/**
 * A pool of `size` single-connection postgres.js instances, handed out one per transaction.
 * `make(hooks)` creates one (again after each `reset`); see `InstanceHooks`. `onClose` runs after
 * the pool has ended for good.
 *
 * Not `sql.begin` nor `sql.reserve` of one postgres.js instance: after the connection drops,
 * `begin` still sends ROLLBACK on it and postgres.js then writes to its nulled socket from a
 * deferred callback (a TypeError no caller can catch, which ends the process), and `reserve` as
 * the first use of a connection never resolves when types are not fetched. Seen here too: a
 * statement issued while the connection is dying never settles.
 *
 * So a transaction races every step against its connection closing: when it closes, the
 * transaction fails at once as a lost connection (retried by the core), and its instance is
 * retired (ended without a word to the server, which rolls back by itself) and replaced by a
 * fresh one. An instance is never reused after its connection closed mid-transaction, so no
 * statement of a transaction can reach a new session and run there auto-committed.
 */
export function poolOf(make: (hooks: InstanceHooks) => Sql, size: number, onClose?: () => Promise<void>): ResettablePool {
  const create = (): Instance => createInstance(make);
  let instances = Array.from({ length: size }, create);
  const idle: Instance[] = [...instances];
  const waiting: ((instance: Instance) => void)[] = [];
  let closed = false;

  function acquire(): Promise<Instance> {
    if (closed) return Promise.reject(Object.assign(new Error('the pool was closed'), { code: 'CONNECTION_ENDED' }));
    const free = idle.pop();
    return free ? Promise.resolve(free) : new Promise((resolve) => waiting.push(resolve));
  }

  function hand(instance: Instance): void {
    const next = waiting.shift();
    if (next) next(instance);
    else idle.push(instance);
  }

  function release(instance: Instance): void {
    // An instance retired (or replaced by `reset`) while in use is not handed out again.
    if (instances.includes(instance)) hand(instance);
  }

  function retire(instance: Instance): void {
    const index = instances.indexOf(instance);
    if (index === -1) return;
    const fresh = create();
    instances[index] = fresh;
    void endInstance(instance, 0).catch(() => {});
    if (!closed) hand(fresh);
  }

  async function withInstance<T>(use: (instance: Instance) => Promise<T>): Promise<T> {
    const instance = await acquire();
    try {
      return await use(instance);
    } finally {
      release(instance);
    }
  }

  /**
   * The rest of a transaction whose BEGIN was sent (`begun`): `fn`, then COMMIT, or ROLLBACK when
   * anything failed. The first statement of `fn` goes out only once BEGIN has succeeded, so none
   * can ever run outside the transaction.
   */
  async function finishTransaction<T>(
    instance: Instance,
    watch: CloseWatch,
    begun: Promise<unknown>,
    fn: (conn: DbConnection) => Promise<T>,
    options: TransactionOptions<T> | undefined,
  ): Promise<T> {
    const { sql } = instance;
    try {
      await watch.step(begun);
      const result = await watch.step(fn(connectionOf(sql, watch.check)));
      watch.check();
      const last = options?.last?.(result);
      if (last) await watch.step(lastWithCommit(sql, last));
      else await watch.step(commit(sql));
      return result;
    } catch (error) {
      // A ROLLBACK sent after the connection broke would make postgres.js reconnect, to a
      // session that has nothing to roll back.
      if (!watch.lost() && !isConnectionError(error)) {
        // A statement failed on a live connection: end the transaction and reuse it.
        await watch.step(sql.unsafe('ROLLBACK')).catch(() => {});
      }
      if (watch.lost() || isConnectionError(error)) retire(instance);
      throw error;
    } finally {
      watch.dispose();
    }
  }

  return {
    transaction: <T>(fn: (conn: DbConnection) => Promise<T>, options?: TransactionOptions<T>) =>
      withInstance((instance) => {
        const watch = watchClose(instance);
        return finishTransaction(instance, watch, instance.sql.unsafe('BEGIN'), fn, options);
      }),
    begin(): BegunTransaction | undefined {
      if (closed) return undefined;
      const instance = idle.pop();
      if (!instance) return undefined;
      const watch = watchClose(instance);
      // `execute` sends now (postgres.js would otherwise wait for the first `then`).
      const begun = instance.sql.unsafe('BEGIN').execute();
      begun.catch(() => {}); // seen by whoever uses or releases it
      let taken = false;
      return {
        transaction<T>(fn: (conn: DbConnection) => Promise<T>, options?: TransactionOptions<T>): Promise<T> {
          if (taken) return Promise.reject(new Error('this begun transaction was already used or released'));
          taken = true;
          return finishTransaction(instance, watch, begun, fn, options).finally(() => release(instance));
        },
        async release() {
          if (taken) return;
          taken = true;
          // Nothing ran in it: ROLLBACK ends it, then the connection is free again.
          await finishTransaction(instance, watch, begun, () => Promise.reject(UNUSED), undefined)
            .catch(() => {})
            .finally(() => release(instance));
        },
      };
    },
    query: <T extends Row = Row>(text: string, params: readonly unknown[] = []) =>
      withInstance(async (instance) => {
        const watch = watchClose(instance);
        try {
          return await watch.step(instance.sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]) as unknown as Promise<T[]>);
        } catch (error) {
          if (watch.lost() || isConnectionError(error)) retire(instance);
          throw error;
        } finally {
          watch.dispose();
        }
      }),
    async reset(farewell) {
      if (closed) return;
      // Callers hold new work back (see the Hyper adapter's checkpoint), so all are idle here.
      const old = instances;
      instances = Array.from({ length: size }, create);
      idle.length = 0;
      idle.push(...instances);
      try {
        if (farewell) {
          // Raced against the connection closing: a statement sent to a dying one never settles.
          // Every farewell is waited for, failed or not, so that no connection is ended with its
          // statement still out (see `endInstance`: one that closes then is waited on for nothing).
          const said = await Promise.allSettled(
            old.filter(isConnected).map(async (instance) => {
              const watch = watchClose(instance);
              try {
                await watch.step(farewell(instance.sql));
              } finally {
                watch.dispose();
              }
            }),
          );
          const failed = said.find((s): s is PromiseRejectedResult => s.status === 'rejected');
          if (failed) throw failed.reason;
        }
      } finally {
        await Promise.all(old.map((instance) => endInstance(instance, 30)));
        for (const resolve of waiting.splice(0)) resolve(idle.pop()!);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all(instances.map((instance) => endInstance(instance, 5)));
      await onClose?.();
    },
  };
}
