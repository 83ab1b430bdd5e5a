/**
 * The protocol, for one dropped file: the states it goes through and the only moves between them.
 * Read this first; every step of the watcher (src/watcher/) takes a file's record in one state and
 * returns it in the next.
 *
 *   ready ──claim──▶ claiming ──▶ claimed ──ingest──▶ ingesting ──▶ committed ──durable──▶ settled
 *     ▲                 │  │         ▲  │                 │  │            │
 *     │  (data missing) │  │         │  └─ duplicate ─────┼──┼────────────┘ (content already in the table)
 *     └── orphaned ◀────┘  │         └── retry / stop ────┘  │
 *            │             │                                  │
 *            └──(grace)────┴──────────▶ failed ◀──────────────┘ (data, schema, security, poison)
 *
 * - ready: `X.ready` is in the watched directory (found by an event, the sweep or a rescan).
 * - claiming: the sentinel was renamed into staging; the data file is being claimed.
 * - claimed: both are in staging under one claim id, the data file held open.
 * - ingesting: a transaction is appending it (alone, or in a group of small files).
 * - committed: its rows and its ledger row are committed; the staged copy waits for durability.
 * - settled: durable and removed from staging. Final.
 * - failed: moved to failed/ with a `.error` report. Final.
 * - orphaned: a sentinel without its data file, waiting for it (or for the grace period to end).
 */

export const FILE_STATES = ['ready', 'claiming', 'claimed', 'ingesting', 'committed', 'settled', 'failed', 'orphaned'] as const;

export type FileState = (typeof FILE_STATES)[number];

/**
 * Every allowed move. `claimed → settled`: a recovered claim the ledger shows committed, or content
 * the table already has. `ingesting → claimed`: a transient failure to retry, or the watcher
 * stopping (the next start finishes it). `committed → claimed`: the database restarted before its
 * commit was made durable, and the ledger does not list it.
 */
export const TRANSITIONS = {
  ready: ['claiming'],
  claiming: ['claimed', 'orphaned', 'ready', 'failed'],
  claimed: ['ingesting', 'settled', 'failed'],
  ingesting: ['committed', 'claimed', 'failed'],
  committed: ['settled', 'claimed'],
  settled: [],
  failed: [],
  orphaned: ['ready', 'failed'],
} as const satisfies Record<FileState, readonly FileState[]>;

/** The states a file in state `S` may move to. */
export type NextState<S extends FileState> = (typeof TRANSITIONS)[S][number];

/** States a file never leaves. */
export type FinalState = { [S in FileState]: (typeof TRANSITIONS)[S] extends readonly [] ? S : never }[FileState];

export function canMove(from: FileState, to: FileState): boolean {
  return (TRANSITIONS[from] as readonly FileState[]).includes(to);
}

/** Where each step lives (src/watcher/), for a reader following one file from event to commit. */
export const STEPS = {
  discover: 'watcher/discover.ts: events, sweep, rescans, the queue → ready; orphans',
  claim: 'watcher/claim.ts: ready → claiming → claimed | orphaned | failed',
  duplicates: 'watcher/duplicates.ts: claimed → settled when the table has the content',
  group: 'watcher/group.ts: claimed files → groups, and split groups that fail',
  ingest: 'watcher/ingest.ts: one file claimed → ingesting → committed | failed, and its stats',
  attempt: 'watcher/attempt.ts: ingesting → one transaction → committed | failure',
  retry: 'watcher/retry.ts: a failure → another attempt (stays claimed), a backoff, or failed (poison file)',
  durability: 'watcher/durability.ts: committed → settled (now, or after a checkpoint); watcher/archive.ts with onSuccess archive',
  recover: 'watcher/recover.ts: claims an earlier run left → settled | claimed again',
  takeover: "watcher/takeover.ts: a dead process's claims (its staging folder) → this process's, then recover",
  lease: "watcher/lease.ts: this process's lease, and the fence every commit passes",
  fail: 'watcher/fail.ts: → failed/ with a .error report',
} as const;

export type Step = keyof typeof STEPS;
