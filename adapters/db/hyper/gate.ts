/**
 * Lets many operations run at once, or one exclusive task alone: `exclusive` waits for the running
 * operations to finish and holds new ones back until it is done (a checkpoint, for instance).
 */
export class Gate {
  #active = 0;
  #blocked: Promise<void> | undefined;
  #drained: (() => void)[] = [];
  #exclusive: Promise<unknown> = Promise.resolve();

  async run<T>(operation: () => Promise<T>): Promise<T> {
    while (this.#blocked) await this.#blocked;
    this.#active++;
    try {
      return await operation();
    } finally {
      this.#leave();
    }
  }

  /**
   * Enters now, as an operation that ends when the returned function is called (once), or
   * `undefined` when an exclusive task holds the gate or waits for it.
   */
  tryEnter(): (() => void) | undefined {
    if (this.#blocked) return undefined;
    this.#active++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#leave();
    };
  }

  #leave(): void {
    if (--this.#active === 0) for (const resolve of this.#drained.splice(0)) resolve();
  }

  exclusive<T>(task: () => Promise<T>): Promise<T> {
    const next = this.#exclusive.then(async () => {
      let release!: () => void;
      this.#blocked = new Promise<void>((resolve) => {
        release = resolve;
      });
      try {
        if (this.#active > 0) await new Promise<void>((resolve) => this.#drained.push(resolve));
        return await task();
      } finally {
        this.#blocked = undefined;
        release();
      }
    });
    this.#exclusive = next.catch(() => {});
    return next;
  }
}
