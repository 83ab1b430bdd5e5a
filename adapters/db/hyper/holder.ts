/**
 * Who holds a `.hyper` file. hyperd locks the file it has attached, so while a hyperwatch process
 * works on a database no other hyperd can open it; readers go through that process's hyperd
 * instead. The process says where it listens in `<database>.hyperwatch-endpoint.json`, next to
 * the file; an entry whose process is gone is stale and ignored (and replaced by the next holder).
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import type { Logger } from '../../../src/types.ts';
import { DatabaseHeldError } from './databases.ts';

export const HOLDER_SUFFIX = '.hyperwatch-endpoint.json';

export interface Holder {
  readonly pid: number;
  /** `host:port` of the holder's hyperd. */
  readonly endpoint: string;
  /** The user to connect as. */
  readonly user: string;
  readonly database: string;
  readonly since: string;
}

export function holderPath(database: string): string {
  return database + HOLDER_SUFFIX;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, another user's.
    return (error as { code?: string }).code === 'EPERM';
  }
}

/** The live holder of `database` (any process, ours included), or undefined. */
export function readHolder(database: string): Holder | undefined {
  let holder: Partial<Holder>;
  try {
    holder = JSON.parse(readFileSync(holderPath(database), 'utf8')) as Partial<Holder>;
  } catch {
    return undefined;
  }
  if (typeof holder.pid !== 'number' || typeof holder.endpoint !== 'string' || typeof holder.user !== 'string') return undefined;
  return isAlive(holder.pid) ? (holder as Holder) : undefined;
}

/** Writes the entry of this process (write, then rename: a reader never sees half of it). */
export function writeHolder(holder: Holder): void {
  const path = holderPath(holder.database);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(holder, null, 2)}\n`, { mode: 0o644 });
  renameSync(tmp, path);
}

/** Removes the entry if it is still this process's. */
export function removeHolder(database: string): void {
  try {
    const holder = JSON.parse(readFileSync(holderPath(database), 'utf8')) as Partial<Holder>;
    if (holder.pid === process.pid) rmSync(holderPath(database), { force: true });
  } catch {
    // gone already
  }
}

/** Refuses to open a file another hyperwatch process holds, before hyperd's own lock error. */
export function checkNotHeld(database: string): void {
  const holder = readHolder(database);
  if (holder && holder.pid !== process.pid)
    throw new DatabaseHeldError(
      database,
      `hyperwatch process ${holder.pid} (its hyperd listens at ${holder.endpoint} since ${holder.since})`,
    );
}

/** The adapters of this process that announce one database, and what they announced. */
export interface AnnouncedEntry {
  announcers: number;
  announced?: string | undefined;
}

export interface Announcer {
  /** Publishes (or moves) this process's entry; logs how readers connect when it changes. */
  announce(endpoint: { host: string; port: number }): void;
  /** This adapter is done; the last one of the process removes the entry. */
  withdraw(): void;
}

export function announcerFor(entry: AnnouncedEntry, database: string, user: string, logger: Logger): Announcer {
  let counted = false;
  return {
    announce({ host, port }) {
      const where = `${host}:${port}`;
      if (!counted) {
        counted = true;
        entry.announcers++;
      }
      if (entry.announced === where && readHolder(database)?.pid === process.pid) return;
      entry.announced = where;
      try {
        writeHolder({ pid: process.pid, endpoint: where, user, database, since: new Date().toISOString() });
      } catch (error) {
        // Readers then start their own hyperd and meet the lock; the watcher itself is fine.
        logger.warn('could not publish the endpoint for readers next to the database', { database, error: String(error) });
        return;
      }
      logger.info('readers connect through this hyperd', {
        database,
        endpoint: where,
        user,
        psql: `psql "host=${host} port=${port} user=${user} dbname=${database}"`,
      });
    },
    withdraw() {
      if (!counted) return;
      counted = false;
      if (--entry.announcers === 0) {
        entry.announced = undefined;
        removeHolder(database);
      }
    },
  };
}
