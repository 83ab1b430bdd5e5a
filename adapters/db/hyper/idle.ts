/**
 * An idle embedded hyperd lets go of the `.hyper` file, so other programs (Tableau, the Hyper API,
 * a BI tool) can open it: hyperd locks the file for as long as one of its sessions has it
 * attached. Once nothing has run for `delayMs` and every commit is checkpointed, the sessions
 * detach and close; the next file opens new ones. If another program holds the file by then,
 * opening fails with "locked by another process": the watcher retries (the files stay claimed),
 * and this module says once what it waits for, and once when the file is free again.
 */
import type { Logger } from '../../../src/types.ts';
import { isLockedElsewhere } from './busy.ts';

export interface IdleRelease {
  /** Marks work as begun; call the returned function when it is done. */
  begin(): () => void;
  /** Records how a piece of work ended, to tell when the file is held elsewhere and when it is free. */
  settled(error?: unknown): void;
  /** What the database waits for now, or undefined. */
  waitingFor(): string | undefined;
  stop(): void;
}

export interface IdleReleaseOptions {
  readonly database: string;
  /** 0: never release. */
  readonly delayMs: number;
  /** Commits not checkpointed yet: the file must not be let go before the checkpoint. */
  readonly pending: () => boolean;
  /** Detaches and closes every session (under the database's exclusive gate). */
  readonly release: () => Promise<void>;
  readonly logger: Logger;
}

export function idleRelease(options: IdleReleaseOptions): IdleRelease {
  let active = 0;
  let lastDone = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let released = false;
  let waiting: string | undefined;
  let stopped = false;

  const schedule = (ms: number) => {
    if (stopped || options.delayMs <= 0 || timer) return;
    timer = setTimeout(() => void fire(), ms);
    timer.unref?.();
  };

  async function fire(): Promise<void> {
    timer = undefined;
    if (stopped || released || active > 0) return;
    const left = lastDone + options.delayMs - Date.now();
    if (left > 0 || options.pending()) return schedule(Math.max(left, options.delayMs));
    released = true;
    try {
      await options.release();
      options.logger.debug('idle: let go of the database file, so other programs can open it', { database: options.database });
    } catch (error) {
      released = false;
      options.logger.debug('idle: could not let go of the database file yet', { database: options.database, error: String(error) });
      schedule(options.delayMs);
    }
  }

  return {
    begin() {
      active++;
      released = false;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        active--;
        lastDone = Date.now();
        if (active === 0) schedule(options.delayMs);
      };
    },
    settled(error) {
      if (error !== undefined && isLockedElsewhere(error)) {
        if (waiting === undefined) {
          waiting = `${options.database} is open in another program (its file is locked by another process)`;
          options.logger.warn(
            'waiting for the database file: another program has it open; files stay claimed and are retried until it lets go',
            {
              database: options.database,
            },
          );
        }
      } else if (error === undefined && waiting !== undefined) {
        waiting = undefined;
        options.logger.info('the database file is free again; continuing', { database: options.database });
      }
    },
    waitingFor: () => waiting,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** Runs a piece of work as one `idle` waits for, noting a file held elsewhere and its end. */
export async function watchedBy<T>(idle: IdleRelease | undefined, run: () => Promise<T>): Promise<T> {
  const done = idle?.begin();
  try {
    const result = await run();
    idle?.settled();
    return result;
  } catch (error) {
    idle?.settled(error);
    throw error;
  } finally {
    done?.();
  }
}
