/**
 * For `skipDuplicateContent`: two tasks must not both ingest the same content because neither saw
 * the other's ledger row yet. A task holds the checksums of its files while it ingests them; a
 * task with one of those checksums waits, then finds the first one's row in the ledger.
 */
export class ContentGate {
  readonly #held = new Map<string, Promise<void>>();

  /**
   * Waits until no other task holds any of `checksums`, then holds them all; returns the release.
   * All are taken at once, never some while waiting for others, so two tasks cannot deadlock.
   */
  async hold(checksums: readonly string[]): Promise<() => void> {
    const wanted = [...new Set(checksums)];
    for (;;) {
      const busy = wanted.map((c) => this.#held.get(c)).filter((p): p is Promise<void> => p !== undefined);
      if (busy.length === 0) break;
      await Promise.all(busy);
    }
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    for (const c of wanted) this.#held.set(c, done);
    return () => {
      for (const c of wanted) if (this.#held.get(c) === done) this.#held.delete(c);
      release();
    };
  }
}

/** Splits `items` into the first of each key and the repeats (in order); no key → first. */
export function splitRepeats<T>(items: readonly T[], keyOf: (item: T) => string | undefined): { first: T[]; repeats: T[] } {
  const seen = new Set<string>();
  const first: T[] = [];
  const repeats: T[] = [];
  for (const item of items) {
    const key = keyOf(item);
    if (key !== undefined && seen.has(key)) repeats.push(item);
    else {
      if (key !== undefined) seen.add(key);
      first.push(item);
    }
  }
  return { first, repeats };
}
