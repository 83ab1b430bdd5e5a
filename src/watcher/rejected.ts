/**
 * The rejected-rows file of a file ingested with `onBadRows: 'skip'` (policy in bad-rows.ts).
 *
 * It must exist in failed/ exactly when its rows' transaction committed, and once. So it is
 * written in staging, beside the claimed file (`<claimId>~<name>.rejected.csv`), and flushed to
 * disk before the COMMIT; it moves into failed/ only when the claimed file settles (its commit
 * durable), before the staged file is removed. A crash before the commit leaves it in staging,
 * where the next attempt overwrites it (or removes it, having rejected nothing); a crash after
 * the commit leaves it for recovery, which moves it as settling would. Moving is a rename (or a
 * hard link for a name another file may want), so it is never in failed/ twice.
 */
import { linkSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { type BadRowLimit, pastCount, rejectedFormat, rejectedHeader, rejectedLine, tooManyBadRows } from '../columns/bad-rows.ts';
import { IngestFailure } from '../errors.ts';
import { ensureParentOf, exists, isGone, removeIfPresent } from '../protocol/files.ts';
import type { BadRowSink, Logger, RejectedRow } from '../types.ts';

/** Suffix of the rejected-rows file after the data file's name: `orders.csv.rejected.csv`. */
export function rejectedSuffix(name: string): string {
  return `.rejected${rejectedFormat(name)}`;
}

/** `orders.csv.rejected.csv` → `orders.csv`; undefined for a name that is no rejected-rows file's. */
export function dataNameOfRejected(name: string): string | undefined {
  const match = /^(.+)\.rejected\.(?:csv|jsonl)$/.exec(name);
  return match && name === match[1]! + rejectedSuffix(match[1]!) ? match[1] : undefined;
}

/** The sink of one attempt, and what its caller does with the file once the attempt ends. */
export interface RejectedRows extends BadRowSink {
  readonly first: RejectedRow | undefined;
  /** Before the COMMIT: on disk when rows were rejected, removed (any earlier attempt's) when none were. */
  finish(): Promise<void>;
  /** The attempt failed: nothing of it may reach failed/. */
  discard(): Promise<void>;
}

/** Buffered text written at this size: the sink of a file with many bad rows stays small in memory. */
const FLUSH_CHARS = 1 << 16;

/** A sink writing to `path` (opened, truncating anything an earlier attempt left, at the first row). */
export function rejectedRows(path: string, file: string, limit: BadRowLimit): RejectedRows {
  const format = rejectedFormat(file);
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  let buffer = '';
  let rejected = 0;
  let first: RejectedRow | undefined;
  const flush = async () => {
    handle ??= await open(path, 'w');
    if (buffer !== '') await handle.write(buffer);
    buffer = '';
  };
  const close = async () => {
    const h = handle;
    handle = undefined;
    await h?.close();
  };
  return {
    get rejected() {
      return rejected;
    },
    get first() {
      return first;
    },
    async reject(row) {
      rejected++;
      first ??= row;
      if (pastCount(limit, rejected)) throw new IngestFailure(tooManyBadRows(file, rejected, undefined, limit, first));
      if (rejected === 1) buffer += rejectedHeader(format);
      buffer += rejectedLine(format, row);
      if (buffer.length >= FLUSH_CHARS) await flush();
    },
    async finish() {
      if (rejected === 0) {
        removeIfPresent(path);
        return;
      }
      await flush();
      await handle!.sync();
      await close();
    },
    async discard() {
      buffer = '';
      await close().catch(() => {});
      removeIfPresent(path);
    },
  };
}

/**
 * Moves a settled file's rejected rows from staging into failed/, as `<name>.rejected.csv`, or with
 * the claim id in the name when that is taken. Idempotent: nothing to do once it has moved.
 */
export function moveRejected(
  failedDir: string,
  settled: { readonly stagedPath: string; readonly name: string; readonly claimId: string },
): string | undefined {
  const { name, claimId } = settled;
  const suffix = rejectedSuffix(name);
  const staged = settled.stagedPath + suffix;
  if (!exists(staged)) return undefined;
  const plain = join(failedDir, name + suffix);
  ensureParentOf(failedDir, name);
  try {
    // A link never replaces a file of that name (a rename would): an earlier drop's report stays.
    linkSync(staged, plain);
    unlinkSync(staged);
    return plain;
  } catch (error) {
    if (isGone(error)) return undefined;
    const code = (error as { code?: unknown }).code;
    if (code !== 'EEXIST' && !exists(plain)) {
      // A filesystem without hard links: rename to the free name (checked just before).
      renameSync(staged, plain);
      return plain;
    }
  }
  if (sameFile(staged, plain)) {
    // Linked before a crash, not yet unlinked from staging.
    removeIfPresent(staged);
    return plain;
  }
  // The claim id is unique: nobody else moves a file to this name.
  const unique = join(failedDir, `${name}.${claimId}${suffix}`);
  renameSync(staged, unique);
  return unique;
}

function sameFile(a: string, b: string): boolean {
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.ino === y.ino && x.dev === y.dev;
  } catch {
    return false;
  }
}

/**
 * Before a settled file leaves staging: its rejected rows into failed/ (logged). A failure to move
 * them is logged and leaves them in staging, where the next start's recovery tries again.
 */
export function settleRejected(
  env: { readonly failedDir: string; readonly log: Logger },
  settled: { readonly stagedPath: string; readonly name: string; readonly claimId: string },
): boolean {
  try {
    const moved = moveRejected(env.failedDir, settled);
    if (moved)
      env.log.info('rejected rows set aside', {
        file: settled.name,
        claimId: settled.claimId,
        to: join(basename(dirname(moved)), basename(moved)),
      });
    return true;
  } catch (error) {
    env.log.error('could not move rejected rows into failed/; they stay in staging until the next start', {
      file: settled.name,
      claimId: settled.claimId,
      error: String(error),
    });
    return false;
  }
}
