/** What the bench asks of a watcher process, and what that process reports back. */

export interface WorkerJob {
  /** Watched directory (exists; may already hold a backlog of ready files). */
  readonly dir: string;
  readonly table: string;
  /** The `.hyper` file: on the bench's hyperd at `endpoint`, or the watcher's own (`embedded`). */
  readonly database: string;
  readonly endpoint: string;
  /**
   * How the watcher reaches its database. `adapter` (default): `createHyperAdapter({ endpoint,
   * database, sharedFilesystem: true })` passed as `db`. `embedded`: `openWatcher` with `database`
   * only, as a user runs it by default (its own hyperd). `endpoint`: `openWatcher` with `database`
   * and `endpoint`, as the CLI's `--endpoint` does (the probe decides whether hyperd reads the files).
   */
  readonly connect?: 'adapter' | 'embedded' | 'endpoint';
  /** Files (ingested + failed) after which the workload is done. */
  readonly expectFiles: number;
  readonly timeoutMs: number;
  /** Extra `WatchOptions` (JSON values), to measure what a setting changes. */
  readonly watch?: Readonly<Record<string, unknown>>;
}

export type WorkerMessage =
  | {
      readonly type: 'ready';
      /** Monotonic ms (see `now()`): before `openWatcher`, and when it returned. */
      readonly startedAt: number;
      readonly openedAt: number;
      readonly rssMb: number;
    }
  | {
      readonly type: 'done';
      readonly startedAt: number;
      readonly openedAt: number;
      /** When each file was counted as ingested or failed, in order (polled every millisecond). */
      readonly settledAt: readonly number[];
      /** When staging and the inbox were empty again (committed files removed after a checkpoint); NaN if not within 30 s. */
      readonly goneAt: number;
      readonly timedOut: boolean;
      readonly filesIngested: number;
      readonly filesFailed: number;
      readonly rowsIngested: number;
      readonly checkpoints: number;
      readonly lastError: string | null;
      /** Peak RSS of the watcher's process over its whole life (VmHWM), and RSS once idle. */
      readonly peakRssMb: number;
      readonly idleRssMb: number;
      /** CPU seconds the watcher's process used from `ready` until the workload was settled. */
      readonly cpuSeconds: number;
      /** What the watcher logged about an endpoint reading the files itself (the probe's finding), if anything. */
      readonly readsFilesNote: string | null;
      /**
       * When the watcher logged the steps of a file (monotonic ms, first of each): `claiming` (the
       * event reached a task), `claimed`, `server-read` (the Arrow ingester's checks done, its
       * `COPY` about to go), `ingested` (committed).
       */
      readonly marks: Readonly<Record<string, number>>;
    }
  | { readonly type: 'error'; readonly message: string };
