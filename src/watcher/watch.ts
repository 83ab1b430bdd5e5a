/**
 * What the steps of one watcher are handed: its environment, read-only (env.ts), and the few
 * pieces of state that belong to the watcher rather than to a file, each an object changed only
 * through its own methods, so that "who changes this?" has one file for an answer:
 *
 * | state                                        | owner, changing it by its methods | who calls them                     |
 * | -------------------------------------------- | --------------------------------- | ---------------------------------- |
 * | stopping; the tasks running                  | life.ts `Lifecycle`               | handle.ts; takeover.ts (its check) |
 * | the connection pool                          | pool.ts `WatcherPool`             | start-up.ts opens, handle.ts closes|
 * | queue, names being claimed, orphans, rescan  | inbox.ts `Inbox`                  | discover.ts, claim.ts, handle.ts   |
 * | files settling (`readyWhen: 'stable'`)       | settling.ts `Settling`            | discover-stable.ts, claim-stable.ts|
 * | subfolders watched (`recursive`)             | subfolders.ts `Subfolders`        | walk.ts, discover.ts, handle.ts    |
 * | the table: exists, columns, schema lock      | table-knowledge.ts                | attempt.ts, group.ts, start-up.ts  |
 * | commits awaiting a checkpoint; the pause     | durability.ts `Checkpoints`       | ingest.ts, duplicates.ts, handle.ts|
 * | the lease: fenced, heartbeat, rows seen      | lease.ts (its functions)          | start-up, attempt, duplicates,     |
 * |                                              |                                   | retry, takeover, dead-sessions,    |
 * |                                              |                                   | handle                             |
 * | the reaper of dead sessions                  | dead-sessions.ts `Reaper`         | start-up.ts starts, handle.ts stops|
 * | files inside a transaction                   | active.ts `ActiveFiles`           | ingest.ts                          |
 * | checksums being ingested; failed/ names      | `ContentGate`, `Mutex`            | duplicates.ts; fail.ts             |
 *
 * A file's own state never lives here: it travels as a record (protocol/record.ts) through the
 * steps' parameters and results, and so does a task's early BEGIN (early.ts).
 */
import type { ContentGate } from './content-gate.ts';
import type { Mutex } from '../util/mutex.ts';
import type { ActiveFiles } from './active.ts';
import type { Reaper } from './dead-sessions.ts';
import type { Checkpoints } from './durability.ts';
import type { WatchEnv } from './env.ts';
import type { Inbox } from './inbox.ts';
import type { LeaseState } from './lease.ts';
import type { Lifecycle } from './life.ts';
import type { Settling } from './settling.ts';
import type { Subfolders } from './subfolders.ts';
import type { WatcherPool } from './pool.ts';
import type { TableKnowledge } from './table-knowledge.ts';

export interface Watch {
  readonly env: WatchEnv;
  readonly life: Lifecycle;
  readonly pool: WatcherPool;
  readonly inbox: Inbox;
  readonly settling: Settling;
  /** `recursive`: the subfolders' event subscriptions (unused without it). */
  readonly folders: Subfolders;
  readonly known: TableKnowledge;
  readonly checkpoints: Checkpoints;
  readonly lease: LeaseState;
  readonly reaper: Reaper;
  readonly active: ActiveFiles;
  /** `skipDuplicateContent`: two tasks never ingest the same content at once. */
  readonly contentGate: ContentGate;
  /** Two failures never pick the same name in failed/. */
  readonly failLock: Mutex;
}
