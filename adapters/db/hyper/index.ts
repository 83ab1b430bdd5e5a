/**
 * The Tableau Hyper adapter: an embedded `hyperd` (default) or one already running (endpoint),
 * reached with postgres.js over loopback TCP.
 */
import net from 'node:net';
import { dirname, join, resolve as resolvePath } from 'node:path';
import process from 'node:process';
import postgres from 'postgres';
import { silentLogger } from '../../../src/log.ts';
import { quoteIdent, standardSqlType } from '../../../src/sql.ts';
import type { DbAdapter, DbCapabilities, DbConnection, DbPool, LogicalType, Logger, Row, TransactionOptions } from '../../../src/types.ts';
import { poolOf, type Sql } from '../postgres-js/pool.ts';
import type { Endpoint, Hyperd } from './hyperd.ts';
import { acquire } from './embedded.ts';
import { ENDPOINT_PASSWORD_ENV, parseEndpoint } from './endpoint.ts';
import { locateHyperd } from './locate.ts';
import { DATABASE_MISSING, explainAccessDenied, isLockedElsewhere, whileBusy } from './busy.ts';
import { databaseEntry, DatabaseHeldError } from './databases.ts';
import { announcerFor, checkNotHeld } from './holder.ts';
import { fileSignature, NotWrittenError, trackingWrites } from './written.ts';
import { idleRelease, watchedBy } from './idle.ts';
import { decideReadsFiles, type EndpointReadsFiles } from './probe.ts';
import { endSessionsOf, keyTagged } from './sessions.ts';

export { HYPERD_MISSING_MESSAGE, locateHyperd } from './locate.ts';
export { type Holder, holderPath, readHolder } from './holder.ts';
export { DatabaseHeldError } from './databases.ts';
export { ENDPOINT_PASSWORD_ENV, type EndpointSpec, parseEndpoint } from './endpoint.ts';
export { ENDPOINT_READS_FILES, type EndpointReadsFiles } from './probe.ts';

export interface HyperAdapterOptions {
  /** The `.hyper` file; created when missing. Default `./hyperwatch.hyper`. */
  readonly database?: string;
  /**
   * `host:port` or `user@host:port` of a running hyperd. Without it, an embedded hyperd is started.
   * The password, when the server asks for one, comes from `password` or the environment variable
   * `HYPERWATCH_ENDPOINT_PASSWORD`, never from this string.
   */
  readonly endpoint?: string;
  /** Password for the endpoint's user (default: `HYPERWATCH_ENDPOINT_PASSWORD`). Never logged. */
  readonly password?: string;
  /** The running hyperd (endpoint) can read this machine's files at the watcher's paths (`endpointReadsFiles: 'yes'`). */
  readonly sharedFilesystem?: boolean;
  /**
   * Whether the running hyperd (endpoint) reads the claimed files itself at their paths, instead
   * of having them streamed: `auto` (default) probes it when the first pool opens, with a file
   * written into `probeDir`; `yes` and `no` force either way. The embedded hyperd always does.
   */
  readonly endpointReadsFiles?: EndpointReadsFiles;
  /** The folder the endpoint must read files from (the watcher's staging folder), for the `auto` probe. */
  readonly probeDir?: string;
  /** Path to the hyperd binary (default: `HYPERD_PATH`, the npm package, the cache). */
  readonly hyperdPath?: string;
  /**
   * Version of the `.hyper` file format for a new database (`CREATE DATABASE ... WITH VERSION`).
   * The server's default (2) is readable by older Tableau releases but has no REAL and no NUMERIC
   * above 18 digits: such columns are then created as DOUBLE PRECISION and TEXT. Version 3 adds
   * 128-bit NUMERIC, version 4 REAL. An existing database keeps its version.
   */
  readonly databaseVersion?: number;
  /**
   * The user to connect as (default `hyperwatch`, or the endpoint's `user@`). The embedded hyperd
   * runs as this user too, and a `.hyper` file opens only for the role that created it: use
   * `tableau_internal_user` for files made by Tableau's Hyper API (and to make files it opens).
   */
  readonly user?: string;
  /**
   * Embedded hyperd: publish where it listens in `<database>.hyperwatch-endpoint.json` while a
   * pool is open, so readers (`hyperwatch query`, psql) go through it (default true).
   */
  readonly announce?: boolean;
  /**
   * Embedded: once nothing has run for this long (ms) and every commit is checkpointed, the
   * sessions detach and close, so other programs can open the file (default 2000; 0: never).
   */
  readonly releaseIdleMs?: number;
  readonly logger?: Logger;
}

export const DEFAULT_DATABASE = './hyperwatch.hyper';
export const DEFAULT_RELEASE_IDLE_MS = 2000;

/** Logical type → SQL on a Hyper database of the given file-format version. */
export function hyperSqlType(type: LogicalType, version: number): string {
  if (type.kind === 'real' && version < 4) return 'DOUBLE PRECISION';
  if (type.kind === 'decimal' && type.precision > 18 && version < 3) return 'TEXT';
  return standardSqlType(type);
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
  const user = options.user ?? fixed?.user ?? 'hyperwatch';
  const password = fixed ? (options.password ?? (process.env[ENDPOINT_PASSWORD_ENV] || undefined)) : undefined;
  const busy = { logger };
  let embedded: { hyperd: Hyperd; release: () => Promise<void> } | undefined;
  const pools = new Set<DbPool>();
  const shared = databaseEntry(`${fixed ? `${fixed.host}:${fixed.port}` : 'embedded'}|${database}`);
  let created: Promise<void> | undefined;
  let closed = false;
  const detach = `DETACH DATABASE ${quoteIdent(database)}`;
  let usesIdle = false;
  // Endpoint: where each process lists its sessions' cancel keys (`.hyperwatch/sessions`, beside the staging folder; see sessions.ts).
  const keysDir = fixed && options.probeDir !== undefined ? join(dirname(options.probeDir), 'sessions') : undefined;

  /** Embedded: the database's idle release, started by the first adapter that opens a pool. */
  function startIdle(): void {
    if (fixed || usesIdle) return;
    usesIdle = true;
    shared.idleUsers++;
    shared.idle ??= idleRelease({
      database,
      delayMs: options.releaseIdleMs ?? DEFAULT_RELEASE_IDLE_MS,
      pending: () => shared.written !== undefined,
      release: () => shared.gate.exclusive(async () => void (await Promise.all([...shared.pools].map((p) => p.reset((sql) => sql.unsafe(detach)))))),
      logger,
    });
  }

  const watched = <T>(run: () => Promise<T>) => watchedBy(shared.idle, run);

  const announcer = announcerFor(shared, database, user, logger);
  /** Embedded: tells readers where this process's hyperd listens (again when it moved). */
  const announce = async () => {
    if (!fixed && options.announce !== false && !closed) announcer.announce(await endpoint());
  };

  const readsFilesMode: EndpointReadsFiles = options.endpointReadsFiles ?? (options.sharedFilesystem === true ? 'yes' : 'auto');
  // An endpoint in `auto` mode streams until the probe (first openPool) says it can read the files.
  let readsFiles = fixed ? readsFilesMode === 'yes' : true;
  let probed: Promise<void> | undefined;
  const capabilities: DbCapabilities = {
    get readsLocalFiles() {
      return readsFiles;
    },
    arrowStream: true,
    parquet: true,
    // hyperd writes a database to its file only when it unloads it (no connection left): a
    // committed transaction is lost if hyperd dies before that. See `checkpoint`.
    durableCommit: false,
  };

  function endpoint(): Promise<Endpoint> {
    if (fixed) return Promise.resolve(fixed);
    if (!embedded) {
      const located = locateHyperd(options.hyperdPath);
      if (!located.ok) return Promise.reject(Object.assign(new Error(located.message), { code: 'HYPERD_NOT_FOUND' }));
      embedded = acquire(located.path, user, logger);
    }
    return embedded.hyperd.endpoint();
  }

  // The socket factory asks for the endpoint on every new connection, so a hyperd that died and
  // was restarted on another port is picked up by the pool without rebuilding it. TCP_NODELAY:
  // without it every COPY stalls ~90 ms on Nagle + delayed ACK.
  const connectOptions = (db: string, max: number, adopt: (socket: net.Socket) => net.Socket = (socket) => socket) =>
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
        const { host, port } = await endpoint();
        return adopt(net.connect({ host, port, noDelay: true }));
      },
    }) as const;

  /**
   * Whether the database can be opened as it is. Asked before any CREATE DATABASE: on a hyperd
   * shared with a client that attaches the database all the time, `CREATE DATABASE IF NOT EXISTS`
   * on an existing database now and then hung hyperd for good (its watchdog aborted it minutes
   * later); opening it as every client does never did.
   */
  async function databaseExists(): Promise<boolean> {
    const probe: Sql = postgres(connectOptions(database, 1));
    try {
      await whileBusy('opening the database', () => probe.unsafe('SELECT 1'), busy);
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code === DATABASE_MISSING) return false;
      if (!fixed && isLockedElsewhere(error)) throw new DatabaseHeldError(database, 'another program (its own hyperd has the file open)');
      throw explainAccessDenied(error, database, user);
    } finally {
      await probe.end({ timeout: 5 });
    }
  }

  /** `CREATE DATABASE` needs a connection without a database; done once per adapter. */
  function ensureDatabase(): Promise<void> {
    created ??= (async () => {
      if (await databaseExists()) return;
      const admin: Sql = postgres(connectOptions('', 1));
      try {
        const version = options.databaseVersion ? ` WITH VERSION ${Math.floor(options.databaseVersion)}` : '';
        const create = `CREATE DATABASE IF NOT EXISTS ${quoteIdent(database)}${version}`;
        await whileBusy('creating the database', () => admin.unsafe(create), busy).catch((error: unknown) => {
          // Another program (Tableau, the Hyper API, a hyperd of its own) has the file open.
          if (!fixed && String((error as Error).message).includes('locked by another process')) throw new DatabaseHeldError(database, 'another program (its own hyperd has the file open)');
          throw error;
        });
      } finally {
        await admin.end({ timeout: 5 });
      }
    })().catch((error: unknown) => {
      created = undefined;
      throw error;
    });
    return created;
  }

  /** Endpoint, `auto`: asks hyperd once whether it can read the probe folder. */
  function probeEndpoint(): Promise<void> {
    probed ??= fixed && readsFilesMode === 'auto'
      ? decideReadsFiles(() => postgres(connectOptions(database, 1)), options.probeDir, `hyperd at ${fixed.host}:${fixed.port}`, logger).then(
          (reads) => void (readsFiles = reads),
          (error: unknown) => {
            probed = undefined;
            throw error;
          },
        )
      : Promise.resolve();
    return probed;
  }

  return {
    name: 'hyper',
    capabilities,
    database,
    get hyperdPid() {
      return embedded?.hyperd.pid;
    },
    sqlType: (type) => hyperSqlType(type, options.databaseVersion ?? 2),
    describe: () => (fixed ? `hyper ${database} at ${fixed.user ? `${fixed.user}@` : ''}${fixed.host}:${fixed.port}` : `hyper ${database} (embedded hyperd)`),
    async openPool({ maxConnections, owner }) {
      if (closed) throw new Error('the Hyper adapter was closed');
      if (!fixed) checkNotHeld(database);
      await ensureDatabase();
      await probeEndpoint();
      await announce();
      startIdle();
      const inner = poolOf(
        ({ onclose, adopt }) => {
          // An endpoint outlives us: each session carries its cancel key (see sessions.ts).
          const sql: Sql = postgres({ ...connectOptions(database, 1, (socket) => (fixed && owner ? keyTagged(adopt(socket), fixed, owner, (tag) => sql.unsafe(tag), keysDir) : adopt(socket))), onclose });
          return sql;
        },
        maxConnections,
        async () => {
          shared.pools.delete(inner);
        },
      );
      shared.pools.add(inner);
      const { gate } = shared;
      // Embedded: remember the file as it was after each writing transaction (see written.ts).
      const tracked = <T>(run: (fn: (conn: DbConnection) => Promise<T>, options?: TransactionOptions<T>) => Promise<T>) =>
        async (fn: (conn: DbConnection) => Promise<T>, options?: TransactionOptions<T>): Promise<T> => {
          if (fixed) return run(fn, options);
          let wrote = options?.last !== undefined;
          const result = await run((conn) => fn(trackingWrites(conn, () => (wrote = true))), options);
          if (wrote) shared.written = { signature: fileSignature(database), epoch: embedded?.hyperd.starts ?? 0 };
          return result;
        };
      const pool: DbPool = {
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
          gate.run(() => watched(() => whileBusy('a statement', () => inner.query<T>(text, params), busy))).catch((error: unknown) => {
            throw explainAccessDenied(error, database, user);
          }),
        close: async () => {
          pools.delete(pool);
          await inner.close();
        },
      };
      pools.add(pool);
      return pool;
    },
    epoch: () => embedded?.hyperd.starts ?? 0,
    endSessionsOf: (owner) => (fixed ? endSessionsOf(postgres(connectOptions('', 1)), fixed, owner, keysDir) : Promise.resolve(0)),
    waitingFor: () => shared.idle?.waitingFor(),
    /**
     * Makes every commit so far durable. hyperd writes a database to its file when the last session
     * detaches it, and that DETACH returns once the write is done; a session that merely
     * disconnects detaches later, on the server's own time. So, holding new work back, every open
     * session detaches the database explicitly before it is closed (the last of those DETACHes is
     * the write), then a control session attaches and detaches it once more, which covers the case
     * of no session being open. Measured here: about 100 ms on a 3M-row database.
     */
    checkpoint() {
      return shared.gate.exclusive(async () => {
        await Promise.all([...shared.pools].map((p) => p.reset((sql) => whileBusy('checkpoint', () => sql.unsafe(detach), busy))));
        const control: Sql = postgres(connectOptions('', 1));
        try {
          await whileBusy('checkpoint', () => control.unsafe(`ATTACH DATABASE ${quoteIdent(database)} AS hyperwatch_checkpoint`), busy);
          await whileBusy('checkpoint', () => control.unsafe('DETACH DATABASE hyperwatch_checkpoint'), busy);
        } finally {
          await control.end({ timeout: 5 });
        }
        // After a restart of hyperd the watcher re-checks its commits against the ledger itself.
        const { written } = shared;
        if (written?.signature !== undefined && written.epoch === (embedded?.hyperd.starts ?? 0) && fileSignature(database) === written.signature) {
          throw new NotWrittenError(database);
        }
        shared.written = undefined;
        await announce();
      });
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...pools].map((p) => p.close()));
      announcer.withdraw();
      if (usesIdle && --shared.idleUsers === 0) {
        shared.idle?.stop();
        shared.idle = undefined;
      }
      await embedded?.release();
    },
  };
}
