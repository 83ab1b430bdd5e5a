/**
 * The watcher's life as the steps see it: whether it is stopping, and the tasks running now (a
 * file or a group, each from claim to settle; a check for dead processes). The shell (handle.ts)
 * stops it and runs the tasks; the steps only look, and sleep.
 */
export class Lifecycle {
  #stopping = false;
  /** Aborted on stop: cuts backoff sleeps short. */
  readonly #wake = new AbortController();
  readonly #tasks = new Set<Promise<void>>();

  /** `nudge`: something finished; the shell starts what may start now and wakes whoever waits for idleness. */
  constructor(readonly nudge: () => void) {}

  get stopping(): boolean {
    return this.#stopping;
  }

  /** From here on every step ends at its next look, and sleeps end at once. */
  stop(): void {
    this.#stopping = true;
    this.#wake.abort();
  }

  /** Tasks running now. */
  get running(): number {
    return this.#tasks.size;
  }

  /** The tasks running now, to wait for. */
  tasks(): Promise<void>[] {
    return [...this.#tasks];
  }

  add(task: Promise<void>): void {
    this.#tasks.add(task);
  }

  /** A task ended (called by whoever added it, before it nudges). */
  remove(task: Promise<void>): void {
    this.#tasks.delete(task);
  }

  /** Waits `ms`, or less when the watcher stops meanwhile. */
  sleep(ms: number): Promise<void> {
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
}
