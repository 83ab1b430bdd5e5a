/**
 * Where the adapter's hyperd listens, and how to reach it: the running hyperd it was given
 * (endpoint), or an embedded one started on first use and shared by the process's adapters.
 */
import net from 'node:net';
import type { Logger } from '../../../src/types.ts';
import { acquire } from './embedded.ts';
import type { EndpointSpec } from './endpoint.ts';
import type { Endpoint, Hyperd } from './hyperd.ts';
import { locateHyperd } from './locate.ts';

export interface HyperServer {
  /** The endpoint given, if any; undefined: an embedded hyperd. */
  readonly fixed: EndpointSpec | undefined;
  /** Where hyperd listens now (the embedded one is started by the first call). */
  endpoint(): Promise<Endpoint>;
  /** The embedded hyperd's pid, undefined for an endpoint or before start. */
  pid(): number | undefined;
  /** How many times the embedded hyperd has started (0 for an endpoint): a restart loses uncheckpointed commits. */
  starts(): number;
  /** Lets go of the embedded hyperd (the last adapter of the process stops it). */
  release(): Promise<void>;
}

export function hyperServer(fixed: EndpointSpec | undefined, hyperdPath: string | undefined, user: string, logger: Logger): HyperServer {
  let embedded: { hyperd: Hyperd; release: () => Promise<void> } | undefined;
  return {
    fixed,
    endpoint() {
      if (fixed) return Promise.resolve(fixed);
      if (!embedded) {
        const located = locateHyperd(hyperdPath);
        if (!located.ok) return Promise.reject(Object.assign(new Error(located.message), { code: 'HYPERD_NOT_FOUND' }));
        embedded = acquire(located.path, user, logger);
      }
      return embedded.hyperd.endpoint();
    },
    pid: () => embedded?.hyperd.pid,
    starts: () => embedded?.hyperd.starts ?? 0,
    release: async () => embedded?.release(),
  };
}

/** Makes the postgres.js options of a connection to database `db` (`''`: none) with at most `max` sessions. */
export type ConnectOptionsFor = ReturnType<typeof connectOptionsFor>;

/**
 * postgres.js options for the server. The socket factory asks for the endpoint on every new
 * connection, so a hyperd that died and was restarted on another port is picked up by the pool
 * without rebuilding it. TCP_NODELAY: without it every COPY stalls ~90 ms on Nagle + delayed ACK.
 */
export function connectOptionsFor(server: HyperServer, user: string, password: string | undefined) {
  return (db: string, max: number, adopt: (socket: net.Socket) => net.Socket = (socket) => socket) =>
    ({
      user,
      ...(password !== undefined ? { pass: password } : {}),
      database: db,
      max,
      fetch_types: false,
      prepare: false,
      idle_timeout: 0,
      connect_timeout: 30,
      onnotice: () => {},
      socket: async () => {
        const { host, port } = await server.endpoint();
        return adopt(net.connect({ host, port, noDelay: true }));
      },
    }) as const;
}
