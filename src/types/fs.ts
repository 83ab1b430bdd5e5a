/**
 * The contract a filesystem adapter implements: watch one directory and report names that changed.
 */
/** A batch of names that appeared or changed in the watched directory (no path, no kind). */
export type FsEventHandler = (names: readonly string[]) => void;

export interface FsSubscription {
  close(): Promise<void>;
}

export interface FsAdapter {
  readonly name: string;
  /** True when events can be dropped (overflow, network filesystems): the core then rescans. */
  readonly mayLoseEvents: boolean;
  /**
   * Watches `dir` (not recursively). `onError` reports a failure of the watch itself; the core
   * answers with a rescan.
   */
  subscribe(dir: string, onEvents: FsEventHandler, onError: (error: unknown) => void): Promise<FsSubscription>;
}
