/**
 * FS "events" by polling: lists the directory every `intervalMs` and reports the names that are
 * new or changed (size, modification time, inode) since the previous listing. For filesystems
 * that deliver no change notifications to this machine: NFS and SMB mounts written by other hosts,
 * some container volume drivers, FUSE.
 *
 * Nothing is lost, only late: a name present at one listing is reported unless it was already
 * there, unchanged, at the one before. So `mayLoseEvents` is false; a drop arrives at most one
 * interval (plus the listing's own time) after it was made. Works on Node.js, Deno and Bun.
 */
import { lstat, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { FsAdapter } from '../../../src/types.ts';

export interface PollFsOptions {
  /** Time between the end of one listing and the start of the next. Default 1000 ms, at least 10. */
  readonly intervalMs?: number;
  /** Entries examined at once while listing (one `lstat` each). Default 32. */
  readonly statConcurrency?: number;
}

export const DEFAULT_POLL_INTERVAL_MS = 1000;

/** What a name looked like at a listing; a different value means it changed. */
type Snapshot = Map<string, string>;

async function list(dir: string, concurrency: number): Promise<Snapshot> {
  const names = await readdir(dir);
  const snapshot: Snapshot = new Map();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < names.length) {
      const name = names[next++]!;
      try {
        const s = await lstat(join(dir, name), { bigint: true });
        snapshot.set(name, `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`);
      } catch {
        // gone between readdir and lstat: not there
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, names.length)) }, worker));
  return snapshot;
}

export function pollFsAdapter(options: PollFsOptions = {}): FsAdapter {
  const intervalMs = Math.max(10, options.intervalMs ?? DEFAULT_POLL_INTERVAL_MS);
  const concurrency = Math.max(1, Math.floor(options.statConcurrency ?? 32));
  return {
    name: 'poll',
    mayLoseEvents: false,
    async subscribe(dir, onEvents, onError) {
      const root = resolve(dir);
      // The first listing is the baseline: the core sweeps the directory itself after subscribing.
      let previous = await list(root, concurrency);
      let closed = false;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let running: Promise<void> | undefined;

      const tick = async (): Promise<void> => {
        try {
          const current = await list(root, concurrency);
          if (closed) return;
          const changed: string[] = [];
          for (const [name, signature] of current) if (previous.get(name) !== signature) changed.push(name);
          previous = current;
          if (changed.length > 0) onEvents(changed);
        } catch (error) {
          // The directory could not be listed (a network mount away, say): keep the old baseline
          // so nothing is missed once it is back, and let the core know.
          if (!closed) onError(error);
        }
      };
      const schedule = (): void => {
        if (closed) return;
        timer = setTimeout(() => {
          running = tick().finally(() => {
            running = undefined;
            schedule();
          });
        }, intervalMs);
      };
      schedule();

      return {
        async close() {
          closed = true;
          if (timer !== undefined) clearTimeout(timer);
          await running;
        },
      };
    },
  };
}
