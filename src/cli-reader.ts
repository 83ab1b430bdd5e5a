/**
 * The database of `query` and `history`. A `.hyper` file that a running hyperwatch holds is locked
 * by that process's hyperd, so these commands go through it (it publishes where it listens next
 * to the file); otherwise they start their own hyperd, as a watcher would.
 */
import { resolve } from 'node:path';
import process from 'node:process';
import { createHyperAdapter, DEFAULT_DATABASE, type Holder, readHolder } from '../adapters/db/hyper/index.ts';
import { dbFromFlags, UsageError } from './cli-util.ts';
import { checkDbChoice } from './compose.ts';
import { quoteIdent } from './sql.ts';
import type { DbAdapter, DbPool } from './types.ts';

export interface ReaderDb {
  readonly db: DbAdapter;
  /** The running hyperwatch whose hyperd serves this reader, if any. */
  readonly via?: Holder;
  /** Lets go of the database at once (so the holder's next checkpoint is not held up), then closes. */
  close(pool: DbPool | undefined): Promise<void>;
}

export function readerDbFromFlags(values: { adapter?: string; url?: string; database?: string; endpoint?: string }): ReaderDb {
  if ((values.adapter ?? 'hyper') !== 'hyper' || values.endpoint !== undefined) {
    const db = dbFromFlags(values);
    return { db, close: () => db.close() };
  }
  const problems = checkDbChoice(values, process.env, true);
  if (problems.length > 0) throw new UsageError(problems.map((p) => `--${p.field} ${p.problem}. ${p.fix}`).join(' '));
  const database = resolve(values.database ?? DEFAULT_DATABASE);
  const via = readHolder(database);
  if (!via || via.pid === process.pid) {
    const db = createHyperAdapter({ database, announce: false });
    return { db, close: () => db.close() };
  }
  const db = createHyperAdapter({ database, endpoint: `${via.user}@${via.endpoint}` });
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
