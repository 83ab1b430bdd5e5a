/**
 * The files inside a transaction right now, with when each began (epoch ms): for progress
 * reports, and the count the lease row shows. Only ingest.ts puts a file in and takes it out.
 */
import type { OpenedFile } from '../protocol/files.ts';

export class ActiveFiles {
  readonly #files = new Map<OpenedFile, number>();

  begin(file: OpenedFile, startedAt: number): void {
    this.#files.set(file, startedAt);
  }

  end(file: OpenedFile): void {
    this.#files.delete(file);
  }

  get size(): number {
    return this.#files.size;
  }

  /** Name, size, bytes read so far and when its ingest began, of each. */
  list(): { name: string; size: number; bytesRead: number; startedAt: number }[] {
    return [...this.#files].map(([file, startedAt]) => ({
      name: file.name,
      size: file.size,
      bytesRead: Math.min(file.bytesRead, file.size),
      startedAt,
    }));
  }
}
