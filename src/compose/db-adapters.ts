/**
 * The database adapters built from a checked `DbChoice` (db-choice.ts): a watcher's (owned by it
 * unless the caller gave one), a reader's (`query`, `history`: through the hyperd of a running
 * hyperwatch that holds the `.hyper` file), and where a reader connects while a watcher runs.
 * Part of the composition root (src/compose.ts).
 */
import { join, resolve } from 'node:path';
import process from 'node:process';
import { createHyperAdapter, DEFAULT_DATABASE, type EndpointReadsFiles, type Holder, readHolder } from '../../adapters/db/hyper/index.ts';
import { createPostgresAdapter } from '../../adapters/db/postgres/index.ts';
import { SESSIONS_DIR, STAGING_DIR } from '../constants.ts';
import { quoteIdent } from '../columns/sql.ts';
import type { DbAdapter, DbPool, Logger } from '../types.ts';
import type { DbChoice } from './db-choice.ts';

/** Builds the adapter for a choice that `checkDbChoice` accepted. The caller closes it. */
export function createDbAdapter(choice: DbChoice, logger?: Logger): DbAdapter {
  if (choice.adapter === 'postgres')
    return createPostgresAdapter({ ...(choice.url !== undefined ? { url: choice.url } : {}), ...(logger ? { logger } : {}) });
  return createHyperAdapter({
    database: choice.database,
    endpoint: choice.endpoint,
    ...(choice.releaseIdleMs !== undefined ? { releaseIdleMs: choice.releaseIdleMs } : {}),
    ...(choice.databaseVersion !== undefined ? { databaseVersion: choice.databaseVersion } : {}),
    ...(choice.endpointReadsFiles !== undefined ? { endpointReadsFiles: choice.endpointReadsFiles as EndpointReadsFiles } : {}),
    ...(choice.dir !== undefined
      ? { probeDir: join(resolve(choice.dir), STAGING_DIR), sessionsDir: join(resolve(choice.dir), SESSIONS_DIR) }
      : {}),
    ...(logger ? { logger } : {}),
  });
}

/**
 * Where a reader (psql, a BI tool, `hyperwatch query`) connects to read what a watcher of `choice`
 * writes, while it runs: the hyperd the watcher uses. Undefined for PostgreSQL (its own server) and
 * while an embedded hyperd has not published its endpoint.
 */
export function readersEndpoint(
  choice: DbChoice,
): { readonly endpoint: string; readonly user?: string; readonly database: string } | undefined {
  if ((choice.adapter ?? 'hyper') !== 'hyper') return undefined;
  const database = resolve(choice.database ?? DEFAULT_DATABASE);
  if (choice.endpoint !== undefined) {
    const at = choice.endpoint.lastIndexOf('@');
    return at < 0
      ? { endpoint: choice.endpoint, database }
      : { endpoint: choice.endpoint.slice(at + 1), user: choice.endpoint.slice(0, at), database };
  }
  const holder = readHolder(database);
  return holder ? { endpoint: holder.endpoint, user: holder.user, database } : undefined;
}

/**
 * The adapter a watcher uses: `options.db` when given (the caller closes it), else one built from
 * the Hyper settings `database` and `endpoint`, owned (closed) by the watcher.
 */
export function watcherDb(
  options: { readonly db?: DbAdapter; readonly database?: string; readonly endpoint?: string },
  logger: Logger,
  dir?: string,
): { db: DbAdapter; owned: boolean } {
  if (options.db) return { db: options.db, owned: false };
  return {
    db: createDbAdapter(
      { adapter: 'hyper', database: options.database, endpoint: options.endpoint, ...(dir !== undefined ? { dir } : {}) },
      logger,
    ),
    owned: true,
  };
}

/** The database of a reader (`query`, `history`): the adapter, and how to let go of it. */
export interface ReaderDb {
  readonly db: DbAdapter;
  /** The running hyperwatch whose hyperd serves this reader, if any. */
  readonly via?: Holder;
  /** Lets go of the database at once (so the holder's next checkpoint is not held up), then closes. */
  close(pool: DbPool | undefined): Promise<void>;
}

/** How a reader reads (see `readerDb`). */
export interface ReaderOptions {
  /** The process that counts as this one: its own holder entry is no reason to go elsewhere. */
  readonly ownPid?: number;
  /** Dates, times and timestamps as the text the server sends (see HyperAdapterOptions.datesAsText). */
  readonly datesAsText?: boolean;
}

/**
 * The adapter for a reader of a choice that `checkDbChoice` accepted. A `.hyper` file that a
 * running hyperwatch holds is locked by that process's hyperd, so a reader goes through it (it
 * publishes where it listens next to the file); otherwise it starts its own hyperd.
 */
export function readerDb(choice: DbChoice, reading: ReaderOptions = {}): ReaderDb {
  const ownPid = reading.ownPid ?? process.pid;
  const asText = reading.datesAsText === true ? { datesAsText: true } : {};
  if ((choice.adapter ?? 'hyper') !== 'hyper' || choice.endpoint !== undefined) {
    const db =
      choice.adapter === 'postgres'
        ? createPostgresAdapter({ ...(choice.url !== undefined ? { url: choice.url } : {}), ...asText })
        : createHyperAdapter({ database: choice.database, endpoint: choice.endpoint, ...asText });
    return { db, close: () => db.close() };
  }
  const database = resolve(choice.database ?? DEFAULT_DATABASE);
  const via = readHolder(database);
  if (!via || via.pid === ownPid) {
    const db = createHyperAdapter({ database, announce: false, ...asText });
    return { db, close: () => db.close() };
  }
  const db = createHyperAdapter({ database, endpoint: `${via.user}@${via.endpoint}`, ...asText });
  return {
    db,
    via,
    async close(pool) {
      // A session that still has the database attached defers the holder's checkpoint write.
      await pool?.query(`DETACH DATABASE ${quoteIdent(database)}`).catch(() => {});
      await db.close();
    },
  };
}
