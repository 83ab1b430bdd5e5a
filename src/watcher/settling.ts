/**
 * `readyWhen: 'stable'`: the files seen in the watched directory that are not taken yet, with
 * their size and modification time as last seen and since when they have stayed so. A file is
 * due once it has stayed the same for `stableMs`; discover-stable.ts looks again then (a timer set
 * for the earliest due file), and queues it. Bounded like the queue: beyond `limit` names, new
 * ones wait for a later rescan.
 */
import type { Stats } from 'node:fs';
import type { WatcherStats } from '../observe/stats.ts';

/** What one look at a file saw. */
export interface Look {
  readonly size: number;
  readonly mtimeMs: number;
  readonly ino: number;
}

interface Seen extends Look {
  /** When it was first seen (epoch ms). */
  readonly firstSeen: number;
  /** When it was last seen to change, or first seen (epoch ms). */
  since: number;
  /** Queued for a claim: not due again until the claim gives it back. */
  queued: boolean;
  /** How long it had waited when that was last logged (ms), so that the log says it at doubling waits. */
  logged: number;
}

export function lookOf(st: Pick<Stats, 'size' | 'mtimeMs' | 'ino'>): Look {
  return { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino };
}

export function sameLook(a: Look, b: Look): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;
}

export class Settling {
  readonly #seen = new Map<string, Seen>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #lastWake = 0;
  /** Names tracked and not queued: `stats.settling`, kept live. */
  #waiting = 0;
  #stopped = false;

  /** `onDue`: the earliest file may be due now (discover-stable.ts looks again). */
  constructor(
    readonly stableMs: number,
    private readonly limit: number,
    private readonly stats: Pick<WatcherStats, 'settling' | 'settlingLongestSeconds'>,
    private readonly onDue: () => void,
  ) {}

  /** A look at `name`: a new or changed file starts (again) its `stableMs`. False: not kept, over the limit. */
  saw(name: string, look: Look, now = Date.now()): boolean {
    const seen = this.#seen.get(name);
    if (seen) {
      if (!sameLook(seen, look)) {
        if (seen.queued) this.#count(+1);
        this.#seen.set(name, { ...seen, ...look, since: now, queued: false });
      }
    } else {
      if (this.#seen.size >= this.limit) return false;
      this.#seen.set(name, { ...look, firstSeen: now, since: now, queued: false, logged: 0 });
      this.#count(+1);
    }
    this.#wakeAt(this.#seen.get(name)!.since + this.stableMs);
    return true;
  }

  /** What it looked like when last seen; undefined when not tracked. */
  last(name: string): Look | undefined {
    return this.#seen.get(name);
  }

  /** Taken, gone, or failed: no longer watched for stability. */
  forget(name: string): void {
    const seen = this.#seen.get(name);
    if (seen && !seen.queued) this.#count(-1);
    this.#seen.delete(name);
  }

  /** Queued for a claim. */
  queued(name: string): void {
    const seen = this.#seen.get(name);
    if (!seen || seen.queued) return;
    seen.queued = true;
    this.#count(-1);
  }

  /** Its claim did not take it (it changed, or is held open): it waits `stableMs` more. */
  waitAgain(name: string, now = Date.now()): void {
    const seen = this.#seen.get(name);
    if (!seen) return;
    if (seen.queued) this.#count(+1);
    seen.since = now;
    seen.queued = false;
    this.#wakeAt(now + this.stableMs);
  }

  /** Names that have stayed the same for `stableMs` and are not queued yet. */
  due(now = Date.now()): string[] {
    const names: string[] = [];
    for (const [name, seen] of this.#seen) if (!seen.queued && now - seen.since >= this.stableMs) names.push(name);
    return names;
  }

  /** Every name tracked (a rescan looks at each again). */
  names(): string[] {
    return [...this.#seen.keys()];
  }

  /**
   * After a look at all due files: sets the counters, sets the timer for the next due file, and
   * answers the files that have waited long enough to be logged again (first at 4 × `stableMs`,
   * then at each doubling of their wait).
   */
  settle(now = Date.now()): { name: string; waitedMs: number; size: number }[] {
    let waiting = 0;
    let oldest = now;
    let next = Number.POSITIVE_INFINITY;
    const overdue: { name: string; waitedMs: number; size: number }[] = [];
    for (const [name, seen] of this.#seen) {
      if (seen.queued) continue;
      waiting++;
      oldest = Math.min(oldest, seen.firstSeen);
      next = Math.min(next, seen.since + this.stableMs);
      const waited = now - seen.firstSeen;
      if (waited >= Math.max(4 * this.stableMs, 2 * seen.logged)) {
        seen.logged = waited;
        overdue.push({ name, waitedMs: waited, size: seen.size });
      }
    }
    this.#waiting = waiting;
    this.stats.settling = waiting;
    this.stats.settlingLongestSeconds = waiting === 0 ? 0 : Math.round((now - oldest) / 100) / 10;
    this.#timerAt = Number.POSITIVE_INFINITY;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#wakeAt(next);
    return overdue;
  }

  #count(change: number): void {
    this.#waiting += change;
    this.stats.settling = this.#waiting;
  }

  /** On stop: no more looks. */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * One timer, for the earliest due file, and never sooner than a twentieth of `stableMs` after
   * the last one: files coming due close together are looked at in one go, with one pass over
   * /proc (tens of milliseconds on a busy machine) rather than one each.
   */
  #wakeAt(at: number): void {
    const when = Math.max(at, this.#lastWake + this.stableMs / 20);
    if (this.#stopped || !Number.isFinite(when) || when >= this.#timerAt) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timerAt = when;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerAt = Number.POSITIVE_INFINITY;
        this.#lastWake = Date.now();
        this.onDue();
      },
      Math.max(0, when - Date.now()) + 5,
    );
  }
}
