/**
 * The PostgreSQL adapter: a server reached with postgres.js (the same pool as the Hyper adapter,
 * see `../postgres-js/pool.ts`). Everything goes through plain SQL and `COPY ... FROM STDIN`: the
 * server is in general on another machine, so it reads no local files, and it takes neither
 * Arrow streams nor Parquet. A COMMIT is durable when it returns, so the watcher deletes each
 * file as soon as its transaction commits (no checkpoints).
 */
import net from 'node:net';
import postgres from 'postgres';
import { silentLogger } from '../../../src/log.ts';
import { standardSqlType } from '../../../src/columns/sql.ts';
import type { DbAdapter, DbCapabilities, DbConnection, DbPool, Logger } from '../../../src/types.ts';
import { DATES_AS_TEXT } from '../postgres-js/dates-as-text.ts';
import { poolOf, type Sql } from '../postgres-js/pool.ts';
import { guardCopySource } from './csv-end-marker.ts';
import { endRowLockHolders, limitLockWait } from './locks.ts';
import { endSessionsNamed, sessionName } from './sessions.ts';

export interface PostgresAdapterOptions {
  /**
   * A PostgreSQL connection URL, as postgres.js reads it, e.g.
   * `postgres://user:password@db.example.com:5432/analytics?sslmode=require`; a unix socket as
   * `postgres://user@/db?host=/var/run/postgresql`. Default: `DATABASE_URL`.
   */
  readonly url?: string;
  /**
   * DATE, TIME, TIMESTAMP and TIMESTAMPTZ values come back as the text the server sends
   * (`2018-01-28`, `2018-01-28 10:15:00+00`) instead of JavaScript Dates (see the Hyper adapter's
   * option of the same name). Default false.
   */
  readonly datesAsText?: boolean;
  readonly logger?: Logger;
}

export const POSTGRES_URL_MISSING_MESSAGE =
  'createPostgresAdapter: no PostgreSQL URL. Pass { url: "postgres://user:password@host:5432/db" } or set DATABASE_URL.';

/** postgres.js's parsed connection options (the part we read). */
interface ParsedOptions {
  readonly host: readonly string[];
  readonly port: readonly number[];
  readonly path: string | false | undefined;
  readonly database: string;
}

/** The URL for postgres.js, and the server address when we must give it ourselves. */
interface ResolvedUrl {
  readonly url: string;
  readonly host?: string[];
  readonly port?: number[];
  readonly path?: string;
}

/**
 * postgres.js reads most URLs itself, but not two common libpq forms: a unix socket directory as
 * `?host=/var/run/postgresql` (with an empty host, `postgres://user@/db?host=...`; it would even
 * send `host` to the server as a setting) and a bracketed IPv6 host (`[::1]`). Those are resolved
 * here into explicit options.
 */
export function resolveUrl(url: string): ResolvedUrl {
  const withHost = url.replace(/^(postgres(?:ql)?:\/\/(?:[^@/?#]*@)?)(?=[/?#]|$)/i, '$1localhost');
  let parsed: URL;
  try {
    parsed = new URL(withHost);
  } catch {
    return { url }; // several hosts (h1,h2): postgres.js's own parser takes those
  }
  const socketDir = parsed.searchParams.get('host');
  if (socketDir?.startsWith('/')) {
    const port = Number(parsed.searchParams.get('port') || parsed.port || 5432);
    parsed.searchParams.delete('host');
    parsed.searchParams.delete('port');
    return { url: parsed.href, host: [socketDir], port: [port], path: `${socketDir.replace(/\/+$/, '')}/.s.PGSQL.${port}` };
  }
  if (parsed.hostname.startsWith('[')) return { url: withHost, host: [parsed.hostname.slice(1, -1)], port: [Number(parsed.port || 5432)] };
  return { url: withHost };
}

/**
 * postgres.js opens its sockets without TCP_NODELAY. Its `COPY ... FROM STDIN` writes the data and
 * then the small CopyDone message; with Nagle's algorithm on, CopyDone waits for the server's
 * delayed ACK of the data. Measured on PostgreSQL 15 over loopback (2-core machine, 180 COPYs of
 * 100 rows each, alternating): median 88.2 ms without TCP_NODELAY, 1.6 to 2.2 ms with it. So the
 * adapter opens the sockets itself, as the Hyper adapter does.
 */
function socketFactory(
  fixed: Partial<ParsedOptions>,
  adopt: (socket: net.Socket) => net.Socket = (socket) => socket,
): (parsed: ParsedOptions) => net.Socket {
  let next = 0;
  return (parsed) => {
    const options = { ...parsed, ...fixed };
    if (options.path) return adopt(net.connect({ path: options.path }));
    // Several hosts (`postgres://h1,h2/db`): one after the other, as postgres.js itself would.
    const index = next++ % options.host.length;
    const host = options.host[index]!;
    const port = options.port[index] ?? options.port[0] ?? 5432;
    // `host` is what postgres.js reads for the TLS server name.
    return adopt(Object.assign(net.connect({ host, port, noDelay: true }), { host, port }));
  };
}

// ---------------------------------------------------------------------------------------------
// Errors: PostgreSQL's COPY positions in the form the core reads
// ---------------------------------------------------------------------------------------------

/** Splits `"a""b", c` → [`a"b`, `c`] (unquoted names fold to lower case, as PostgreSQL does). */
function parseIdentifiers(list: string): string[] | undefined {
  const names: string[] = [];
  const re = /\s*(?:"((?:[^"]|"")*)"|([A-Za-z_][A-Za-z0-9_$]*))\s*(,|$)/y;
  let at = 0;
  while (at < list.length) {
    re.lastIndex = at;
    const match = re.exec(list);
    if (!match) return undefined;
    names.push(match[1] !== undefined ? match[1].replaceAll('""', '"') : match[2]!.toLowerCase());
    at = re.lastIndex;
    if (match[3] === '') break;
  }
  return names;
}

/** The column list of `COPY <table> (<columns>) FROM STDIN ...`, or undefined when it has none. */
export function copyColumns(statement: string): string[] | undefined {
  const match =
    /^\s*COPY\s+(?:"(?:[^"]|"")*"|[^\s("]+)(?:\s*\.\s*(?:"(?:[^"]|"")*"|[^\s("]+))?\s*\(((?:"(?:[^"]|"")*"|[^)"])*)\)\s*FROM\b/i.exec(
      statement,
    );
  return match ? parseIdentifiers(match[1]!) : undefined;
}

/** Marks an error already translated (a connection's error passes out through its transaction too). */
const TRANSLATED = Symbol('hyperwatch.postgres.translated');

/** Fields of a PostgreSQL error that say where a COPY failed. */
interface PgErrorFields {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly detail?: unknown;
  readonly where?: unknown;
  readonly column_name?: unknown;
  readonly syscall?: unknown;
}

/**
 * PostgreSQL reports where a COPY failed in the error's context (`COPY t, line 3, column amount:
 * "x"`), by the column's name; the core reads Hyper's form from the detail (`line:3 column:2`,
 * the column's position in the COPY). Rewrites the one into the other, so a PostgreSQL error
 * names the line and column as a Hyper one does (and the CSV ingester can widen that column).
 */
export function translateError(error: unknown, statement?: string): unknown {
  if (typeof error !== 'object' || error === null || TRANSLATED in error) return error;
  const e = error as PgErrorFields;
  // A unix socket that is not there (yet) is a server that is away, as ECONNREFUSED is over TCP.
  if (e.syscall === 'connect' && e.code === 'ENOENT') {
    return Object.assign(new Error(`${String(e.message)} (is the PostgreSQL server running?)`, { cause: error }), {
      code: 'ECONNREFUSED',
      [TRANSLATED]: true,
    });
  }
  if (typeof e.where !== 'string' || typeof e.code !== 'string') return error;
  const line = /^COPY .*?, line (\d+)/.exec(e.where);
  if (!line) return error;
  const columns = statement ? copyColumns(statement) : undefined;
  const named =
    typeof e.column_name === 'string'
      ? e.column_name
      : columns?.find((c) => e.where === `${line[0]}, column ${c}` || (e.where as string).startsWith(`${line[0]}, column ${c}: `));
  const index = named !== undefined && columns ? columns.indexOf(named) : -1;
  const position = `line:${line[1]}${index >= 0 ? ` column:${index + 1}` : ''}`;
  const detail = typeof e.detail === 'string' && e.detail !== '' ? `${position}; ${e.detail}` : position;
  return Object.assign(Object.create(Object.getPrototypeOf(error) as object) as object, error, {
    detail,
    message: e.message,
    stack: (error as Error).stack,
    cause: error,
    [TRANSLATED]: true,
  });
}

async function translated<T>(run: () => Promise<T>, statement?: string): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw translateError(error, statement);
  }
}

/**
 * A connection whose errors name line and column as Hyper's do, and whose CSV COPYs cannot end
 * early: PostgreSQL up to 17 stops at a `\.` line and drops the rest, so such a line is sent
 * quoted (see `./csv-end-marker.ts`).
 */
function translatingConnection(conn: DbConnection): DbConnection {
  return {
    query: (sql, params) => translated(() => conn.query(sql, params), sql),
    execute: (sql, params) => translated(() => conn.execute(sql, params), sql),
    copyFrom: (sql, source) => translated(() => conn.copyFrom(sql, guardCopySource(sql, source)), sql),
    ...(conn.copyTo ? { copyTo: conn.copyTo.bind(conn) } : {}),
    describeTable: (table) => translated(() => conn.describeTable(table)),
  };
}

// ---------------------------------------------------------------------------------------------

export interface PostgresAdapter extends DbAdapter {
  /** `host:port/database` (or the socket path), never the password. */
  readonly target: string;
}

/**
 * Creates the PostgreSQL adapter. Nothing connects until the first pool is opened.
 *
 * @example
 * const db = createPostgresAdapter({ url: 'postgres://ingest:secret@db:5432/analytics' });
 * await startWatching('./inbox', 'events', { db });
 */
export function createPostgresAdapter(options: PostgresAdapterOptions = {}): PostgresAdapter {
  const given = options.url ?? process.env.DATABASE_URL;
  if (!given) throw new Error(POSTGRES_URL_MISSING_MESSAGE);
  const { url, ...address } = resolveUrl(given);
  const logger = options.logger ?? silentLogger;
  const pools = new Set<DbPool>();
  let closed = false;

  // One connection per postgres.js instance: `poolOf` hands out `maxConnections` of them, one
  // per transaction, and runs BEGIN/COMMIT itself.
  const connectOptions = (adopt?: (socket: net.Socket) => net.Socket, owner?: string) =>
    ({
      max: 1,
      // Whose session it is: the reaper ends those of a process that lost its lease (sessions.ts).
      connection: { application_name: sessionName(owner) },
      // Array types are fetched with one extra query per connection; nothing here reads or sends
      // arrays (the ledger inlines its claim ids), so that round trip would buy nothing.
      fetch_types: false,
      ...(options.datesAsText === true ? { types: DATES_AS_TEXT } : {}),
      // Unnamed statements: a per-file transaction runs a handful of statements, and named ones
      // break behind a transaction-mode pooler (PgBouncer) and on tables dropped and re-created.
      prepare: false,
      idle_timeout: 0,
      connect_timeout: 30,
      onnotice: (notice: postgres.Notice) => logger.debug('postgres notice', { message: notice.message, code: notice.code }),
      socket: socketFactory(address, adopt),
      ...(address.path ? { host: address.host![0], port: address.port![0], path: address.path } : {}),
    }) as const;

  // Parsed once for describe(); this instance never connects.
  const parsed: ParsedOptions = { ...(postgres(url, connectOptions()).options as unknown as ParsedOptions), ...address };
  const target = parsed.path
    ? `${parsed.path.replace(/\/\.s\.PGSQL\.(\d+)$/, ':$1')}/${parsed.database}`
    : `${parsed.host.map((h, i) => `${h.includes(':') ? `[${h}]` : h}:${parsed.port[i] ?? parsed.port[0]}`).join(',')}/${parsed.database}`;

  const capabilities: DbCapabilities = {
    readsLocalFiles: false,
    arrowStream: false,
    parquet: false,
    durableCommit: true,
    rowsInLoadOrder: true,
  };

  return {
    name: 'postgres',
    capabilities,
    target,
    // PostgreSQL has every standard type; JSON stays TEXT (as on Hyper): JSONB would reorder keys,
    // drop duplicates and refuse \u0000 that producers send. A JSONB column you create is filled.
    sqlType: standardSqlType,
    describe: () => `postgres ${target}`,
    limitLockWait,
    endRowLockHolders,
    endSessionsOf: async (owner) => {
      const sql = postgres(url, connectOptions());
      try {
        return await endSessionsNamed(sql, owner);
      } finally {
        await sql.end({ timeout: 1 }).catch(() => {});
      }
    },
    async openPool({ maxConnections, owner }) {
      if (closed) throw new Error('the PostgreSQL adapter was closed');
      // `onclose` tells the pool that an instance's connection went away (see `poolOf`).
      const inner = poolOf(({ onclose, adopt }): Sql => postgres(url, { ...connectOptions(adopt, owner), onclose }), maxConnections);
      const pool: DbPool = {
        transaction: (fn, options) => translated(() => inner.transaction((conn) => fn(translatingConnection(conn)), options)),
        begin: () => {
          const begun = inner.begin();
          return (
            begun && {
              transaction: (fn, options) => translated(() => begun.transaction((conn) => fn(translatingConnection(conn)), options)),
              release: () => begun.release(),
            }
          );
        },
        query: (sql, params) => translated(() => inner.query(sql, params), sql),
        close: async () => {
          pools.delete(pool);
          await inner.close();
        },
      };
      pools.add(pool);
      return pool;
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...pools].map((p) => p.close()));
    },
  };
}
