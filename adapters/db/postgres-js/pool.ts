/**
 * A `DbPool` over postgres.js, shared by the Hyper and PostgreSQL adapters (both speak the
 * PostgreSQL wire protocol). One postgres.js instance per watcher, `max` = its maxConcurrent.
 */
import type net from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import postgres from 'postgres';
import { isConnectionError } from '../../../src/errors.ts';
import type { BegunTransaction, DbConnection, DbPool, Row, Statement, TableColumn, TableName, TransactionOptions } from '../../../src/types.ts';

export type Sql = postgres.Sql<Record<string, never>>;
type TransactionSql = postgres.TransactionSql<Record<string, never>>;
type AnySql = Sql | TransactionSql;

/** The two settle functions postgres.js keeps on every pending query (see `copyFrom`). */
interface SettleHooks {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Runs `COPY ... FROM STDIN` and streams `source` into it; resolves with the row count.
 *
 * postgres.js resolves the query with a Writable and then settles nothing else: when the server
 * rejects the data after the last chunk, the Writable's `final` callback is never called (an
 * `await` on it hangs and `sql.begin` never rolls back), and on success the "COPY n" row count is
 * dropped. Both arrive as a second resolve/reject of the same query object, so we hook those two
 * functions and turn them into one promise that always settles. Pinned to postgres 3.4.x, and the
 * tests cover both paths (a bad row at the end, a bad row mid-stream, a count).
 */
export async function copyFrom(sql: AnySql, statement: string, source: AsyncIterable<Uint8Array | string>): Promise<number> {
  const query = sql.unsafe(statement);
  const hooks = query as unknown as SettleHooks;
  let streaming = false;
  let settle!: { resolve: (count: number) => void; reject: (error: unknown) => void };
  const done = new Promise<number>((resolve, reject) => {
    settle = { resolve, reject };
  });
  const firstResolve = hooks.resolve;
  const firstReject = hooks.reject;
  hooks.resolve = (value) => {
    if (!streaming) return firstResolve(value);
    const count = (value as { count?: unknown } | null)?.count;
    settle.resolve(typeof count === 'number' ? count : Number(count ?? 0));
  };
  hooks.reject = (error) => (streaming ? settle.reject(error) : firstReject(error));

  const writable = await query.writable();
  streaming = true;
  // On an error, postgres.js destroys this stream and its destroy handler writes CopyFail to the
  // socket, which is null when the error was the connection closing: a TypeError thrown out of a
  // socket event, uncatchable by any caller. Nothing can be told to a dead connection anyway.
  const destroy = writable._destroy.bind(writable);
  writable._destroy = (error, callback) => {
    try {
      destroy(error, callback);
    } catch {
      // callback was already called before the failed write
    }
  };
  let sourceError: unknown;
  const piped = pipeline(Readable.from(source, { objectMode: false }), writable).catch((error: unknown) => {
    sourceError ??= error;
  });
  try {
    return await done;
  } catch (error) {
    // When reading the file failed, the server only saw our CopyFail: report the real cause.
    throw sourceError ?? error;
  } finally {
    void piped;
  }
}

/** Columns of `table`, or `null` when it does not exist. pg_catalog works on Hyper and PostgreSQL. */
export async function describeTable(sql: AnySql, table: TableName): Promise<TableColumn[] | null> {
  const rows = await sql.unsafe<{ name: string; sql_type: string; not_null: boolean }[]>(
    `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS sql_type, a.attnotnull AS not_null
       FROM pg_catalog.pg_attribute a
       JOIN pg_catalog.pg_class c ON a.attrelid = c.oid
       JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
      WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    [table.schema ?? 'public', table.name],
  );
  if (rows.length === 0) return null;
  return rows.map((r) => ({ name: r.name, sqlType: r.sql_type, nullable: !r.not_null }));
}

/**
 * Sends `last` and COMMIT back to back, without waiting in between: one round trip, not two, which
 * is a millisecond or so per file against hyperd. Both servers end a transaction whose statement
 * failed with ROLLBACK at its COMMIT (checked: the COMMIT's reply must say COMMIT).
 */
async function lastWithCommit(sql: AnySql, last: Statement): Promise<void> {
  // `execute` sends at once, in this order (postgres.js would otherwise send on first `then`).
  const statement = sql.unsafe(last.text, (last.params ?? []) as postgres.ParameterOrJSON<never>[]).execute();
  const commit = sql.unsafe('COMMIT').execute();
  const [ran, committed] = await Promise.allSettled([statement, commit]);
  if (ran.status === 'rejected') throw ran.reason;
  if (committed.status === 'rejected') throw committed.reason;
  if (committed.value.command !== 'COMMIT') {
    throw Object.assign(new Error(`the server ended the transaction with ${committed.value.command} at COMMIT; nothing of it was committed`), { code: '40000' });
  }
}

/** `check` runs before every statement: it throws when the transaction's session is gone. */
function connectionOf(sql: AnySql, check: () => void = () => {}): DbConnection {
  return {
    query: <T extends Row = Row>(text: string, params: readonly unknown[] = []) => {
      check();
      return sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]) as unknown as Promise<T[]>;
    },
    execute: async (text: string, params: readonly unknown[] = []) => {
      check();
      const result = await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]);
      return Number(result.count ?? 0);
    },
    copyFrom: (statement, source) => {
      check();
      return copyFrom(sql, statement, source);
    },
    describeTable: (table) => {
      check();
      return describeTable(sql, table);
    },
  };
}

/** A `DbPool` whose connections can all be closed and later reopened on demand. */
export interface ResettablePool extends DbPool {
  begin(): BegunTransaction | undefined;
  /**
   * Ends every connection (after their queries finish); the next use opens new ones. `farewell`
   * runs first on each connection that was opened, and must succeed for the reset to succeed.
   */
  reset(farewell?: (sql: Sql) => Promise<unknown>): Promise<void>;
}

/** What `poolOf` gives the adapter for each postgres.js instance it makes. */
export interface InstanceHooks {
  /** Pass as postgres.js's `onclose` option. */
  readonly onclose: () => void;
  /** The adapter's `socket` factory passes every socket it opens for this instance through here. */
  readonly adopt: <S extends net.Socket>(socket: S) => S;
}

/** One single-connection postgres.js instance, and who wants to know when its connection closes. */
interface Instance {
  readonly sql: Sql;
  readonly closeListeners: Set<() => void>;
  /** Every socket opened for it (a reconnect opens another), so a retired one can cut them all. */
  readonly sockets: Set<net.Socket>;
  /** Ended for good: a socket it still opens is cut at once. */
  ended: boolean;
}

/** Whether the instance holds a connection that is open (postgres.js connects lazily). */
function isConnected(instance: Instance): boolean {
  return [...instance.sockets].some((socket) => !socket.destroyed);
}

/**
 * Ends an instance for good. After `end`, postgres.js still reconnects when a query was pending on
 * a connection that broke (seen here: a new session opened 200 ms after `end` resolved, then left
 * idle for ever), and a server session left open keeps its database attached: on Hyper that
 * silently stops every later checkpoint from writing the database out. So its sockets are
 * destroyed once postgres.js had its chance to close them politely, and any it opens later, at once.
 */
async function endInstance(instance: Instance, timeout: number): Promise<void> {
  instance.ended = true;
  try {
    await instance.sql.end({ timeout });
  } finally {
    for (const socket of instance.sockets) socket.destroy();
  }
}

/** Ends a begun transaction that was not used (see `begin`): rolled back, not an error. */
const UNUSED = new Error('begun transaction released unused');

function connectionClosed(): Error {
  return Object.assign(new Error('the connection closed during the transaction; nothing of it was committed'), { code: 'CONNECTION_CLOSED' });
}

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
  const create = (): Instance => {
    const closeListeners = new Set<() => void>();
    const sockets = new Set<net.Socket>();
    const sql = make({
      onclose: () => {
        for (const listener of [...closeListeners]) listener();
      },
      adopt: (socket) => {
        if (instance.ended) {
          socket.destroy();
          return socket;
        }
        sockets.add(socket);
        socket.once('close', () => sockets.delete(socket));
        return socket;
      },
    });
    const instance: Instance = { sql, closeListeners, sockets, ended: false };
    return instance;
  };
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

  /** Races work on `instance` against its connection closing (see above). */
  function watchClose(instance: Instance) {
    let lost = false;
    let onLost!: () => void;
    const whenLost = new Promise<never>((_, reject) => {
      onLost = () => {
        lost = true;
        reject(connectionClosed());
      };
    });
    whenLost.catch(() => {});
    instance.closeListeners.add(onLost);
    return {
      step: <R>(work: Promise<R>): Promise<R> => Promise.race([work, whenLost]),
      check: () => {
        if (lost) throw connectionClosed();
      },
      lost: () => lost,
      dispose: () => instance.closeListeners.delete(onLost),
    };
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
    watch: ReturnType<typeof watchClose>,
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
      else await watch.step(sql.unsafe('COMMIT'));
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
          await Promise.all(
            old
              .filter(isConnected)
              .map(async (instance) => {
                const watch = watchClose(instance);
                try {
                  await watch.step(farewell(instance.sql));
                } finally {
                  watch.dispose();
                }
              }),
          );
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
