/** The `.hyper` file opened as it is, or created when it is missing: once per adapter. */
import postgres from 'postgres';
import { quoteIdent } from '../../../src/columns/sql.ts';
import type { Sql } from '../postgres-js/pool.ts';
import { type BusyRetry, DATABASE_MISSING, explainAccessDenied, isLockedElsewhere, whileBusy } from './busy.ts';
import { DATABASE_VERSION_QUERY, versionOfRows } from './database-version.ts';
import { DatabaseHeldError } from './databases.ts';
import type { ConnectOptionsFor } from './server.ts';

export interface DatabaseToEnsure {
  /** Absolute path of the `.hyper` file. */
  readonly database: string;
  readonly user: string;
  /** `CREATE DATABASE ... WITH VERSION` for a new file; an existing one keeps its version. */
  readonly version: number | undefined;
  /** An embedded hyperd: a file locked by another process is held by another program. */
  readonly embedded: boolean;
  readonly connect: ConnectOptionsFor;
  readonly busy: BusyRetry;
  /** false: a missing database is an error (`NO_SUCH_DATABASE`) instead of being created. */
  readonly create?: boolean;
}

/** What was found: undefined when the database does not exist; else its version, when hyperd says. */
type Opened = { readonly version: number | undefined } | undefined;

const HELD_BY = 'another program (its own hyperd has the file open)';

/**
 * Whether the database can be opened as it is. Asked before any CREATE DATABASE: on a hyperd
 * shared with a client that attaches the database all the time, `CREATE DATABASE IF NOT EXISTS`
 * on an existing database now and then hung hyperd for good (its watchdog aborted it minutes
 * later); opening it as every client does never did.
 */
async function openDatabase(target: DatabaseToEnsure): Promise<Opened> {
  const probe: Sql = postgres(target.connect(target.database, 1));
  try {
    await whileBusy('opening the database', () => probe.unsafe('SELECT 1'), target.busy);
    // For the start-up log and status; a hyperd without pg_catalog.hyper_database does not say.
    const version = await probe.unsafe(DATABASE_VERSION_QUERY).then(versionOfRows, () => undefined);
    return { version };
  } catch (error) {
    if ((error as { code?: unknown }).code === DATABASE_MISSING) return undefined;
    if (target.embedded && isLockedElsewhere(error)) throw new DatabaseHeldError(target.database, HELD_BY);
    throw explainAccessDenied(error, target.database, target.user);
  } finally {
    await probe.end({ timeout: 5 });
  }
}

/** `CREATE DATABASE` needs a connection without a database. */
async function createDatabase(target: DatabaseToEnsure): Promise<void> {
  const admin: Sql = postgres(target.connect('', 1));
  try {
    // Version 0 too: it is the one every Tableau release opens, not "none given".
    const version = target.version !== undefined ? ` WITH VERSION ${Math.floor(target.version)}` : '';
    const create = `CREATE DATABASE IF NOT EXISTS ${quoteIdent(target.database)}${version}`;
    await whileBusy('creating the database', () => admin.unsafe(create), target.busy).catch((error: unknown) => {
      // Another program (Tableau, the Hyper API, a hyperd of its own) has the file open.
      if (target.embedded && String((error as Error).message).includes('locked by another process'))
        throw new DatabaseHeldError(target.database, HELD_BY);
      throw error;
    });
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/**
 * A function that makes sure the database exists, and resolves with its file format version
 * (undefined when hyperd does not say): done once, tried again after a failure.
 */
export function databaseEnsurer(target: DatabaseToEnsure): () => Promise<number | undefined> {
  let created: Promise<number | undefined> | undefined;
  return () => {
    created ??= (async () => {
      const found = await openDatabase(target);
      if (found) return found.version;
      if (target.create === false)
        throw Object.assign(new Error(`${target.database} does not exist (hyperd: no such database); check the path`), {
          code: 'NO_SUCH_DATABASE',
        });
      await createDatabase(target);
      return (await openDatabase(target))?.version;
    })().catch((error: unknown) => {
      created = undefined;
      throw error;
    });
    return created;
  };
}
