/**
 * One watched directory: finds ready files (events, an initial sweep, periodic rescans), claims
 * them one by one, ingests them under a bound on parallelism (a file alone, or small files
 * ready together in one transaction with a ledger row each), and cleans up or moves failures
 * aside. The protocol's states, for one file:
 *
 *   found (X.ready seen) → queued → claimed (renamed into staging) → committed → removed
 *                                        │                  └─ transient error → retried (stays claimed)
 *                                        └─ data/schema/security error → failed/ + .error
 */
import { opendir } from 'node:fs/promises';
import { setImmediate } from 'node:timers';
import { join } from 'node:path';
import { BATCH_FILE_MAX_BYTES, ERROR_SUFFIX, FAILED_DIR, READY_SUFFIX, STAGING_DIR } from './constants.ts';
import { errorReport, fromDbError, ingestError, IngestFailure } from './errors.ts';
import { claimFile, ensureDir, exists, listNames, type OpenedFile, removeIfPresent, renameIfPresent, reopenStaged, writeNewFile } from './files.ts';
import { CHEAP_CHECKSUM_BYTES, sha256OfFile } from './checksum.ts';
import { ContentGate, splitRepeats } from './content-gate.ts';
import { committedChecksums, committedClaims, ensureLedger, type LedgerEntry, ledgerByCopy, ledgerInsert, recordAllInLedger } from './ledger.ts';
import { mapLimit } from './map-limit.ts';
import { Mutex } from './mutex.ts';
import type { ResolvedOptions } from './options.ts';
import type { PluginMatch, PluginRegistry } from './plugins.ts';
import { dataNameOf, failedNameCandidates, newClaimId, parseStagedName, stagedName } from './protocol.ts';
import { dropIfCreatedEmpty } from './schema.ts';
import { tableLabel } from './sql.ts';
import { emptyStats, lastErrorOf, observe, type WatcherStats } from './stats.ts';
import type { BegunTransaction, DbAdapter, DbConnection, DbPool, FsAdapter, FsSubscription, IngestContext, IngesterPlugin, IngestError, TableColumn, TableName } from './types.ts';

/** What `stopWatching` returns. */
export interface WatchSummary {
  readonly directory: string;
  readonly table: string;
  readonly database: string;
  readonly startedAt: string;
  readonly stoppedAt: string | null;
  readonly stats: WatcherStats;
}

/** A committed file waiting for a checkpoint; `epoch` is the server's before its transaction. */
interface Unsettled {
  readonly stagedPath: string;
  readonly name: string;
  readonly claimId: string;
  readonly epoch: number;
  readonly rows: number;
  readonly bytes: number;
  /** Skipped as a duplicate (`skipDuplicateContent`): counted as such, not as ingested. */
  readonly duplicate?: boolean;
}

/** Claims and checksums of one batch run this many at a time (a claim can end in writing a .error; a large file is read for its checksum). */
const CLAIM_PARALLEL = 8;

/**
 * Claimed files are held open (the descriptor is what gets read) until their group settles: at
 * most this many across all tasks, so a backlog never runs the process out of descriptors.
 */
const MAX_OPEN_CLAIMS = 512;

/**
 * A group that fails without naming its bad file is split into this many parts, tried at once:
 * one bad file among 100 is found in 2 rounds (see `SPLIT_TO_SINGLES`) instead of the 7 of
 * halving (each round a transaction of some milliseconds, in a row), and the good parts commit
 * meanwhile.
 */
const GROUP_SPLIT_WAYS = 8;

/** A failed group this small is split into single files at once: one round instead of two. */
const SPLIT_TO_SINGLES = 16;

/** `items` in `ways` parts of nearly equal size (fewer when there are fewer items). */
function splitInto<T>(items: readonly T[], ways: number): T[][] {
  const parts = Math.max(1, Math.min(ways, items.length));
  const size = Math.ceil(items.length / parts);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** How many times in a row a plugin may ask for a fresh transaction (e.g. widening types). */
const MAX_PLUGIN_RETRIES = 8;

type Outcome =
  | { readonly status: 'committed'; readonly rows: number; readonly epoch: number }
  | { readonly status: 'failed'; readonly error: IngestError; readonly usedCache?: boolean }
  /** The watcher is stopping: the file stays claimed and the next start finishes it. */
  | { readonly status: 'abandoned' };

type GroupOutcome =
  | { readonly status: 'committed'; readonly rows: readonly number[]; readonly epoch: number }
  /** Not transient: the group is split, the file at `index` alone (or in parts when unknown; see `#finishGroup`). */
  | { readonly status: 'failed'; readonly error: IngestError; readonly index?: number }
  | { readonly status: 'abandoned' };

/**
 * A task's early BEGIN (see `#processReady`): the first transaction of its files takes it, or it
 * is released unused when the task ends.
 */
class EarlyBegin {
  constructor(private begun: BegunTransaction | undefined) {}

  take(): BegunTransaction | undefined {
    const begun = this.begun;
    this.begun = undefined;
    return begun;
  }

  release(): void {
    void this.take()?.release();
  }
}

/** A claimed file and the plugin for its extension (none: it fails as UNKNOWN_EXTENSION). */
interface Claimed {
  readonly file: OpenedFile;
  readonly match: PluginMatch | undefined;
}

/** A failure inside a group's transaction that belongs to one of its files. */
class GroupFailure extends Error {
  constructor(
    readonly error: IngestError,
    readonly index: number | undefined,
  ) {
    super(error.message);
  }
}

/** What one transaction learned about the target table; kept only if it commits. */
interface Described {
  columns: TableColumn[] | undefined;
  usedCache: boolean;
}

function sameTable(a: TableName, b: TableName): boolean {
  return a.name === b.name && (a.schema ?? 'public') === (b.schema ?? 'public');
}

export interface WatcherDeps {
  readonly dir: string;
  readonly table: TableName;
  readonly db: DbAdapter;
  /** Close `db` when the watcher stops (it was created for this watcher). */
  readonly ownsDb: boolean;
  readonly fs: FsAdapter;
  readonly plugins: PluginRegistry;
  readonly options: ResolvedOptions;
  readonly onStopped: () => void;
}

export class WatcherHandle {
  readonly dir: string;
  readonly table: TableName;
  readonly stats: WatcherStats;
  readonly startedAt: string = new Date().toISOString();
  #stoppedAt: string | null = null;

  readonly #deps: WatcherDeps;
  readonly #log;
  readonly #staging: string;
  readonly #failed: string;
  #pool: DbPool | undefined;
  #subscription: FsSubscription | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;

  /** Sentinel names waiting for a slot, in arrival order; a Set dedupes events and sweeps. */
  readonly #queue = new Set<string>();
  /** When each queued sentinel was found (for the backlog's oldest waiting age). */
  readonly #queuedAt = new Map<string, number>();
  /** Files being ingested, with when their ingest began (for progress reports). */
  readonly #active = new Map<OpenedFile, number>();
  /** Sentinel names dequeued but not yet claimed (dedupes late events for the same drop). */
  readonly #claiming = new Set<string>();
  /** Sentinels whose data file was missing, with when that was first seen. */
  readonly #orphans = new Map<string, number>();
  readonly #inFlight = new Set<Promise<void>>();
  #limit = 1;
  #overflow = false;
  #rescanning: Promise<void> | undefined;
  #idleWaiters: (() => void)[] = [];
  /** A pump is scheduled for the end of this turn of the event loop (see `#pumpSoon`). */
  #pumpScheduled = false;
  /**
   * Sentinels this watcher claimed whose move-out event has not come yet. Claiming renames the
   * sentinel away, and the directory reports that as an event for its name; a flood would
   * otherwise queue each name a second time, for a claim that finds nothing.
   */
  #claimedNames = new Set<string>();
  /** Each claimed file's task's early BEGIN, until a transaction takes it. */
  #early = new WeakMap<OpenedFile, EarlyBegin>();
  #stopping = false;
  #stopped: Promise<WatchSummary> | undefined;
  #wake = new AbortController();
  /**
   * Staged files whose rows are committed but not yet durable (see `DbCapabilities.durableCommit`):
   * removed after the next checkpoint. Until then a crash re-ingests them only if the ledger, as it
   * was last written to disk, does not list them.
   */
  #unsettled: Unsettled[] = [];
  #checkpointTimer: ReturnType<typeof setTimeout> | undefined;
  #checkpointing: Promise<void> | undefined;
  /** `checkpointDelayMs` has passed: the checkpoint runs as soon as the watcher is next idle. */
  #checkpointDue = false;
  /** Dispatch is held back while a checkpoint needs the database to itself. */
  #paused = false;
  /** Once the table is known to exist, files no longer serialize on the schema lock. */
  #tableExists = false;
  readonly #schemaLock = new Mutex();
  readonly #contentGate = new ContentGate();
  readonly #failLock = new Mutex();
  /**
   * The target table's columns as last committed: describing it costs a catalog query (about
   * 5 ms on hyperd) per file. Dropped on any failed transaction; a file that fails while using it
   * is tried once more with a fresh description, so a table changed behind our back costs a retry,
   * never a wrongly failed file.
   */
  #described: TableColumn[] | undefined;

  constructor(deps: WatcherDeps) {
    this.#deps = deps;
    this.dir = deps.dir;
    this.table = deps.table;
    this.#log = deps.options.logger;
    this.#staging = join(deps.dir, STAGING_DIR);
    this.#failed = join(deps.dir, FAILED_DIR);
    this.stats = emptyStats(deps.options.maxConcurrent);
  }

  get stopping(): boolean {
    return this.#stopping;
  }

  /**
   * Opens the pool, finishes files an earlier run left claimed, subscribes to events, then sweeps
   * the directory once, one task (a file or a group) at a time, and resolves when that sweep's
   * files are done.
   * Events arriving during the sweep are queued and deduped against it, so nothing dropped in
   * between is missed.
   */
  async start(): Promise<void> {
    const { options, db } = this.#deps;
    await ensureDir(this.#staging, 0o700);
    await ensureDir(this.#failed);
    this.#pool = await db.openPool({ maxConnections: options.maxConcurrent });
    await ensureLedger(this.#pool);
    // The ledger table must survive a server crash before any file relies on it.
    if (!db.capabilities.durableCommit) await db.checkpoint?.();
    await this.#warm();
    await this.#describeAtStart();
    await this.#recover();
    this.#subscription = await this.#deps.fs.subscribe(
      this.dir,
      (names) => this.#onNames(names),
      (error) => {
        this.stats.lostEvents++;
        this.#log.warn('filesystem events failed; rescanning', { dir: this.dir, error: String(error) });
        void this.rescan();
      },
    );
    await this.rescan();
    await this.whenIdle();
    this.#limit = options.maxConcurrent;
    this.#pump();
    this.#timer = setInterval(() => void this.rescan(), options.rescanIntervalMs);
    this.#log.info('watching', { dir: this.dir, table: tableLabel(this.table), database: db.describe(), fs: this.#deps.fs.name });
  }

  /** When the longest-waiting queued ready file was found (epoch ms), or undefined when none waits. */
  oldestQueuedAt(): number | undefined {
    const first = this.#queue.values().next();
    return first.done ? undefined : this.#queuedAt.get(first.value);
  }

  /** Files being ingested right now: name, size, bytes read so far and when the ingest began. */
  activeFiles(): { name: string; size: number; bytesRead: number; startedAt: number }[] {
    return [...this.#active].map(([file, startedAt]) => ({ name: file.name, size: file.size, bytesRead: Math.min(file.bytesRead, file.size), startedAt }));
  }

  /** Resolves when nothing is queued or in flight. */
  whenIdle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  #isIdle(): boolean {
    return (this.#queue.size === 0 || this.#stopping) && this.#inFlight.size === 0 && !this.#overflow && !this.#rescanning && !this.#checkpointing;
  }

  #notifyIdle(): void {
    if (!this.#isIdle()) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  #onNames(names: readonly string[]): void {
    if (this.#stopping) return;
    let found = false;
    for (const name of names) {
      if (name.endsWith(READY_SUFFIX)) {
        // Our own claim's event, unless the producer has already dropped the name again.
        if (this.#claimedNames.delete(name) && !exists(join(this.dir, name))) continue;
        // A known orphan's sentinel is retried when its data file shows up (below) or by the
        // rescan; its own events include the one of being put back after a claim found no data,
        // which would otherwise claim it again at once, in a loop.
        if (!this.#orphans.has(name)) found = this.#enqueue(name) || found;
      } else if (this.#orphans.has(name + READY_SUFFIX)) {
        // The data file arrived after its sentinel: try again now.
        found = this.#enqueue(name + READY_SUFFIX) || found;
      }
    }
    if (found) this.stats.lastEventAt = new Date().toISOString();
  }

  /** Queues a sentinel name unless it is already queued or being claimed. */
  #enqueue(readyName: string): boolean {
    if (dataNameOf(readyName) === undefined) return false;
    if (this.#queue.has(readyName) || this.#claiming.has(readyName)) return false;
    if (this.#queue.size >= this.#deps.options.queueLimit) {
      // Bounded memory: drop it for now; a rescan finds it again once the queue drains.
      this.#overflow = true;
      return false;
    }
    this.#queue.add(readyName);
    this.#queuedAt.set(readyName, Date.now());
    this.stats.queued = this.#queue.size;
    this.#pumpSoon();
    return true;
  }

  /**
   * Pumps once the events at hand have all been queued: the directory reports a burst of drops
   * as many events in one turn of the event loop, and claimed together they form groups instead
   * of each taking a task (and a transaction) of its own. The delay is a few microseconds.
   */
  #pumpSoon(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    setImmediate(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  /**
   * Starts tasks while slots are free. Each task takes a share of the queue (up to `batchFiles`):
   * a lone file goes at once, on its own; a backlog is split into groups across the free slots.
   */
  #pump(): void {
    while (!this.#stopping && !this.#paused && this.#inFlight.size < this.#limit && this.#queue.size > 0) {
      // Until the table exists, one file at a time: the first creates it, and files claimed
      // meanwhile would each go alone (see #finishDistinct) instead of waiting to form groups.
      if (!this.#tableExists && this.#inFlight.size > 0) break;
      const free = this.#limit - this.#inFlight.size;
      const take = this.#tableExists ? Math.min(this.#batchLimit(), Math.ceil(this.#queue.size / free)) : 1;
      const names: string[] = [];
      for (const readyName of this.#queue) {
        names.push(readyName);
        if (names.length >= take) break;
      }
      for (const readyName of names) {
        this.#queue.delete(readyName);
        this.#queuedAt.delete(readyName);
        this.#claiming.add(readyName);
      }
      this.stats.queued = this.#queue.size;
      const task: Promise<void> = this.#processReady(names)
        .catch((error: unknown) => {
          this.#log.error('unexpected error processing files; they stay where they are and are retried on the next rescan', {
            files: names.slice(0, 10),
            error: String(error),
          });
        })
        .finally(() => {
          for (const readyName of names) this.#claiming.delete(readyName);
          this.#inFlight.delete(task);
          this.stats.inFlight = this.#inFlight.size;
          if (this.#checkpointDue && this.#inFlight.size === 0 && this.#queue.size === 0 && !this.#stopping) void this.checkpoint();
          this.#pump();
          this.#notifyIdle();
        });
      this.#inFlight.add(task);
      this.stats.inFlight = this.#inFlight.size;
    }
    if (this.#overflow && this.#queue.size <= this.#deps.options.queueLimit / 2 && !this.#rescanning && !this.#stopping) {
      void this.rescan();
    }
  }

  /** Lists the directory and queues every sentinel; reports orphans past their grace period. */
  rescan(): Promise<void> {
    if (this.#stopping) return Promise.resolve();
    this.#rescanning ??= this.#rescan().finally(() => {
      this.#rescanning = undefined;
      this.#notifyIdle();
    });
    return this.#rescanning;
  }

  async #rescan(): Promise<void> {
    this.stats.rescans++;
    this.#overflow = false;
    // The listing tells which sentinels are there; events still due for our claims are noise.
    this.#claimedNames.clear();
    let found = false;
    try {
      const dir = await opendir(this.dir, { bufferSize: 256 });
      for await (const entry of dir) {
        if (this.#stopping) break;
        // Known orphans are re-tried by #reportOrphans, once their data file is there.
        if (!entry.name.endsWith(READY_SUFFIX) || this.#orphans.has(entry.name)) continue;
        found = this.#enqueue(entry.name) || found;
        if (this.#overflow) break; // the directory handle closes when the loop exits
      }
    } catch (error) {
      this.#log.error('cannot list the watched directory', { dir: this.dir, error: String(error) });
    }
    if (found) this.stats.lastEventAt = new Date().toISOString();
    await this.#reportOrphans();
  }

  async #reportOrphans(): Promise<void> {
    const now = Date.now();
    for (const [readyName, since] of this.#orphans) {
      if (this.#queue.has(readyName) || this.#claiming.has(readyName)) continue;
      const dataName = dataNameOf(readyName)!;
      if (!exists(join(this.dir, readyName))) {
        this.#orphans.delete(readyName);
        continue;
      }
      if (exists(join(this.dir, dataName))) {
        this.#orphans.delete(readyName);
        this.#enqueue(readyName);
        continue;
      }
      if (now - since < this.#deps.options.orphanGraceMs) continue;
      this.#orphans.delete(readyName);
      const seconds = Math.round((now - since) / 1000);
      await this.#fail(
        { name: dataName, claimId: newClaimId(), extension: '', readyPath: join(this.dir, readyName) },
        ingestError(
          'data',
          'ORPHAN_READY',
          `${readyName} has no data file ${dataName} (waited ${seconds} s)`,
          `Write ${dataName} completely (to a temporary name, then rename it) before creating ${readyName}; then drop both again.`,
          { file: dataName },
        ),
      );
      this.stats.orphans++;
    }
  }

  /** Files per task: `batchFiles`, within the bound on open claims. */
  #batchLimit(): number {
    return Math.max(1, Math.min(this.#deps.options.batchFiles, Math.floor(MAX_OPEN_CLAIMS / this.#deps.options.maxConcurrent)));
  }

  /**
   * Claims each drop (one by one: each is its own race with producers), then ingests them.
   *
   * The BEGIN of the task's first transaction is sent before the claims, so that its round trip
   * (a millisecond or two when idle, tens under load) runs while the files are being claimed
   * rather than after. Only where that transaction is the task's first use of the pool: with the
   * table known (no schema lock first) and no duplicate check against the ledger.
   */
  async #processReady(readyNames: readonly string[]): Promise<void> {
    const early = new EarlyBegin(this.#tableExists && !this.#deps.options.skipDuplicateContent ? this.#pool?.begin?.() : undefined);
    try {
      const claimed: Claimed[] = [];
      this.#log.debug('claiming', { files: readyNames.length, first: readyNames[0], inFlight: this.#inFlight.size, queued: this.#queue.size });
      for (const one of await mapLimit(readyNames, CLAIM_PARALLEL, (readyName) => this.#claim(readyName))) if (one) claimed.push(one);
      this.#log.debug('claimed', { files: claimed.length });
      for (const c of claimed) this.#early.set(c.file, early);
      await this.#finishAll(claimed);
    } finally {
      early.release();
    }
  }

  /**
   * The early BEGIN of `file`'s task for a transaction about to start, if still unused; released
   * instead when that transaction cannot take it (it must wait on the pool for something first).
   */
  #takeEarly(file: OpenedFile, usable: boolean): BegunTransaction | undefined {
    const early = this.#early.get(file);
    if (!usable) {
      early?.release();
      return undefined;
    }
    return early?.take();
  }

  /**
   * Claims one drop. The sentinel is taken first, by rename into staging: whoever moves it owns
   * the drop, so a late event for a sentinel already taken (or a data file swapped in after it)
   * is never processed twice. Then the data file is claimed; if it is not there (yet), the
   * sentinel goes back to the inbox and waits as an orphan.
   */
  async #claim(readyName: string): Promise<Claimed | undefined> {
    if (this.#stopping) return undefined;
    const dataName = dataNameOf(readyName);
    if (!dataName) return undefined;
    const match = this.#deps.plugins.match(dataName);
    const claimId = newClaimId();
    const extension = match?.extension ?? '';
    const staged = join(this.#staging, stagedName(claimId, dataName));
    const readyPath = join(this.dir, readyName);
    if (!renameIfPresent(readyPath, staged + READY_SUFFIX)) return undefined;
    const claim = claimFile(this.dir, dataName, staged, { claimId, extension });
    switch (claim.status) {
      case 'missing':
      case 'error':
        this.#unclaimSentinel(staged + READY_SUFFIX, readyPath);
        if (claim.status === 'error') this.#log.warn('cannot claim file; retried on the next rescan', { file: dataName, error: String(claim.error) });
        else if (!this.#orphans.has(readyName)) this.#orphans.set(readyName, Date.now());
        return undefined;
      case 'unsafe':
        this.#orphans.delete(readyName);
        await this.#fail(
          { name: dataName, claimId, extension, dataPath: claim.path, readyPath: staged + READY_SUFFIX },
          ingestError(
            'security',
            'NOT_A_REGULAR_FILE',
            `${dataName} ${claim.reason}; only regular files are ingested`,
            'Write the data to a temporary name and rename it to its final name (no symlinks, pipes or directories), then create the .ready file.',
            { file: dataName },
          ),
        );
        return undefined;
      case 'claimed':
        break;
    }
    this.#orphans.delete(readyName);
    // From here a new drop under the same name is a new file.
    this.#claiming.delete(readyName);
    if (this.#claimedNames.size >= MAX_OPEN_CLAIMS * 8) this.#claimedNames.clear(); // events that never came
    this.#claimedNames.add(readyName);
    return { file: claim.file, match };
  }

  /**
   * Ingests claimed files: small ones of one plugin together, in groups of up to `batchFiles` (one
   * transaction each), the rest one by one. Until the table exists, every file goes alone (the
   * first one creates it, under the schema lock).
   */
  async #finishAll(all: readonly Claimed[]): Promise<void> {
    await this.#checksum(all);
    if (!this.#deps.options.skipDuplicateContent) return this.#finishDistinct(all);
    // The same content twice in this batch: the repeat goes after the first has settled.
    const { first, repeats } = splitRepeats(all, (c) => (c.match ? c.file.checksum : undefined));
    const release = await this.#contentGate.hold(first.flatMap((c) => (c.match && c.file.checksum ? [c.file.checksum] : [])));
    try {
      const fresh = await this.#skipDuplicates(first);
      if (fresh) await this.#finishDistinct(fresh);
    } finally {
      release();
    }
    if (repeats.length > 0) await this.#finishAll(repeats);
  }

  /**
   * SHA-256 of each file's content for its ledger row: of every file with skipDuplicateContent,
   * otherwise of small files only, where it costs microseconds (see CHEAP_CHECKSUM_BYTES).
   */
  async #checksum(claimed: readonly Claimed[]): Promise<void> {
    const every = this.#deps.options.skipDuplicateContent;
    await mapLimit(claimed, CLAIM_PARALLEL, async ({ file }) => {
      if (file.checksum !== undefined || (!every && file.size > CHEAP_CHECKSUM_BYTES)) return;
      try {
        file.checksum = await sha256OfFile(file);
      } catch (error) {
        // Without it the file is still ingested; it just cannot be recognized as a duplicate.
        this.#log.warn('cannot compute the checksum of a claimed file', { file: file.name, error: String(error) });
      }
    });
  }

  /**
   * With skipDuplicateContent: settles the files whose content the table already has (a ledger
   * row of 0 rows each, in one transaction, then removed as if ingested) and returns the others;
   * `undefined` when the watcher stopped first (the files stay claimed for the next start).
   */
  async #skipDuplicates(claimed: readonly Claimed[]): Promise<Claimed[] | undefined> {
    const candidates = claimed.filter((c) => c.match && c.file.checksum !== undefined);
    if (candidates.length === 0) return [...claimed];
    const target = tableLabel(this.table);
    let known: Map<string, string> | undefined;
    let epoch = 0;
    let delay = this.#deps.options.retryInitialMs;
    for (let attempt = 1; ; attempt++) {
      try {
        known ??= await committedChecksums(this.#pool!, target, candidates.map((c) => c.file.checksum!));
        const duplicates = candidates.filter((c) => known!.has(c.file.checksum!));
        if (duplicates.length === 0) return [...claimed];
        epoch = this.#epoch();
        // The last attempt may have committed before its connection broke (one transaction: all or none).
        if (attempt > 1 && (await committedClaims(this.#pool!, [duplicates[0]!.file.claimId])).size > 0) break;
        await this.#pool!.transaction((conn) => recordAllInLedger(conn, duplicates.map((c) => this.#ledgerEntry(c.file, 0))));
        break;
      } catch (error) {
        const failure = fromDbError(error);
        if (failure.kind !== 'transient' && known !== undefined) {
          // The ledger row could not be written for a reason of its own: ingest them normally.
          this.#log.warn('cannot record skipped duplicates; ingesting them', { files: candidates.length, error: failure.message });
          return [...claimed];
        }
        const next = await this.#backoff(delay, { files: candidates.length, attempt }, failure.message);
        if (next === undefined) {
          for (const c of claimed) c.file.close();
          return undefined;
        }
        delay = next;
      }
    }
    const skipped = new Set(candidates.filter((c) => known.has(c.file.checksum!)));
    for (const { file } of skipped) {
      file.close();
      this.#settle({ stagedPath: file.stagedPath, name: file.name, claimId: file.claimId, epoch, rows: 0, bytes: file.size, duplicate: true });
      this.stats.duplicatesSkipped++;
      this.#log.info('skipped: the table already has this content', { file: file.name, sameAs: known.get(file.checksum!), checksum: file.checksum, claimId: file.claimId });
    }
    return claimed.filter((c) => !skipped.has(c));
  }

  /** `#finishAll` for files whose content is not a duplicate (or not checked). */
  async #finishDistinct(claimed: readonly Claimed[]): Promise<void> {
    // A table created by an earlier run (recovery, the initial sweep): groups from the start.
    if (!this.#tableExists && claimed.length > 1 && this.#deps.options.batchFiles > 1) this.#tableExists = await this.#tableIsThere().catch(() => false);
    const groups = new Map<IngesterPlugin, Claimed[]>();
    const alone: Claimed[] = [];
    for (const c of claimed) {
      if (c.match && this.#tableExists && this.#deps.options.batchFiles > 1 && c.file.size <= BATCH_FILE_MAX_BYTES) {
        const group = groups.get(c.match.plugin) ?? [];
        group.push(c);
        groups.set(c.match.plugin, group);
      } else {
        alone.push(c);
      }
    }
    for (const c of alone) await this.#finish(c.file, c.match);
    for (const [plugin, group] of groups) {
      for (let i = 0; i < group.length; i += this.#deps.options.batchFiles) {
        await this.#finishGroup(
          group.slice(i, i + this.#deps.options.batchFiles).map((c) => c.file),
          plugin,
        );
      }
    }
  }

  /**
   * Ingests a group in one transaction and settles each file. When it fails for a reason other
   * than the database being away, the group is split until each bad file has failed on its own:
   * the file the failure belongs to goes alone and the others go on as a group; when the failure
   * names no file, the group is split in `GROUP_SPLIT_WAYS` parts (single files once it is
   * `SPLIT_TO_SINGLES` or fewer), tried at once. Every good file is committed once, every bad one
   * fails alone, with the same report it would get on its own.
   */
  async #finishGroup(files: readonly OpenedFile[], plugin: IngesterPlugin): Promise<void> {
    if (files.length === 0) return;
    if (files.length === 1) return this.#finish(files[0]!, { plugin, extension: files[0]!.extension });
    const started = performance.now();
    const outcome = await this.#ingestGroup(files, plugin);
    switch (outcome.status) {
      case 'committed': {
        for (const f of files) f.close();
        const ms = Math.round(performance.now() - started);
        for (const [i, file] of files.entries()) {
          const rows = outcome.rows[i] ?? 0;
          this.#settle({ stagedPath: file.stagedPath, name: file.name, claimId: file.claimId, epoch: outcome.epoch, rows, bytes: file.size });
          this.stats.filesIngested++;
          this.stats.rowsIngested += rows;
          this.stats.bytesIngested += file.size;
          // The group's time for each of its files: the histogram counts files, as the counters do.
          observe(this.stats.ingestSeconds, ms / 1000);
          this.#log.info('ingested', { file: file.name, rows, bytes: file.size, ms, group: files.length, claimId: file.claimId });
        }
        return;
      }
      case 'abandoned':
        for (const f of files) f.close();
        this.#log.info('stopping: files left claimed for the next start', { files: files.length });
        return;
      case 'failed': {
        this.#log.debug('group failed; splitting it', { files: files.length, first: files[0]!.name, index: outcome.index, error: outcome.error.message });
        const { index } = outcome;
        if (index !== undefined && index >= 0 && index < files.length) {
          await Promise.all([
            this.#finish(files[index]!, { plugin, extension: files[index]!.extension }),
            this.#finishGroup([...files.slice(0, index), ...files.slice(index + 1)], plugin),
          ]);
        } else {
          const ways = files.length <= SPLIT_TO_SINGLES ? files.length : GROUP_SPLIT_WAYS;
          await Promise.all(splitInto(files, ways).map((part) => this.#finishGroup(part, plugin)));
        }
      }
    }
  }

  /** Puts a sentinel back in the inbox, unless the producer already made a new one. */
  #unclaimSentinel(stagedReady: string, readyPath: string): void {
    if (exists(readyPath)) removeIfPresent(stagedReady);
    else renameIfPresent(stagedReady, readyPath);
  }

  /** Ingests a claimed file and settles it: removed when committed, failed/ when not. */
  async #finish(file: OpenedFile, match: PluginMatch | undefined): Promise<void> {
    const started = performance.now();
    this.#active.set(file, Date.now());
    let outcome: Outcome;
    try {
      outcome = match
        ? await this.#ingest(file, match.plugin)
        : {
            status: 'failed',
            error: ingestError(
              'config',
              'UNKNOWN_EXTENSION',
              `${file.name}: no ingester for this file's extension (known: ${this.#deps.plugins.extensions().join(', ')})`,
              'Rename the file with one of the known extensions, or add an ingester plugin for it (WatchOptions.plugins), then replay it.',
              { file: file.name },
            ),
          };
    } finally {
      this.#active.delete(file);
      file.close();
    }
    switch (outcome.status) {
      case 'committed':
        this.#settle({ stagedPath: file.stagedPath, name: file.name, claimId: file.claimId, epoch: outcome.epoch, rows: outcome.rows, bytes: file.size });
        this.stats.filesIngested++;
        this.stats.rowsIngested += outcome.rows;
        this.stats.bytesIngested += file.size;
        observe(this.stats.ingestSeconds, (performance.now() - started) / 1000);
        this.#log.info('ingested', { file: file.name, rows: outcome.rows, bytes: file.size, ms: Math.round(performance.now() - started), claimId: file.claimId });
        return;
      case 'abandoned':
        this.#log.info('stopping: file left claimed for the next start', { file: file.name, claimId: file.claimId });
        return;
      case 'failed':
        await this.#fail(
          { name: file.name, claimId: file.claimId, extension: file.extension, dataPath: file.stagedPath, readyPath: file.stagedPath + READY_SUFFIX },
          outcome.error,
        );
    }
  }

  #epoch(): number {
    return this.#deps.db.epoch?.() ?? 0;
  }

  /** A committed file's staged copy goes once its commit is durable: now, or after a checkpoint. */
  #settle(entry: Unsettled): void {
    if (this.#deps.db.capabilities.durableCommit || !this.#deps.db.checkpoint) {
      this.#removeStaged(entry.stagedPath);
      return;
    }
    this.#unsettled.push(entry);
    if (this.#stopping) return; // the final checkpoint of stop() takes it
    if (this.#unsettled.length >= this.#deps.options.checkpointEvery) void this.checkpoint();
    else this.#checkpointTimer ??= setTimeout(() => this.#checkpointSoon(), this.#deps.options.checkpointDelayMs);
  }

  /**
   * A checkpoint holds new files back and closes the connections, and hyperd then loads the
   * database again for the next one: tens of milliseconds. Run at a random moment, it often
   * lands on the next file of a steady trickle; run when the last file in flight has just
   * finished, it is over before the next one usually arrives. When that moment does not come
   * (no file at all, or a flood that never pauses), it runs anyway after another
   * `checkpointDelayMs`.
   */
  #checkpointSoon(): void {
    this.#checkpointDue = true;
    this.#checkpointTimer = setTimeout(() => void this.checkpoint(), this.#deps.options.checkpointDelayMs);
  }

  /**
   * Makes the commits so far durable and removes their staged files. Dispatch pauses and the files
   * in flight finish first, since the database must be unloaded with none of our work open.
   */
  checkpoint(): Promise<void> {
    this.#checkpointing ??= this.#checkpoint().finally(() => {
      this.#checkpointing = undefined;
      this.#paused = false;
      this.#pump();
      this.#notifyIdle();
    });
    return this.#checkpointing;
  }

  async #checkpoint(): Promise<void> {
    clearTimeout(this.#checkpointTimer);
    this.#checkpointTimer = undefined;
    this.#checkpointDue = false;
    this.#paused = true;
    // Tasks never await a checkpoint (they only schedule one), so waiting for them cannot deadlock.
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
    const batch = this.#unsettled;
    if (batch.length === 0) return;
    this.#unsettled = [];
    try {
      await this.#deps.db.checkpoint!();
      // The checkpoint closed our connections: open them again before the next file needs one.
      if (!this.#stopping) void this.#warm();
    } catch (error) {
      // Not durable yet: keep the files and try again later. A crash meanwhile re-ingests only
      // what the ledger on disk does not list.
      this.#unsettled.unshift(...batch);
      this.#log.warn('checkpoint failed; committed files are kept until the next one', { files: batch.length, error: String(error) });
      if (!this.#stopping) this.#checkpointTimer ??= setTimeout(() => void this.checkpoint(), this.#deps.options.retryMaxMs);
      return;
    }
    this.stats.checkpoints++;
    const epoch = this.#epoch();
    const safe = batch.filter((u) => u.epoch === epoch);
    this.#log.debug('checkpoint', { files: batch.length, durable: safe.length, epoch });
    for (const u of safe) this.#removeStaged(u.stagedPath);
    const doubtful = batch.filter((u) => u.epoch !== epoch);
    if (doubtful.length > 0) {
      // The server restarted after these commits: what it had not written out is gone. The ledger
      // now on disk says which; those files are ingested again.
      this.#log.warn('the database restarted before a checkpoint; re-checking committed files against the ledger', { files: doubtful.length });
      try {
        await this.#recoverClaims(doubtful);
      } catch (error) {
        // The database is away again: keep them for the next checkpoint, marked as doubtful.
        this.#unsettled.push(...doubtful.map((u) => ({ ...u, epoch: -1 })));
        this.#log.warn('could not re-check files against the ledger yet', { files: doubtful.length, error: String(error) });
      }
    }
  }

  /**
   * Sentinel first, then data: a sentinel alone in staging then always means a claim that was
   * interrupted before its data file was taken (see `#recoverClaims`).
   */
  #removeStaged(stagedPath: string): void {
    removeIfPresent(stagedPath + READY_SUFFIX);
    removeIfPresent(stagedPath);
  }

  async #ingest(file: OpenedFile, plugin: IngesterPlugin): Promise<Outcome> {
    const fileState = new Map<string, unknown>();
    return this.#withRetries(
      file.claimId,
      (epoch) => ({ status: 'committed', rows: 0, epoch }),
      (attempt) => this.#attempt(file, plugin, attempt, fileState),
      { file: file.name },
      MAX_PLUGIN_RETRIES,
    );
  }

  /**
   * Runs `attempt` until it commits, fails for good, or the watcher stops. Before a retry the
   * ledger says whether the last attempt committed after all (its connection may have broken
   * after the COMMIT went out): then `committedEarlier` is the outcome. A failure that asked for a
   * fresh transaction (`error.retry`, at most `pluginRetries` in a row) or that used the cached
   * table description (once; a file's outcome says so, a group's never does) is tried again at
   * once; a transient one after a backoff.
   */
  async #withRetries<R extends Outcome | GroupOutcome>(
    claimId: string,
    committedEarlier: (epoch: number) => R,
    attempt: (n: number) => Promise<R>,
    fields: Record<string, unknown>,
    pluginRetries: number,
  ): Promise<R | { status: 'abandoned' }> {
    let delay = this.#deps.options.retryInitialMs;
    let retried = 0;
    let freshRetried = false;
    for (let n = 1; ; n++) {
      if (n > 1) {
        // The epoch is read first: if the server restarts after answering, the answer is re-checked.
        const epoch = this.#epoch();
        const done = await this.#alreadyCommitted(claimId);
        if (done === true) return committedEarlier(epoch);
      }
      const result = await attempt(n);
      if (result.status !== 'failed') return result;
      const { error } = result;
      if (error.retry && retried < pluginRetries) {
        retried++;
        continue;
      }
      if ('usedCache' in result && result.usedCache && error.kind !== 'transient' && !freshRetried) {
        // It used the cached description of the table: the table may have changed since.
        freshRetried = true;
        continue;
      }
      if (error.kind !== 'transient') return result;
      const next = await this.#backoff(delay, { ...fields, attempt: n }, error.message);
      if (next === undefined) return { status: 'abandoned' };
      delay = next;
    }
  }

  /**
   * After a transient failure: counts and logs the retry, waits `delay` (cut short by stop) and
   * returns the next, doubled up to `retryMaxMs`; `undefined` once the watcher is stopping.
   */
  async #backoff(delay: number, fields: Record<string, unknown>, error: string): Promise<number | undefined> {
    if (this.#stopping) return undefined;
    this.stats.retries++;
    // While the database says what it waits for (said once, e.g. a file another program holds), retries are debug lines.
    this.#log[this.#deps.db.waitingFor?.() ? 'debug' : 'warn']('database unavailable; retrying', { ...fields, delayMs: delay, error });
    await this.#sleep(delay);
    if (this.#stopping) return undefined;
    return Math.min(delay * 2, this.#deps.options.retryMaxMs);
  }

  async #alreadyCommitted(claimId: string): Promise<boolean | undefined> {
    try {
      return (await committedClaims(this.#pool!, [claimId])).has(claimId);
    } catch {
      return undefined;
    }
  }

  /** What a plugin's `append` is told: the database's abilities, the schema policy, the attempt. */
  #context(attempt: number, fileState: Map<string, unknown>): IngestContext {
    const { db, options } = this.#deps;
    return {
      capabilities: db.capabilities,
      sqlType: (t) => db.sqlType(t),
      schema: { createTable: options.createTable },
      logger: options.logger,
      attempt,
      fileState,
    };
  }

  async #attempt(file: OpenedFile, plugin: IngesterPlugin, attempt: number, fileState: Map<string, unknown>): Promise<Outcome> {
    const ctx = this.#context(attempt, fileState);
    const epoch = this.#epoch();
    const begun = this.#takeEarly(file, this.#tableExists);
    // Until the table exists, files take turns: two transactions creating it would conflict.
    const release = this.#tableExists ? undefined : await this.#schemaLock.acquire();
    const existedBefore = release ? await this.#tableIsThere() : true;
    const described: Described = { columns: undefined, usedCache: false };
    try {
      const rows = await (begun ?? this.#pool!).transaction(
        async (conn) => {
          const appended = await plugin.append(this.#describing(conn, described), file, this.table, ctx);
          if (appended.isErr()) throw new IngestFailure(appended.error);
          const changed = file.changedSinceClaim();
          if (changed) throw new IngestFailure(changedAfterReady(file, changed));
          if (!this.#tableExists) this.#tableExists = described.columns !== undefined || (await conn.describeTable(this.table)) !== null;
          return appended.value.rows;
        },
        // The ledger row goes with the COMMIT, in one round trip.
        { last: (rows) => ledgerInsert([this.#ledgerEntry(file, rows)]) },
      );
      if (described.columns) this.#described = described.columns;
      return { status: 'committed', rows, epoch };
    } catch (error) {
      this.#described = undefined;
      if (!existedBefore) await this.#dropIfCreatedEmpty();
      return { status: 'failed', error: fromDbError(error, file.name), usedCache: described.usedCache };
    } finally {
      release?.();
    }
  }

  #ledgerEntry(file: OpenedFile, rows: number): LedgerEntry {
    return { claimId: file.claimId, fileName: file.name, fileSize: file.size, rows, targetTable: tableLabel(this.table), directory: this.dir, checksum: file.checksum };
  }

  /**
   * `conn` with the target table's description served from the cache (see `#described`); what a
   * transaction reads from the database lands in `described`, kept only if it commits.
   */
  #describing(conn: DbConnection, described: Described): DbConnection {
    return {
      query: (sql, params) => conn.query(sql, params),
      execute: (sql, params) => conn.execute(sql, params),
      copyFrom: (sql, source) => conn.copyFrom(sql, source),
      describeTable: async (table) => {
        if (!sameTable(table, this.table)) return conn.describeTable(table);
        const cached = this.#described;
        if (cached) {
          described.usedCache = true;
          return cached.map((c) => ({ ...c }));
        }
        const columns = await conn.describeTable(table);
        if (columns) described.columns = columns.map((c) => ({ ...c }));
        return columns;
      },
    };
  }

  /**
   * Like `#ingest`, for a group in one transaction (all of it committed, or none: the ledger is
   * asked about its first file). A plugin's request for a fresh transaction is not retried here,
   * nor a failure while using the cached table description (the outcome does not tell it): the
   * group is split at once, and each part, the cache dropped, describes the table afresh (a group
   * of 100 tried whole twice cost 100 ms or more).
   */
  #ingestGroup(files: readonly OpenedFile[], plugin: IngesterPlugin): Promise<GroupOutcome> {
    return this.#withRetries(
      files[0]!.claimId,
      (epoch) => ({ status: 'committed', rows: files.map(() => 0), epoch }),
      (attempt) => this.#attemptGroup(files, plugin, attempt),
      { files: files.length },
      0,
    );
  }

  async #attemptGroup(files: readonly OpenedFile[], plugin: IngesterPlugin, attempt: number): Promise<GroupOutcome> {
    const ctx = this.#context(attempt, new Map());
    const epoch = this.#epoch();
    const described: Described = { columns: undefined, usedCache: false };
    const entries = (rows: readonly number[]) => files.map((f, i) => this.#ledgerEntry(f, rows[i]!));
    // Many rows go in by COPY inside the transaction; a few as an INSERT sent with the COMMIT.
    const byCopy = ledgerByCopy(files.length);
    const begun = this.#takeEarly(files[0]!, true);
    try {
      const rows = await (begun ?? this.#pool!).transaction(async (raw) => {
        const conn = this.#describing(raw, described);
        let rows: number[];
        if (plugin.appendMany) {
          const appended = await plugin.appendMany(conn, files, this.table, ctx);
          if (appended.isErr()) throw new GroupFailure(appended.error.error, appended.error.index);
          rows = appended.value.map((r) => r.rows);
          if (rows.length !== files.length) {
            throw new GroupFailure(
              ingestError('io', 'PLUGIN_RESULT', `plugin ${plugin.name} returned ${rows.length} results for ${files.length} files`, 'A bug in the plugin; the files are retried one by one.'),
              undefined,
            );
          }
        } else {
          rows = [];
          for (const [index, file] of files.entries()) {
            const appended = await plugin.append(conn, file, this.table, ctx);
            if (appended.isErr()) throw new GroupFailure(appended.error, index);
            rows.push(appended.value.rows);
          }
        }
        const changed = files.map((f) => f.changedSinceClaim());
        const index = changed.findIndex((c) => c !== undefined);
        if (index >= 0) throw new GroupFailure(changedAfterReady(files[index]!, changed[index]!), index);
        if (byCopy) await recordAllInLedger(raw, entries(rows));
        return rows;
      }, byCopy ? undefined : { last: (rows) => ledgerInsert(entries(rows)) });
      if (described.columns) this.#described = described.columns;
      return { status: 'committed', rows, epoch };
    } catch (error) {
      this.#described = undefined;
      if (error instanceof GroupFailure) return { status: 'failed', error: error.error, index: error.index };
      return { status: 'failed', error: fromDbError(error) };
    }
  }

  /**
   * Opens every pooled connection now (at start, and after a checkpoint closed them), so the next
   * file does not pay for a connection set-up. Best effort: a failure here shows up, and is
   * handled, on the file's own transaction.
   */
  async #warm(): Promise<void> {
    const pool = this.#pool;
    if (!pool) return;
    await Promise.all(Array.from({ length: this.#deps.options.maxConcurrent }, () => pool.query('SELECT 1').catch(() => {})));
  }

  /** Knowing the table before the first file spares that file the schema lock and catalog queries. */
  async #describeAtStart(): Promise<void> {
    try {
      const columns = await this.#pool!.transaction((conn) => conn.describeTable(this.table));
      if (columns) {
        this.#tableExists = true;
        this.#described = columns;
      }
    } catch {
      // The first file finds out, under the schema lock.
    }
  }

  async #tableIsThere(): Promise<boolean> {
    return (await this.#pool!.transaction((conn) => conn.describeTable(this.table))) !== null;
  }

  async #dropIfCreatedEmpty(): Promise<void> {
    try {
      await dropIfCreatedEmpty(this.#pool!, this.table);
    } catch (error) {
      this.#log.warn('could not drop the empty table a failed file created', { table: tableLabel(this.table), error: String(error) });
    }
  }

  /**
   * Moves a failed file and its sentinel into failed/, under a name no earlier failure holds, and
   * writes the `.error` report next to them. Serialized, so two failures never pick one name.
   */
  async #fail(
    entry: { name: string; claimId: string; extension: string; dataPath?: string; readyPath: string },
    error: IngestError,
  ): Promise<void> {
    const release = await this.#failLock.acquire();
    try {
      const [plain, unique] = failedNameCandidates(entry.name, entry.claimId, entry.extension);
      const taken = (n: string) => exists(join(this.#failed, n)) || exists(join(this.#failed, n + ERROR_SUFFIX)) || exists(join(this.#failed, n + READY_SUFFIX));
      const name = taken(plain) ? unique : plain;
      const target = join(this.#failed, name);
      // Sentinel before data, as everywhere: a sentinel alone in staging means an unfinished claim.
      renameIfPresent(entry.readyPath, target + READY_SUFFIX);
      if (entry.dataPath) renameIfPresent(entry.dataPath, target);
      const report = {
        ...errorReport(error),
        file: entry.name,
        failedAs: name,
        claimId: entry.claimId,
        table: tableLabel(this.table),
        directory: this.dir,
        time: new Date().toISOString(),
      };
      await writeNewFile(target + ERROR_SUFFIX, `${JSON.stringify(report, null, 2)}\n`);
      this.stats.filesFailed++;
      this.stats.lastError = lastErrorOf(error, entry.name);
      this.#log.error('failed', { file: entry.name, movedTo: join(FAILED_DIR, name), code: error.code, error: error.message, hint: error.hint });
    } catch (moveError) {
      this.#log.error('could not move a failed file aside', { file: entry.name, error: String(moveError), cause: error.message });
    } finally {
      release();
    }
  }

  /**
   * Finishes what an earlier run left in staging: a claim the ledger has committed is only
   * removed; any other is ingested now, under its original claim id.
   */
  async #recover(): Promise<void> {
    const claims = new Map<string, string[]>();
    for (const staged of await listNames(this.#staging)) {
      const parsed = parseStagedName(staged);
      if (!parsed) continue;
      claims.set(parsed.claimId, [...(claims.get(parsed.claimId) ?? []), parsed.name]);
    }
    await this.#recoverClaims([...claims].map(([claimId, names]) => ({ claimId, names })));
  }

  /**
   * Settles staged claims by the ledger: committed ones are only removed, the others ingested
   * again (small ones in groups), under their claim id: at start-up (before the sweep), and after
   * a server restart lost commits that were not yet checkpointed (dispatch is paused meanwhile).
   */
  async #recoverClaims(claims: readonly ({ claimId: string; names: readonly string[] } | Unsettled)[]): Promise<void> {
    if (claims.length === 0) return;
    const committed = await committedClaims(this.#pool!, claims.map((c) => c.claimId));
    const reclaimed: Claimed[] = [];
    for (const claim of claims) {
      const { claimId } = claim;
      const names = 'names' in claim ? claim.names : [claim.name, claim.name + READY_SUFFIX];
      // The data file has the shortest name: its sentinel is `<data>.ready`.
      const name = names.reduce((a, b) => (a.length <= b.length ? a : b));
      const stagedPath = join(this.#staging, stagedName(claimId, name));
      if (names.length === 1 && name.endsWith(READY_SUFFIX) && !exists(join(this.#staging, stagedName(claimId, name.slice(0, -READY_SUFFIX.length))))) {
        // Only a sentinel: the run stopped between taking it and claiming its data file.
        this.#unclaimSentinel(stagedPath, join(this.dir, name));
        continue;
      }
      if (committed.has(claimId)) {
        this.#removeStaged(stagedPath);
        this.#log.info('recovered: already committed, cleaned up', { file: name, claimId });
        this.stats.recovered++;
        continue;
      }
      const match = this.#deps.plugins.match(name);
      const reopened = reopenStaged(stagedPath, name, { claimId, extension: match?.extension ?? '' });
      if (reopened.status !== 'claimed') {
        removeIfPresent(stagedPath + READY_SUFFIX);
        continue;
      }
      this.#log.info('recovered: ingesting a file whose commit was not durable', { file: name, claimId });
      this.stats.recovered++;
      if ('rows' in claim && claim.duplicate) this.stats.duplicatesSkipped--;
      else if ('rows' in claim) {
        // Counted when it first committed; counted again when it lands this time.
        this.stats.filesIngested--;
        this.stats.rowsIngested -= claim.rows;
        this.stats.bytesIngested -= claim.bytes;
      }
      reclaimed.push({ file: reopened.file, match });
      // A few groups' worth at a time: each reopened file holds a descriptor until it settles.
      if (reclaimed.length >= this.#batchLimit()) await this.#finishAll(reclaimed.splice(0));
    }
    await this.#finishAll(reclaimed);
  }

  #sleep(ms: number): Promise<void> {
    const signal = this.#wake.signal;
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', wake);
        resolve();
      }, ms);
      signal.addEventListener('abort', wake, { once: true });
    });
  }

  /**
   * Stops taking new files, lets in-flight ones finish (up to `stopTimeoutMs`; after that their
   * transactions are rolled back and they stay claimed for the next start), closes the pool.
   */
  stop(): Promise<WatchSummary> {
    this.#stopped ??= this.#stop();
    return this.#stopped;
  }

  async #stop(): Promise<WatchSummary> {
    this.#stopping = true;
    if (this.#timer) clearInterval(this.#timer);
    clearTimeout(this.#checkpointTimer);
    this.#queue.clear();
    this.#queuedAt.clear();
    this.stats.queued = 0;
    this.#wake.abort();
    await this.#subscription?.close().catch(() => {});
    const drained = Promise.allSettled([...this.#inFlight]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), this.#deps.options.stopTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) this.#log.warn('stop timeout: rolling back in-flight files; they stay claimed for the next start', { inFlight: this.#inFlight.size });
    else await this.#finalCheckpoint();
    await this.#pool?.close();
    await drained;
    await this.#rescanning;
    if (this.#deps.ownsDb) await this.#deps.db.close();
    this.#stoppedAt = new Date().toISOString();
    this.#deps.onStopped();
    this.#notifyIdle();
    this.#log.info('stopped', { dir: this.dir, ...this.stats, lastError: this.stats.lastError?.message, ingestSeconds: undefined });
    return this.summary();
  }

  /** On stop: make what was committed durable, so nothing is left in staging. */
  async #finalCheckpoint(): Promise<void> {
    await this.#checkpointing;
    // Files re-ingested after a restart join the list again: settle until it is empty (a few
    // rounds at most; what a failing database leaves here is finished by the next start).
    for (let round = 0; round < 5 && this.#unsettled.length > 0; round++) await this.#checkpoint();
  }

  summary(): WatchSummary {
    return {
      directory: this.dir,
      table: tableLabel(this.table),
      database: this.#deps.db.describe(),
      startedAt: this.startedAt,
      stoppedAt: this.#stoppedAt,
      stats: { ...this.stats },
    };
  }
}


function changedAfterReady(file: OpenedFile, how: string): IngestError {
  return ingestError(
    'data',
    'CHANGED_AFTER_READY',
    `${file.name} changed after its .ready appeared (${how}); nothing was committed`,
    'Producers must finish writing (write to a temporary name, then rename) before creating the .ready file; then drop the complete file again.',
    { file: file.name },
  );
}
