/**
 * The claimed data file, as plugins see it: the only way a plugin reads a producer's bytes.
 */
/**
 * A data file the watcher has claimed: moved into its private staging folder and opened without
 * following symlinks. Plugins read it only through this object, never through the producer's path.
 */
export interface ClaimedFile {
  /** The name the producer gave it, e.g. `orders-0001.csv`. */
  readonly name: string;
  /** The plugin extension it matched, lower-case with the dot, e.g. `.csv`. */
  readonly extension: string;
  readonly size: number;
  readonly mtimeMs: number;
  /** Unique id given at claim time; the ledger records it. */
  readonly claimId: string;
  /**
   * Path of the claimed copy inside the staging folder. Only the watcher writes there; a database
   * with `readsLocalFiles` may read it directly.
   */
  readonly stagedPath: string;
  /** The file's bytes from the descriptor opened at claim time, in large chunks. */
  stream(options?: { readonly start?: number; readonly end?: number }): AsyncIterable<Uint8Array>;
  /** Reads `length` bytes at `position` (fewer at end of file), into a buffer of its own. */
  read(position: number, length: number): Promise<Uint8Array>;
  /**
   * Reads the bytes at `position` (as many as `buffer` holds, fewer at end of file) and returns
   * them: in `buffer`, or in memory the file already holds. For a reader that is done with each
   * piece before it asks for the next, as a check that reads a whole file is: one buffer for all
   * the reads costs neither page faults nor garbage per read. The bytes returned may change at the
   * next read into the same buffer.
   */
  readInto(buffer: Uint8Array, position: number): Promise<Uint8Array>;
}
