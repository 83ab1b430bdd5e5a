/**
 * One single-connection postgres.js instance of the pool: made with hooks that track its sockets,
 * ended for good, and raced against its connection closing.
 */
import type net from 'node:net';
import type { Sql } from './sql.ts';

/** What `poolOf` gives the adapter for each postgres.js instance it makes. */
export interface InstanceHooks {
  /** Pass as postgres.js's `onclose` option. */
  readonly onclose: () => void;
  /** The adapter's `socket` factory passes every socket it opens for this instance through here. */
  readonly adopt: <S extends net.Socket>(socket: S) => S;
}

/** One single-connection postgres.js instance, and who wants to know when its connection closes. */
export interface Instance {
  readonly sql: Sql;
  readonly closeListeners: Set<() => void>;
  /** Every socket opened for it (a reconnect opens another), so a retired one can cut them all. */
  readonly sockets: Set<net.Socket>;
  /** Ended for good: a socket it still opens is cut at once. */
  ended: boolean;
}

/** Whether the instance holds a connection that is open (postgres.js connects lazily). */
export function isConnected(instance: Instance): boolean {
  return [...instance.sockets].some((socket) => !socket.destroyed);
}

/**
 * Ends an instance for good. After `end`, postgres.js still reconnects when a query was pending on
 * a connection that broke (seen here: a new session opened 200 ms after `end` resolved, then left
 * idle for ever), and a server session left open keeps its database attached: on Hyper that
 * silently stops every later checkpoint from writing the database out. So its sockets are
 * destroyed once postgres.js had its chance to close them politely, and any it opens later, at once.
 *
 * No chance is given when no connection is open: postgres.js keeps a statement that was running
 * when its connection closed as running, and its `end` then waits out the whole `timeout` (seen:
 * a checkpoint holding every file and heartbeat back for 30 s after hyperd was killed under it).
 */
export async function endInstance(instance: Instance, timeout: number): Promise<void> {
  instance.ended = true;
  try {
    await instance.sql.end({ timeout: isConnected(instance) ? timeout : 0 });
  } finally {
    for (const socket of instance.sockets) socket.destroy();
  }
}

/** A fresh instance from `make`, its sockets and close listeners tracked (see `InstanceHooks`). */
export function createInstance(make: (hooks: InstanceHooks) => Sql): Instance {
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
}

function connectionClosed(): Error {
  return Object.assign(new Error('the connection closed during the transaction; nothing of it was committed'), {
    code: 'CONNECTION_CLOSED',
  });
}

/** Work on one instance, raced against its connection closing. */
export interface CloseWatch {
  /** `work`, or a rejection as soon as the connection closes. */
  step<R>(work: Promise<R>): Promise<R>;
  /** Throws when the connection has closed. */
  check(): void;
  lost(): boolean;
  dispose(): boolean;
}

/** Races work on `instance` against its connection closing (see `poolOf`). */
export function watchClose(instance: Instance): CloseWatch {
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
