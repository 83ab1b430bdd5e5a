/**
 * `ledgerRetention`: the ledger rows of this directory older than that are removed, at start
 * and once a day, so that the ledger does not grow for ever inside the extract.
 *
 * Recovery and takeovers ask the ledger about staged claims only (recover.ts: "was this claim
 * committed?"), so a row must stay while its claim is staged anywhere under this directory's
 * `.hyperwatch/staging/` (any process's folder, on any host that mounts it here), and while the
 * process that committed it still has a lease row (alive, or dead and not yet taken over: its
 * claims may be on their way from one folder to another). Rows of other directories are left
 * to their own watchers, which see their staging. A row removed is also a checksum that
 * `skipDuplicateContent` no longer finds.
 */
import { pruneLedger } from '../store/ledger.ts';
import { parseStagedName } from '../protocol/names.ts';
import { stagedNamesUnder } from './staged-listing.ts';
import type { Watch } from './watch.ts';

/** How often the rows past their retention are looked for, after the first time at start. */
export const RETENTION_EVERY_MS = 24 * 3_600_000;

/**
 * The claim ids staged under `root` (any process's folder); undefined when staging kept changing
 * while it was listed (see staged-listing.ts).
 */
export async function stagedClaims(root: string): Promise<Set<string> | undefined> {
  const names = await stagedNamesUnder(root);
  if (!names) return undefined;
  const claims = new Set<string>();
  for (const name of names) {
    const parsed = parseStagedName(name);
    if (parsed) claims.add(parsed.claimId);
  }
  return claims;
}

/** Removes this directory's ledger rows past `ledgerRetention` (see above); how many went. */
export async function pruneExpiredLedger(w: Watch): Promise<number> {
  const { env } = w;
  const olderThanMs = env.options.ledgerRetentionMs;
  const pool = w.pool.ifOpen;
  if (olderThanMs === undefined || !pool || w.life.stopping || w.lease.fenced) return 0;
  const keep = await stagedClaims(env.stagingRoot);
  if (!keep) {
    env.log.debug('staging kept changing while it was listed; ledger rows past their retention are removed next time');
    return 0;
  }
  const removed = await pruneLedger(pool, { directory: env.dir, olderThanMs, keepClaims: [...keep] });
  if (removed > 0)
    env.log.info('removed ledger rows past their retention', { rows: removed, ledgerRetentionMs: olderThanMs, dir: env.dir });
  return removed;
}

/**
 * Runs `pruneExpiredLedger` now and every `everyMs`, as a task of the watcher (stop and
 * checkpoints wait for it). Undefined without `ledgerRetention`.
 */
export function startLedgerRetention(w: Watch, everyMs = RETENTION_EVERY_MS): ReturnType<typeof setInterval> | undefined {
  if (w.env.options.ledgerRetentionMs === undefined) return undefined;
  const run = () => {
    const { life } = w;
    if (life.stopping || w.lease.fenced) return;
    const task: Promise<void> = pruneExpiredLedger(w)
      .then(() => undefined)
      .catch((error: unknown) =>
        w.env.log.warn('could not remove ledger rows past their retention; trying again at the next round (a day, or the next start)', {
          error: String(error),
        }),
      )
      .finally(() => {
        life.remove(task);
        life.nudge();
      });
    life.add(task);
  };
  run();
  return setInterval(run, everyMs);
}
