/**
 * Where `hyperwatch export` reads the table from: the hyperd given (`endpoint`); else, while a
 * hyperwatch process holds the `.hyper` file (its hyperd locks it), that process's hyperd, as
 * `hyperwatch query` does; else a hyperd of our own, running as the role the file belongs to.
 */
import process from 'node:process';
import { createHyperAdapter, fileRole, type HyperAdapter, readHolder, TABLEAU_ROLE } from '../../adapters/db/hyper/index.ts';
import { quoteIdent } from '../columns/sql.ts';
import type { DbPool, Logger } from '../types.ts';

export interface ExportSource {
  readonly db: HyperAdapter;
  /** How the table is read, for the log and the result. */
  readonly via: string;
  /** Lets go of the database (after a clean read: detached at once, so the holder's next checkpoint is not held up). */
  close(pool: DbPool | undefined): Promise<void>;
}

export function exportSource(database: string, endpoint: string | undefined, logger: Logger): ExportSource {
  // Never create the database: a mistyped path is an error, not an empty extract.
  if (endpoint !== undefined) {
    const db = createHyperAdapter({ database, endpoint, create: false, logger });
    return { db, via: `the hyperd at ${endpoint}`, close: detachThenClose(db, database) };
  }
  const holder = readHolder(database);
  if (holder && holder.pid !== process.pid) {
    const db = createHyperAdapter({ database, endpoint: `${holder.user}@${holder.endpoint}`, create: false, logger });
    return { db, via: `the hyperd of hyperwatch process ${holder.pid} (${holder.endpoint})`, close: detachThenClose(db, database) };
  }
  // The role given explicitly: the adapter would otherwise warn that the file needs an export.
  const role = fileRole(database) ?? TABLEAU_ROLE;
  const db = createHyperAdapter({ database, user: role, announce: false, create: false, logger });
  return { db, via: `an embedded hyperd as ${role}`, close: async () => db.close() };
}

/** A session that still has the database attached defers the holder's checkpoint write. */
function detachThenClose(db: HyperAdapter, database: string): (pool: DbPool | undefined) => Promise<void> {
  return async (pool) => {
    await pool?.query(`DETACH DATABASE ${quoteIdent(database)}`).catch(() => {});
    await db.close();
  };
}
