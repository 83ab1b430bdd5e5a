/** The `.hyper` file opened as it is, or created when it is missing: once per adapter. */
import postgres from 'postgres';
import { quoteIdent } from '../../../src/sql.ts';
import type { Sql } from '../postgres-js/pool.ts';
import { type BusyRetry, DATABASE_MISSING, explainAccessDenied, isLockedElsewhere, whileBusy } from './busy.ts';
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
}

const HELD_BY = 'another program (its own hyperd has the file open)';

/**
 * Whether the database can be opened as it is. Asked before any CREATE DATABASE: on a hyperd
 * shared with a client that attaches the database all the time, `CREATE DATABASE IF NOT EXISTS`
 * on an existing database now and then hung hyperd for good (its watchdog aborted it minutes
 * later); opening it as every client does never did.
 */
async function databaseExists(target: DatabaseToEnsure): Promise<boolean> {
  const probe: Sql = postgres(target.connect(target.database, 1));
  try {
    await whileBusy('opening the database', () => probe.unsafe('SELECT 1'), target.busy);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === DATABASE_MISSING) return false;
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
    const version = target.version ? ` WITH VERSION ${Math.floor(target.version)}` : '';
    const create = `CREATE DATABASE IF NOT EXISTS ${quoteIdent(target.database)}${version}`;
    await whileBusy('creating the database', () => admin.unsafe(create), target.busy).catch((error: unknown) => {
      // Another program (Tableau, the Hyper API, a hyperd of its own) has the file open.
      if (target.embedded && String((error as Error).message).includes('locked by another process')) throw new DatabaseHeldError(target.database, HELD_BY);
      throw error;
    });
  } finally {
    await admin.end({ timeout: 5 });
  }
}

/** A function that makes sure the database exists: done once, tried again after a failure. */
export function databaseEnsurer(target: DatabaseToEnsure): () => Promise<void> {
  let created: Promise<void> | undefined;
  return () => {
    created ??= (async () => {
      if (!(await databaseExists(target))) await createDatabase(target);
    })().catch((error: unknown) => {
      created = undefined;
      throw error;
    });
    return created;
  };
}
