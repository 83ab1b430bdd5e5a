/**
 * A watcher's start, up to its first sweep: folders, pool, own tables, lease, a first checkpoint,
 * and the files dead processes (an earlier run of this one too) left claimed.
 */
import { refusedColumnType } from '../columns/column-types.ts';
import { ensureDir } from '../protocol/files.ts';
import { WatchConfigError } from '../options/error.ts';
import { prepareOwnTables } from '../store/own-layout.ts';
import { startLease } from './lease.ts';
import { dropStagesOfCommitted } from './modes.ts';
import { checkSameMount } from './mount.ts';
import { takeOverDead } from './takeover.ts';
import type { Watch } from './watch.ts';

/** Runs the steps up to the sweep; false when a stop came meanwhile (the start then ends). */
export async function startUp(w: Watch): Promise<boolean> {
  const { env, life } = w;
  const { options, db } = env;
  if (life.stopping) return false;
  await ensureDir(env.stagingRoot, 0o700);
  await ensureDir(env.failedDir);
  await checkSameMount(env);
  const pool = await w.pool.open(db, options.maxConcurrent, env.me.owner);
  await w.reaper.start(w);
  // hyperwatch's schema and tables, with an earlier version's moved in (own-layout.ts).
  await prepareOwnTables(pool, { log: env.log });
  // A column type the database does not have would fail every file that creates the column.
  const refused = await refusedColumnType(pool, options.columnTypes);
  if (refused)
    throw new WatchConfigError(
      `columnTypes gives column "${refused.column}" the type ${JSON.stringify(refused.type)}, ` +
        `which the database refuses (${refused.reason}); ` +
        'give a type it has, e.g. TEXT, NUMERIC(12,2), DATE',
    );
  // The lease row before the folder: a folder without a lease row is a dead owner's.
  await startLease(w);
  await ensureDir(env.staging, 0o700);
  // The ledger table must survive a server crash before any file relies on it. A checkpoint that
  // could not write because a reader holds the database is no reason not to start: until one
  // writes, committed files stay staged, and a crash loses the ledger table with their rows, so
  // recovery ingests them again.
  if (!db.capabilities.durableCommit) {
    await db.checkpoint?.().catch((error: unknown) => {
      if ((error as { code?: unknown } | null)?.code !== 'DATABASE_NOT_WRITTEN') throw error;
      env.log.warn('start-up checkpoint did not reach the file; committed files stay staged until one does', { error: String(error) });
    });
  }
  await w.pool.warm(options.maxConcurrent);
  await w.known.describeAtStart(pool);
  if (life.stopping) return false;
  // What dead processes (an earlier run of this one too) left claimed, before the sweep.
  await takeOverDead(w);
  // Staging tables a committed file's attempt could not drop (upsert, replace-keys on Hyper).
  await dropStagesOfCommitted(w);
  return !life.stopping;
}
