/** Making every commit so far durable in the `.hyper` file. */
import postgres from 'postgres';
import { quoteIdent } from '../../../src/columns/sql.ts';
import { poolOf } from '../postgres-js/pool.ts';
import { type BusyRetry, isLockedElsewhere, whileBusy } from './busy.ts';
import type { DatabaseEntry } from './databases.ts';
import type { ConnectOptionsFor } from './server.ts';
import { fileSignature, NotWrittenError } from './written.ts';

export interface CheckpointTarget {
  readonly database: string;
  readonly shared: DatabaseEntry;
  readonly connect: ConnectOptionsFor;
  readonly busy: BusyRetry;
  /** How many times the embedded hyperd has started (0 for an endpoint). */
  readonly starts: () => number;
}

/** The statement each session runs before it closes, so that hyperd writes the file. */
export function detachStatement(database: string): string {
  return `DETACH DATABASE ${quoteIdent(database)}`;
}

/**
 * hyperd writes a database to its file when the last session detaches it, and that DETACH returns
 * once the write is done; a session that merely disconnects detaches later, on the server's own
 * time. So, holding new work back, every open session detaches the database explicitly before it
 * is closed (the last of those DETACHes is the write). With no session open, a control session
 * attaches and detaches it once more. Measured here: about 100 ms on a 3M-row database.
 */
export async function checkpointDatabase(target: CheckpointTarget): Promise<void> {
  const { database, shared, busy } = target;
  const detach = detachStatement(database);
  let detached = 0;
  await Promise.all(
    [...shared.pools].map((p) =>
      p.reset(async (sql) => {
        await whileBusy('checkpoint', () => sql.unsafe(detach), busy);
        detached++;
      }),
    ),
  );
  // A session of ours detached it: the last such DETACH wrote the file, or another session holds
  // it attached (a reader), which a control session could not change (the signature check below
  // tells). Only with none of ours open is the write the control session's ATTACH and DETACH,
  // which cost hyperd more than the rest of a checkpoint: the ATTACH reads the file in again
  // (125 ms of hyperd's CPU each in the test suite's logs).
  if (detached === 0) await detachOnControlSession(target);
  // After a restart of hyperd the watcher re-checks its commits against the ledger itself.
  const { written } = shared;
  if (written?.signature !== undefined && written.epoch === target.starts() && fileSignature(database) === written.signature) {
    throw new NotWrittenError(database);
  }
  shared.written = undefined;
}

/** Attaches and detaches the database on a session of its own: hyperd writes it at that DETACH. */
async function detachOnControlSession(target: CheckpointTarget): Promise<void> {
  const { database, busy } = target;
  // A pool of one, not a bare postgres.js instance: its statements fail as soon as hyperd dies
  // under them, and it ends at once then, instead of holding every file back meanwhile.
  const control = poolOf(({ onclose, adopt }) => postgres({ ...target.connect('', 1, adopt), onclose }), 1);
  try {
    await whileBusy('checkpoint', () => control.query(`ATTACH DATABASE ${quoteIdent(database)} AS hyperwatch_checkpoint`), busy);
    await whileBusy('checkpoint', () => control.query('DETACH DATABASE hyperwatch_checkpoint'), busy);
  } catch (error) {
    // Another program's hyperd opened the file in the instant after our last session detached
    // it: ours let go of it, which it does only once the file is written. The checkpoint is done.
    if (!isLockedElsewhere(error)) throw error;
  } finally {
    await control.close();
  }
}
