/**
 * Retries: after a failed attempt, whether to try again (at once, after a backoff) or give up.
 * The database being away is waited for, however long; a file whose every attempt breaks the
 * connection while the database answers everything else is a poison file, and fails.
 */
import { ingestError } from '../errors.ts';
import { committedClaims } from '../store/ledger.ts';
import type { IngestError } from '../types.ts';
import type { Attempted } from './attempt.ts';
import { epochOf } from './env.ts';
import { stillOurs } from './lease.ts';
import type { Watch } from './watch.ts';

/** How many times in a row a plugin may ask for a fresh transaction (e.g. widening types). */
export const MAX_PLUGIN_RETRIES = 8;

/**
 * Attempts of one file that lose their connection while the database answers a probe right
 * after: after this many, the file fails as POISON_FILE instead of being retried for ever.
 */
export const POISON_FILE_ATTEMPTS = 3;

/** A group that loses its connection this way is split at once: its parts find the culprit. */
export const POISON_GROUP_ATTEMPTS = 1;

/** How a file (or group) left the retries: committed, failed for good, or left claimed (stopping). */
export type Retried<R> =
  | { readonly state: 'committed'; readonly rows: R; readonly epoch: number; readonly rejected?: number }
  | { readonly state: 'failed'; readonly error: IngestError; readonly index?: number }
  /** The watcher is stopping: it stays claimed and the next start finishes it. */
  | { readonly state: 'claimed' };

export interface RetryPolicy<R> {
  /** The ledger's claim id: before a retry, did the last attempt commit after all? */
  readonly claimId: string;
  /** The rows to report when it did (the ledger does not keep each file's rows of a group). */
  readonly rowsIfCommittedEarlier: R;
  /** Fresh transactions a plugin may ask for (`error.retry`) in a row. */
  readonly pluginRetries: number;
  /** See `POISON_FILE_ATTEMPTS`. */
  readonly poisonAttempts: number;
  /** Names the file(s) in logs and in the poison report. */
  readonly fields: Record<string, unknown>;
  readonly label: string;
}

/**
 * Runs `attempt` until it commits, fails for good, or the watcher stops. Before a retry the
 * ledger says whether the last attempt committed after all (its connection may have broken
 * after the COMMIT went out). A failure that asked for a fresh transaction (`error.retry`) or
 * that used the cached table description (once) is tried again at once; a transient one after
 * a backoff.
 */
export async function withRetries<R>(w: Watch, policy: RetryPolicy<R>, attempt: (n: number) => Promise<Attempted<R>>): Promise<Retried<R>> {
  let delay = w.env.options.retryInitialMs;
  const tally: RetryTally = { retried: 0, freshRetried: false };
  let poisoned = 0;
  for (let n = 1; ; n++) {
    if (n > 1) {
      // The epoch is read first: if the server restarts after answering, the answer is re-checked.
      const epoch = epochOf(w.env);
      if ((await alreadyCommitted(w, policy.claimId)) === true) return { state: 'committed', rows: policy.rowsIfCommittedEarlier, epoch };
    }
    const epochBefore = epochOf(w.env);
    const result = await attempt(n);
    if (result.state === 'committed') return result;
    // Taken over by another process: the files are its now; leave them where they are.
    if (w.lease.fenced) return { state: 'claimed' };
    const { error } = result;
    switch (afterFailure(result, tally, policy.pluginRetries)) {
      case 'plugin':
        tally.retried++;
        continue;
      case 'fresh':
        tally.freshRetried = true;
        continue;
      case 'final':
        return (await takenOver(w)) ? { state: 'claimed' } : result;
      case 'transient':
        break;
    }
    if (lostConnection(error)) {
      const probe = await probeAfterLoss(w, policy.claimId, epochBefore);
      if (probe === 'committed') return { state: 'committed', rows: policy.rowsIfCommittedEarlier, epoch: epochBefore };
      if (probe === 'answers' && ++poisoned >= policy.poisonAttempts) {
        return { state: 'failed', error: poisonFile(policy.label, poisoned, error) };
      }
    }
    const next = await backoff(w, delay, { ...policy.fields, attempt: n }, error.message);
    if (next === undefined) return { state: 'claimed' };
    delay = next;
  }
}

/** What a file's (or group's) retries have used so far. */
export interface RetryTally {
  /** Fresh transactions the plugin asked for, in a row. */
  retried: number;
  /** Tried again once with a fresh table description. */
  freshRetried: boolean;
}

/**
 * After a failed attempt, before anything is asked of the database: `plugin`, again at once (the
 * plugin asked for a fresh transaction, `error.retry`, and has retries left); `fresh`, again at
 * once, once, with a fresh table description (it failed using the cached one: the table may have
 * changed since); `final`, the file fails (unless taken over meanwhile); `transient`, the
 * database was away: wait and try again.
 */
export function afterFailure(
  failed: { readonly error: IngestError; readonly usedCache: boolean },
  tally: Readonly<RetryTally>,
  pluginRetries: number,
): 'plugin' | 'fresh' | 'final' | 'transient' {
  const { error } = failed;
  if (error.retry && tally.retried < pluginRetries) return 'plugin';
  if (failed.usedCache && error.kind !== 'transient' && !tally.freshRetried) return 'fresh';
  return error.kind === 'transient' ? 'transient' : 'final';
}

/**
 * Whether another process took this one over while the attempt ran: a process frozen past its
 * lease (SIGSTOP, a paused VM) finds on waking that its claims moved into the taker's folder, and
 * a server reading a staged file by its path then fails to find it. Such a failure is not the
 * file's, and reporting it in failed/ would contradict the taker's commit: the lease is renewed
 * first (fencing this process when it is gone). When the database cannot answer, the failure stands.
 */
async function takenOver(w: Watch): Promise<boolean> {
  return !(await stillOurs(w).catch(() => true));
}

/** The connection broke under the attempt (as opposed to a lock conflict or a server shutdown). */
export function lostConnection(error: IngestError): boolean {
  return (
    ['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'ECONNRESET', 'EPIPE'].includes(error.code) || (error.sqlState?.startsWith('08') ?? false)
  );
}

/**
 * Right after a lost connection: does the database answer a query (on another connection; the
 * broken one was replaced), from the same server run? `committed`: the attempt had committed.
 * `away`: no answer, or the server restarted, so the loss is the database's, not the file's.
 */
async function probeAfterLoss(w: Watch, claimId: string, epochBefore: number): Promise<'committed' | 'answers' | 'away'> {
  const answer = await alreadyCommitted(w, claimId);
  if (answer === undefined || epochOf(w.env) !== epochBefore) return 'away';
  return answer ? 'committed' : 'answers';
}

function poisonFile(label: string, attempts: number, last: IngestError): IngestError {
  return ingestError(
    'data',
    'POISON_FILE',
    `${label}: each of ${attempts} attempts to ingest it ended with the database connection closing ` +
      `(${last.code}: ${last.message}), while the database answered other queries: something in this file breaks the ` +
      `connection`,
    'The file is likely malformed in a way its reader does not catch, or it meets a database bug: check it with another ' +
      'tool, write it again, then replay it. If the database was in fact restarting each time, replay the file as it is.',
    { file: label },
  );
}

/**
 * After a transient failure: counts and logs the retry, waits `delay` (cut short by stop) and
 * returns the next, doubled up to `retryMaxMs`; `undefined` once the watcher is stopping.
 */
export async function backoff(
  w: Pick<Watch, 'env' | 'life'>,
  delay: number,
  fields: Record<string, unknown>,
  error: string,
): Promise<number | undefined> {
  const { env, life } = w;
  if (life.stopping) return undefined;
  env.stats.retries++;
  // While the database says what it waits for (said once, e.g. a file another program holds), retries are debug lines.
  env.log[env.db.waitingFor?.() ? 'debug' : 'warn']('database unavailable; retrying', { ...fields, delayMs: delay, error });
  await life.sleep(delay);
  if (life.stopping) return undefined;
  return Math.min(delay * 2, env.options.retryMaxMs);
}

/** Whether the ledger lists `claimId`; `undefined` when the database does not answer. */
async function alreadyCommitted(w: Watch, claimId: string): Promise<boolean | undefined> {
  try {
    return (await committedClaims(w.pool.get(), [claimId])).has(claimId);
  } catch {
    return undefined;
  }
}
