/**
 * hyperd answers `The database cannot be accessed, as it is still in use` (SQLSTATE 55006) while
 * another session is attaching or unloading the same database: a shared hyperd beside other
 * clients, or one embedded hyperd opening and closing many databases. It passes in milliseconds,
 * so the statements that attach a database (CREATE DATABASE, ATTACH, a session's first statement)
 * wait and try again instead of failing.
 */
import { fileRole } from './file-role.ts';
import type { Logger } from '../../../src/types.ts';

export const OBJECT_IN_USE = '55006';
/** hyperd, opening a database that does not exist. */
export const DATABASE_MISSING = '58S01';

/**
 * Another session of the same hyperd is attaching or unloading the database: milliseconds. Not
 * when another process's hyperd has the file locked (same SQLSTATE): that lasts as long as it
 * wants, see `isLockedElsewhere`.
 */
export function isBusy(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (isLockedElsewhere(error)) return false;
  return e?.code === OBJECT_IN_USE || (typeof e?.message === 'string' && e.message.includes('as it is still in use'));
}

/** Another program's hyperd (Tableau, the Hyper API, a hyperd of its own) has the file open. */
export function isLockedElsewhere(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.includes('locked by another process');
}

export interface BusyRetry {
  readonly logger: Logger;
  /** Give up after this long (default 2 minutes): something holds the database for good. */
  readonly deadlineMs?: number;
}

/** Runs `fn` until it does not fail with "still in use", backing off from 20 ms to 1 s. */
export async function whileBusy<T>(what: string, fn: () => Promise<T>, options: BusyRetry): Promise<T> {
  const deadline = Date.now() + (options.deadlineMs ?? 120_000);
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (!isBusy(error) || Date.now() > deadline) throw error;
      if (attempt === 0) options.logger.debug(`${what}: the database is in use by another session; retrying`, { error: String(error) });
      const delay = Math.min(1000, 20 * 2 ** attempt);
      await new Promise((resolve) => setTimeout(resolve, delay / 2 + Math.random() * delay));
    }
  }
}

/**
 * hyperd's `access denied` when a session opens a file: the file belongs to another role. Made
 * into an error that says which role and how to connect as it.
 */
export function explainAccessDenied(error: unknown, database: string, user: string): unknown {
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message !== 'string' || !/error opening database .*access denied/.test(message)) return error;
  // Readable here when the file is on this machine (an endpoint's may not be).
  const owner = fileRole(database);
  return Object.assign(
    new Error(
      `${database} opens only for the role that created it, and it is not "${user}"${owner ? ` but "${owner}"` : ''} ` +
        `(hyperd: access denied). ` +
        `hyperwatch opens a file as the role it belongs to unless told another; connect as that role (createHyperAdapter({ ` +
        `user: '<role>' }), or --endpoint <role>@host:port). ` +
        `Files made by Tableau's Hyper API belong to tableau_internal_user, files made by earlier hyperwatch releases to hyperwatch.`,
    ),
    { code: 'DATABASE_ROLE', cause: error },
  );
}
