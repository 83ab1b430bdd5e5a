/**
 * A task's early BEGIN: sent before its files are claimed, so that its round trip (a millisecond
 * or two when idle, tens under load) runs while they are being claimed rather than after (see
 * handle.ts). It travels with the task's files, as a parameter, to their first transaction,
 * which takes it; or it is released unused when the task ends.
 */
import type { BegunTransaction } from '../types.ts';

/** `sentAt`: when BEGIN went out (`performance.now()` just before), which tells the fence slots safe to reuse (see `takeSlot`). */
export class EarlyBegin {
  #begun: BegunTransaction | undefined;

  constructor(
    begun: BegunTransaction | undefined,
    readonly sentAt: number,
  ) {
    this.#begun = begun;
  }

  take(): BegunTransaction | undefined {
    const begun = this.#begun;
    this.#begun = undefined;
    return begun;
  }

  release(): void {
    void this.take()?.release();
  }
}

/** A transaction whose BEGIN was sent early, and when. */
export interface Early {
  readonly begun: BegunTransaction;
  readonly sentAt: number;
}

/**
 * The task's early BEGIN for a transaction about to start, if still unused; released instead
 * when that transaction cannot take it (it must wait on the pool for something first).
 */
export function takeEarly(early: EarlyBegin | undefined, usable: boolean): Early | undefined {
  if (!usable) {
    early?.release();
    return undefined;
  }
  const begun = early?.take();
  return begun ? { begun, sentAt: early!.sentAt } : undefined;
}
