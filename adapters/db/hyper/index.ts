/**
 * The Tableau Hyper adapter: an embedded `hyperd` (default) or one already running (endpoint),
 * reached with postgres.js over loopback TCP. This module wires the parts together: where hyperd
 * is (server.ts), what it can do (capabilities.ts), the database file (create-database.ts), the
 * pools it hands out (guarded-pool.ts), durability (checkpoint.ts) and the idle release (idle.ts).
 */
import { resolve as resolvePath } from 'node:path';
import process from 'node:process';
import postgres from 'postgres';
import { silentLogger } from '../../../src/log.ts';
import type { DbPool } from '../../../src/types.ts';
import { poolOf, type Sql } from '../postgres-js/pool.ts';
import { hyperCapabilities, hyperSqlType } from './capabilities.ts';
import { checkpointDatabase, detachStatement } from './checkpoint.ts';
import { databaseEnsurer } from './create-database.ts';
import { SERVER_DEFAULT_DATABASE_VERSION } from './database-version.ts';
import { databaseEntry } from './databases.ts';
import { fileRole, LEGACY_ROLE, TABLEAU_ROLE } from './file-role.ts';
import { ENDPOINT_PASSWORD_ENV, parseEndpoint } from './endpoint.ts';
import { guardedPool } from './guarded-pool.ts';
import { announcerFor, checkNotHeld } from './holder.ts';
import { idleRelease } from './idle.ts';
import { DEFAULT_DATABASE, DEFAULT_RELEASE_IDLE_MS, type HyperAdapter, type HyperAdapterOptions } from './options.ts';
import { connectOptionsFor, hyperServer } from './server.ts';
import { endSessionsOf, keyTagged } from './sessions.ts';

export { HYPERD_MISSING_MESSAGE, hyperdMissingMessage, locateHyperd } from './locate.ts';
export { type FetchedHyperd, fetchHyperd, type FetchHyperdOptions, HYPERD_FETCH_FAILED } from './fetch.ts';
export { HYPERD_NOT_FOUND, NO_FETCH_ENV } from './provision.ts';
export { HYPERD_BUILDS, HYPERD_PLATFORMS, HYPERD_VERSION, type HyperdPlatform } from './platforms.ts';
export { type Holder, holderPath, readHolder } from './holder.ts';
export { DatabaseHeldError } from './databases.ts';
export { ENDPOINT_PASSWORD_ENV, type EndpointSpec, parseEndpoint } from './endpoint.ts';
export { ENDPOINT_READS_FILES, type EndpointReadsFiles } from './probe.ts';
export { DEFAULT_DATABASE, DEFAULT_RELEASE_IDLE_MS, type HyperAdapter, type HyperAdapterOptions } from './options.ts';
export { hyperSqlType } from './capabilities.ts';
export { fileRole, LEGACY_ROLE, TABLEAU_ROLE } from './file-role.ts';
export {
  DATABASE_VERSIONS,
  type DatabaseVersion,
  databaseVersionProblem,
  OPENED_BY,
  parseDatabaseVersion,
  SERVER_DEFAULT_DATABASE_VERSION,
} from './database-version.ts';

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
  // An endpoint's server runs as whoever started it (README: Adapters); the embedded one as the
  // role the file belongs to, and Tableau's for a new file (file-role.ts).
  const existingRole = options.user !== undefined || fixed ? undefined : fileRole(database);
  const user = options.user ?? fixed?.user ?? (fixed ? LEGACY_ROLE : (existingRole ?? TABLEAU_ROLE));
  const password = fixed ? (options.password ?? (process.env[ENDPOINT_PASSWORD_ENV] || undefined)) : undefined;
  const busy = { logger };
  const server = hyperServer(
    fixed,
    { hyperdPath: options.hyperdPath, fetch: options.fetchHyperd },
    user,
    logger,
    options.isolated === true,
  );
  const connect = connectOptionsFor(server, user, password, options.datesAsText === true);
  const pools = new Set<DbPool>();
  const shared = databaseEntry(`${fixed ? `${fixed.host}:${fixed.port}` : 'embedded'}|${database}`);
  const ensureDatabase = databaseEnsurer({
    database,
    user,
    version: options.databaseVersion,
    embedded: !fixed,
    connect,
    busy,
    ...(options.create === false ? { create: false } : {}),
  });
  /** The file's format version, once a pool was opened and hyperd said. */
  let fileVersion: number | undefined;
  const { capabilities, probe } = hyperCapabilities(server, options, database, connect, logger);
  let closed = false;
  let usesIdle = false;
  // Endpoint: where each process lists its sessions' cancel keys (see sessions.ts).
  const keysDir = fixed ? options.sessionsDir : undefined;

  const keepsFile = !fixed && options.releaseIdleMs === 0;
  /** Attaches the database on a session of ours (it then holds the file); false when that failed. */
  const attachAgain = async () => {
    const pool = [...shared.pools][0];
    if (!pool) return true;
    return pool.query('SELECT 1').then(
      () => true,
      () => false,
    );
  };

  /** Embedded: the database's idle release, started by the first adapter that opens a pool. */
  function startIdle(): void {
    if (fixed || usesIdle) return;
    usesIdle = true;
    shared.idleUsers++;
    const detach = detachStatement(database);
    shared.idle ??= idleRelease({
      database,
      delayMs: options.releaseIdleMs ?? DEFAULT_RELEASE_IDLE_MS,
      pending: () => shared.written !== undefined,
      release: () =>
        shared.gate.exclusive(async () => void (await Promise.all([...shared.pools].map((p) => p.reset((sql) => sql.unsafe(detach)))))),
      logger,
    });
  }

  let roleWarned = false;
  /** Once per adapter: a file of another role than Tableau's is opened, and how to get one that is. */
  function warnForeignRole(): void {
    if (roleWarned || existingRole === undefined || existingRole === TABLEAU_ROLE) return;
    roleWarned = true;
    logger.warn(
      `${database} belongs to the role "${existingRole}" (files made by earlier hyperwatch releases do): hyperwatch opens ` +
        `it as that role, ` +
        `but Tableau's tools (Hyper API, Tableau Desktop, Tableau Server) run as "${TABLEAU_ROLE}" and cannot open it. ` +
        `For a copy they open: hyperwatch export --database ${database} --table <table> --to <copy.hyper>`,
      { database, role: existingRole },
    );
  }

  let versionWarned = false;
  /** Once: `databaseVersion` was asked for, but the file exists with another (it keeps its own). */
  function noteVersion(version: number | undefined): void {
    fileVersion = version;
    const asked = options.databaseVersion;
    if (versionWarned || asked === undefined || version === undefined || version === asked) return;
    versionWarned = true;
    logger.warn(
      `${database} exists with database version ${version}; the version asked for (${asked}) applies to new files only. For ` +
        `a copy of a table in version ${asked}: hyperwatch export --database ${database} --table <table> --to <copy.hyper> ` +
        `--database-version ${asked}`,
      {
        database,
        databaseVersion: version,
      },
    );
  }

  const announcer = announcerFor(shared, database, user, logger);
  /** Embedded: tells readers where this process's hyperd listens (again when it moved). */
  const announce = async () => {
    if (!fixed && options.announce !== false && !closed) announcer.announce(await server.endpoint());
  };

  return {
    name: 'hyper',
    capabilities,
    database,
    get hyperdPid() {
      return server.pid();
    },
    // The file's own version once known: a version 4 file holds REAL even when none was asked for.
    sqlType: (type) => hyperSqlType(type, fileVersion ?? options.databaseVersion ?? SERVER_DEFAULT_DATABASE_VERSION),
    databaseVersion: () => fileVersion,
    describe: () =>
      fixed
        ? `hyper ${database} at ${fixed.user ? `${fixed.user}@` : ''}${fixed.host}:${fixed.port}`
        : `hyper ${database} (embedded hyperd)`,
    async openPool({ maxConnections, owner }) {
      if (closed) throw new Error('the Hyper adapter was closed');
      if (!fixed) checkNotHeld(database);
      warnForeignRole();
      noteVersion(await ensureDatabase());
      await probe();
      await announce();
      startIdle();
      const inner = poolOf(
        ({ onclose, adopt }) => {
          // An endpoint outlives us: each session carries its cancel key (see sessions.ts).
          const sql: Sql = postgres({
            ...connect(database, 1, (socket) =>
              fixed && owner ? keyTagged(adopt(socket), fixed, owner, (tag) => sql.unsafe(tag), keysDir) : adopt(socket),
            ),
            onclose,
          });
          return sql;
        },
        maxConnections,
        async () => {
          shared.pools.delete(inner);
        },
      );
      shared.pools.add(inner);
      const pool = guardedPool(inner, {
        database,
        user,
        shared,
        embedded: !fixed,
        starts: server.starts,
        busy,
        onClose: () => pools.delete(pool),
      });
      pools.add(pool);
      return pool;
    },
    epoch: server.starts,
    // Only an endpoint's sessions outlive us: an embedded hyperd ends with its process.
    ...(fixed ? { endSessionsOf: (owner: string) => endSessionsOf(postgres(connect('', 1)), fixed, owner, keysDir) } : {}),
    waitingFor: () => shared.idle?.waitingFor(),
    /** Makes every commit so far durable (see checkpoint.ts), holding new work back meanwhile. */
    async checkpoint() {
      const attached = await shared.gate.exclusive(async () => {
        await checkpointDatabase({ database, shared, connect, busy, starts: server.starts });
        await announce();
        // releaseIdleMs 0 keeps the file: hyperd wrote it as the last session detached it, so
        // attach it again before new work may run, leaving another program the shortest instant.
        return !keepsFile || (await attachAgain());
      });
      // Another program opened it in that instant: take it back as soon as it lets go.
      if (!attached)
        void (async () => {
          for (let tries = 0; !closed && !(await attachAgain()); tries++) await new Promise((r) => setTimeout(r, tries < 40 ? 50 : 1000));
        })();
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
      await server.release();
    },
  };
}
