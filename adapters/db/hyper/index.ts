/**
 * The Tableau Hyper adapter: an embedded `hyperd` (default) or one already running (endpoint),
 * reached with postgres.js over loopback TCP.
 */
import net from 'node:net';
import { resolve as resolvePath } from 'node:path';
import postgres from 'postgres';
import { silentLogger } from '../../../src/log.ts';
import { quoteIdent, standardSqlType } from '../../../src/sql.ts';
import type { DbAdapter, DbCapabilities, DbPool, Logger } from '../../../src/types.ts';
import { poolOf, type Sql } from '../postgres-js/pool.ts';
import { type Endpoint, Hyperd } from './hyperd.ts';
import { locateHyperd } from './locate.ts';

export { HYPERD_MISSING_MESSAGE, locateHyperd } from './locate.ts';

export interface HyperAdapterOptions {
  /** The `.hyper` file; created when missing. Default `./hyperwatch.hyper`. */
  readonly database?: string;
  /** `host:port` of a running hyperd. Without it, an embedded hyperd is started. */
  readonly endpoint?: string;
  /** The running hyperd (endpoint) can read this machine's files at the watcher's paths. */
  readonly sharedFilesystem?: boolean;
  /** Path to the hyperd binary (default: `HYPERD_PATH`, the npm package, the cache). */
  readonly hyperdPath?: string;
  /** User name for the endpoint's connections (default `hyperwatch`, the embedded server's owner). */
  readonly user?: string;
  readonly logger?: Logger;
}

export const DEFAULT_DATABASE = './hyperwatch.hyper';

/** Embedded servers are shared by all adapters of a process that use the same binary. */
const shared = new Map<string, { hyperd: Hyperd; refs: number }>();

function acquire(binary: string, logger: Logger): { hyperd: Hyperd; release: () => Promise<void> } {
  let entry = shared.get(binary);
  if (!entry) {
    entry = { hyperd: new Hyperd({ binary, logger }), refs: 0 };
    shared.set(binary, entry);
  }
  entry.refs++;
  const held = entry;
  let released = false;
  return {
    hyperd: held.hyperd,
    release: async () => {
      if (released) return;
      released = true;
      if (--held.refs === 0) {
        shared.delete(binary);
        await held.hyperd.stop();
      }
    },
  };
}

export function parseEndpoint(value: string): Endpoint {
  const match = /^(?:tab\.tcp:\/\/)?\[?([^\]]+?)\]?:(\d{1,5})$/.exec(value.trim());
  if (!match || Number(match[2]) > 65535) throw new Error(`invalid endpoint ${JSON.stringify(value)}: expected host:port`);
  return { host: match[1]!, port: Number(match[2]) };
}

export interface HyperAdapter extends DbAdapter {
  /** Absolute path of the `.hyper` file. */
  readonly database: string;
  /** The embedded hyperd's pid (undefined for an endpoint or before start). */
  readonly hyperdPid: number | undefined;
}

/**
 * Creates the Hyper adapter. Nothing starts until the first pool is opened.
 *
 * @example
 * const db = createHyperAdapter({ database: './sales.hyper' });
 * await startWatching('./inbox', 'sales', { db });
 */
export function createHyperAdapter(options: HyperAdapterOptions = {}): HyperAdapter {
  const logger = options.logger ?? silentLogger;
  const database = resolvePath(options.database ?? DEFAULT_DATABASE);
  const fixed = options.endpoint ? parseEndpoint(options.endpoint) : undefined;
  let embedded: { hyperd: Hyperd; release: () => Promise<void> } | undefined;
  const pools = new Set<DbPool>();
  let created: Promise<void> | undefined;
  let closed = false;

  const capabilities: DbCapabilities = {
    readsLocalFiles: fixed ? options.sharedFilesystem === true : true,
    arrowStream: true,
    parquet: true,
  };

  function endpoint(): Promise<Endpoint> {
    if (fixed) return Promise.resolve(fixed);
    if (!embedded) {
      const located = locateHyperd(options.hyperdPath);
      if (!located.ok) return Promise.reject(Object.assign(new Error(located.message), { code: 'HYPERD_NOT_FOUND' }));
      embedded = acquire(located.path, logger);
    }
    return embedded.hyperd.endpoint();
  }

  // The socket factory asks for the endpoint on every new connection, so a hyperd that died and
  // was restarted on another port is picked up by the pool without rebuilding it. TCP_NODELAY:
  // without it every COPY stalls ~90 ms on Nagle + delayed ACK.
  const connectOptions = (db: string, max: number) =>
    ({
      user: options.user ?? 'hyperwatch',
      database: db,
      max,
      fetch_types: false,
      prepare: false,
      idle_timeout: 0,
      connect_timeout: 30,
      onnotice: () => {},
      socket: async () => {
        const { host, port } = await endpoint();
        return net.connect({ host, port, noDelay: true });
      },
    }) as const;

  /** `CREATE DATABASE` needs a connection without a database; done once per adapter. */
  function ensureDatabase(): Promise<void> {
    created ??= (async () => {
      const admin: Sql = postgres(connectOptions('', 1));
      try {
        await admin.unsafe(`CREATE DATABASE IF NOT EXISTS ${quoteIdent(database)}`);
      } finally {
        await admin.end({ timeout: 5 });
      }
    })().catch((error: unknown) => {
      created = undefined;
      throw error;
    });
    return created;
  }

  return {
    name: 'hyper',
    capabilities,
    database,
    get hyperdPid() {
      return embedded?.hyperd.pid;
    },
    sqlType: standardSqlType,
    describe: () => (fixed ? `hyper ${database} at ${fixed.host}:${fixed.port}` : `hyper ${database} (embedded hyperd)`),
    async openPool({ maxConnections }) {
      if (closed) throw new Error('the Hyper adapter was closed');
      await ensureDatabase();
      const sql: Sql = postgres(connectOptions(database, maxConnections));
      const pool = poolOf(sql, async () => {
        pools.delete(pool);
      });
      pools.add(pool);
      return pool;
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...pools].map((p) => p.close()));
      await embedded?.release();
    },
  };
}
