/**
 * Where the adapter's hyperd listens, and how to reach it: the running hyperd it was given
 * (endpoint), or an embedded one started on first use and shared by the process's adapters.
 */
import net from 'node:net';
import type { Logger } from '../../../src/types.ts';
import { DATES_AS_TEXT } from '../postgres-js/dates-as-text.ts';
import { type Acquired, acquire } from './embedded.ts';
import type { EndpointSpec } from './endpoint.ts';
import type { Endpoint } from './hyperd.ts';
import { hyperdForFirstUse } from './provision.ts';

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

export interface EmbeddedHyperd {
  /** The binary to start (default: HYPERD_PATH, the npm package, the cache). */
  readonly hyperdPath: string | undefined;
  /** Fetch it into the cache when none is found (default true; see provision.ts). */
  readonly fetch: boolean | undefined;
}

export function hyperServer(
  fixed: EndpointSpec | undefined,
  embeddedAs: EmbeddedHyperd,
  user: string,
  logger: Logger,
  isolated = false,
): HyperServer {
  let started: Promise<Acquired> | undefined;
  let embedded: Acquired | undefined;
  let released = false;
  return {
    fixed,
    async endpoint() {
      if (fixed) return fixed;
      // The first call may fetch hyperd (seconds); every call meanwhile waits for that one.
      started ??= hyperdForFirstUse(embeddedAs.hyperdPath, { fetch: embeddedAs.fetch, logger }).then(
        (binary) => {
          if (released) throw new Error('the Hyper adapter was closed while hyperd was being fetched');
          embedded = acquire(binary, user, logger, isolated);
          return embedded;
        },
        (error: unknown) => {
          // Not found or not fetched: the next call looks again (the user may have fixed it).
          started = undefined;
          throw error;
        },
      );
      return (await started).hyperd.endpoint();
    },
    pid: () => embedded?.hyperd.pid,
    starts: () => embedded?.hyperd.starts ?? 0,
    release: async () => {
      released = true;
      await embedded?.release();
    },
  };
}

/** Makes the postgres.js options of a connection to database `db` (`''`: none) with at most `max` sessions. */
export type ConnectOptionsFor = ReturnType<typeof connectOptionsFor>;

/**
 * postgres.js options for the server. The socket factory asks for the endpoint on every new
 * connection, so a hyperd that died and was restarted on another port is picked up by the pool
 * without rebuilding it. TCP_NODELAY: without it every COPY stalls ~90 ms on Nagle + delayed ACK.
 * `datesAsText`: see HyperAdapterOptions.
 */
export function connectOptionsFor(server: HyperServer, user: string, password: string | undefined, datesAsText = false) {
  return (db: string, max: number, adopt: (socket: net.Socket) => net.Socket = (socket) => socket) =>
    ({
      user,
      ...(password !== undefined ? { pass: password } : {}),
      ...(datesAsText ? { types: DATES_AS_TEXT } : {}),
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
