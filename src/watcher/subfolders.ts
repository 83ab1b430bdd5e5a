/**
 * `recursive`: the subfolders of the watched directory that discovery goes into, and one event
 * subscription for each (the filesystem adapters watch one folder, not a tree). Which folders are
 * none of ours (`failed/`, the archive, dot-folders, symbolic links) is decided here too.
 * Without `recursive` nothing here is used: the watched directory alone is subscribed (handle.ts).
 */
import { join, resolve } from 'node:path';
import { ARCHIVE_DIR, FAILED_DIR } from '../constants.ts';
import { isGone } from '../protocol/files.ts';
import type { FsAdapter, FsSubscription, Logger } from '../types.ts';

/** Reports names that changed, already relative to the watched directory (`a/b/x.csv`). */
export type SubfolderEvents = (names: readonly string[]) => void;

export class Subfolders {
  readonly #subscriptions = new Map<string, Promise<FsSubscription | undefined>>();
  #closed = false;

  constructor(
    readonly dir: string,
    /** The archive folder's absolute path: never watched, wherever it is. */
    readonly archive: string,
    readonly fs: FsAdapter,
    readonly onEvents: SubfolderEvents,
    readonly onError: (error: unknown) => void,
    readonly log: Logger,
  ) {}

  /**
   * A folder discovery goes into: not a dot-folder (`.hyperwatch/` is one), not `failed/` or
   * `archive/` at the top, not the archive wherever `archiveDir` puts it. `rel` is the folder's
   * path relative to the watched directory, `name` its last segment. Symbolic links never get
   * here: a listing's entry for one is not a directory.
   */
  isWatchable(rel: string, name: string): boolean {
    if (name.startsWith('.')) return false;
    if (rel === name && (name === FAILED_DIR || name === ARCHIVE_DIR)) return false;
    return resolve(this.dir, rel) !== this.archive;
  }

  /** Subscribed to `rel`'s events (once); resolves when the subscription is in place. */
  async ensure(rel: string): Promise<void> {
    if (this.#closed || this.#subscriptions.has(rel)) {
      await this.#subscriptions.get(rel);
      return;
    }
    const prefix = `${rel}/`;
    const subscribing = this.fs
      .subscribe(
        join(this.dir, rel),
        (names) => this.onEvents(names.map((n) => prefix + n)),
        (error) => this.onError(error),
      )
      .catch((error: unknown) => {
        // Gone already (nothing to say), or refused (out of inotify watches, say): the next listing tries again.
        this.#subscriptions.delete(rel);
        if (!isGone(error)) this.log.warn('cannot watch a subfolder; rescans cover it meanwhile', { folder: rel, error: String(error) });
        return undefined;
      });
    this.#subscriptions.set(rel, subscribing);
    await subscribing;
  }

  /** `rel` and the folders under it are gone (removed, or no longer listed): their watches end. */
  drop(rel: string): void {
    const prefix = `${rel}/`;
    for (const [folder, subscription] of this.#subscriptions) {
      if (folder !== rel && !folder.startsWith(prefix)) continue;
      this.#subscriptions.delete(folder);
      void subscription.then((s) => s?.close()).catch(() => {});
    }
  }

  /** After a complete listing: the watches of folders it did not see end. */
  keepOnly(seen: ReadonlySet<string>): void {
    for (const folder of [...this.#subscriptions.keys()]) if (!seen.has(folder)) this.drop(folder);
  }

  has(rel: string): boolean {
    return this.#subscriptions.has(rel);
  }

  /** At stop: every watch ends, and no new one starts. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#subscriptions.values()];
    this.#subscriptions.clear();
    await Promise.allSettled(all.map(async (s) => (await s)?.close()));
  }
}
