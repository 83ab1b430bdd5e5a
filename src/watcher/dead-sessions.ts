/**
 * What dead processes left running in the database. On a shared hyperd, a COPY FROM STDIN cut
 * off by its client's death stays active for good and blocks its table: every COPY and COMMIT
 * into it, and DDL (a starting process's CREATE TABLE IF NOT EXISTS) wait behind it, including
 * the COMMIT of another dead process that a takeover's fence must wait for. So every process
 * cancels the sessions of owners that look dead as soon as it sees them: at its start before
 * it touches any table, at each heartbeat, and before each takeover. A cancelled statement never
 * commits anything, so this needs no lease; a process whose lease merely expired (frozen) gets
 * a cancelled statement, retried, and then fails its fence as it would anyway.
 */
import process from 'node:process';
import { type LeaseRow, readLeases } from '../lease.ts';
import { poolOf, type WatchContext } from './context.ts';

/** Whether `pid` runs on this host (EPERM: it runs, as another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
}

/** Gone, expired or taken over: none of its transactions may commit from here on. */
export function looksDead(ctx: WatchContext, row: LeaseRow | undefined): boolean {
  if (!row || row.expired || row.takenBy !== null) return true;
  return row.host === ctx.lease.me.host && row.pid !== ctx.lease.me.pid && !pidAlive(row.pid);
}

/** Ends the sessions `owner` left (when the database can and needs to), logging what it did. */
async function endSessions(ctx: WatchContext, owner: string): Promise<void> {
  const ended = await ctx.db.endSessionsOf?.(owner).catch((error: unknown) => {
    ctx.log.warn('could not end the database sessions of a dead process', { owner, error: String(error) });
    return 0;
  });
  if (ended) ctx.log.info('ended the database sessions a dead process left open', { owner, sessions: ended });
}

/** Ends the sessions of every owner in `rows` that looks dead, and of `ownerless` (folders without a lease row). */
export async function endDeadSessions(ctx: WatchContext, rows: Iterable<LeaseRow>, ownerless: readonly string[] = []): Promise<void> {
  if (!ctx.db.endSessionsOf) return;
  const owners = new Set(ownerless);
  for (const row of rows) if (row.owner !== ctx.lease.me.owner && looksDead(ctx, row)) owners.add(row.owner);
  for (const owner of owners) await endSessions(ctx, owner);
}

/** At start, before the first CREATE TABLE IF NOT EXISTS (which a dead COPY would block). */
export async function endDeadSessionsAtStart(ctx: WatchContext): Promise<void> {
  if (!ctx.db.endSessionsOf) return;
  // No lease table yet: nobody to be dead.
  const rows = await readLeases(poolOf(ctx)).catch(() => []);
  await endDeadSessions(ctx, rows);
}
