/**
 * A watcher's start, up to its first sweep: folders, pool, ledger, lease, a first checkpoint,
 * and the files dead processes (an earlier run of this one too) left claimed.
 */
import { ensureDir } from '../files.ts';
import { ensureLedger } from '../ledger.ts';
import { describeAtStart } from './attempt.ts';
import { warm, type WatchContext } from './context.ts';
import { endDeadSessionsAtStart } from './dead-sessions.ts';
import { startLease } from './lease.ts';
import { checkSameMount } from './mount.ts';
import { recover } from './recover.ts';

/** Runs the steps up to the sweep; false when a stop came meanwhile (the start then ends). */
export async function startUp(ctx: WatchContext): Promise<boolean> {
  const { options, db, life } = ctx;
  if (life.stopping) return false;
  await ensureDir(ctx.lease.stagingRoot, 0o700);
  await ensureDir(ctx.failedDir);
  await checkSameMount(ctx);
  life.pool = await db.openPool({ maxConnections: options.maxConcurrent, owner: ctx.lease.me.owner });
  await endDeadSessionsAtStart(ctx);
  await ensureLedger(life.pool);
  // The lease row before the folder: a folder without a lease row is a dead owner's.
  await startLease(ctx);
  await ensureDir(ctx.staging, 0o700);
  // The ledger table must survive a server crash before any file relies on it. A checkpoint that
  // could not write because a reader holds the database is no reason not to start: until one
  // writes, committed files stay staged, and a crash loses the ledger table with their rows, so
  // recovery ingests them again.
  if (!db.capabilities.durableCommit) {
    await db.checkpoint?.().catch((error: unknown) => {
      if ((error as { code?: unknown } | null)?.code !== 'DATABASE_NOT_WRITTEN') throw error;
      ctx.log.warn('start-up checkpoint did not reach the file; committed files stay staged until one does', { error: String(error) });
    });
  }
  await warm(ctx);
  await describeAtStart(ctx);
  if (life.stopping) return false;
  await recover(ctx);
  return !life.stopping;
}
