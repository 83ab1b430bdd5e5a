/**
 * The watcher's connection pool: opened once by the start (start-up.ts), closed by the stop
 * (handle.ts), used by every step in between.
 */
import type { DbAdapter, DbPool } from '../types.ts';

export class WatcherPool {
  #pool: DbPool | undefined;

  /** Opens the pool, sized to `maxConcurrent`, its connections tagged with `owner` (see `DbAdapter.openPool`). */
  async open(db: DbAdapter, maxConcurrent: number, owner: string): Promise<DbPool> {
    this.#pool = await db.openPool({ maxConnections: maxConcurrent, owner });
    return this.#pool;
  }

  /** Whether it was opened (it stays so once closed: the watcher is then stopping). */
  get opened(): boolean {
    return this.#pool !== undefined;
  }

  /** The pool, or undefined before it is open. */
  get ifOpen(): DbPool | undefined {
    return this.#pool;
  }

  get(): DbPool {
    const pool = this.#pool;
    if (!pool) throw new Error('the watcher has no connection pool (not started, or stopped)');
    return pool;
  }

  async close(): Promise<void> {
    await this.#pool?.close();
  }

  /**
   * Opens every pooled connection now (at start, and after a checkpoint closed them), so the next
   * file does not pay for a connection set-up. Best effort: a failure here shows up, and is
   * handled, on the file's own transaction.
   */
  async warm(maxConcurrent: number): Promise<void> {
    const pool = this.#pool;
    if (!pool) return;
    await Promise.all(Array.from({ length: maxConcurrent }, () => pool.query('SELECT 1').catch(() => {})));
  }
}
