/**
 * Every filesystem race of the protocol is decided here: which errors mean "already gone", how a
 * producer's file is claimed without following links, and how failures are moved without ever
 * overwriting an earlier one. node:fs is the one file API Node, Deno and Bun all implement.
 *
 * The per-file metadata calls (rename, open, fstat, lstat, unlink, close) and the reads of small
 * files are synchronous on purpose. Each takes microseconds on a local disk, while the same call
 * through libuv's thread pool costs about five times the CPU (2,000 claims: 0.18-0.23 s of CPU
 * synchronous, 1.1-1.3 s through `fs/promises`, measured here), and a flood of small files is
 * bound by exactly that CPU on a small machine. Large reads stay asynchronous (`OpenedFile.read`
 * beyond `SYNC_READ_BYTES`), so a big file never holds the event loop.
 */
import {
  closeSync,
  constants,
  copyFileSync,
  fstatSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  read as readCallback,
  readSync,
  renameSync,
  type Stats,
  unlinkSync,
} from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClaimedFile } from '../types.ts';

/** True for errors that mean the path is not there (any more): the race was lost, not a fault. */
export function isGone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if (!isGone(error)) throw error;
  }
}

/** Renames, answering false when the source was already gone. */
export function renameIfPresent(from: string, to: string): boolean {
  try {
    renameSync(from, to);
    return true;
  } catch (error) {
    if (isGone(error)) return false;
    throw error;
  }
}

export function exists(path: string): boolean {
  try {
    // No exception for a missing path: building one costs more than the system call.
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch (error) {
    if (isGone(error)) return false; // ENOTDIR
    throw error;
  }
}

/**
 * Makes the folder a `recursive` name's target sits in (`failed/a/b/` for `a/b/x.csv`); nothing
 * to do, and no system call, for a name of the watched directory itself.
 */
export function ensureParentOf(root: string, name: string): void {
  const slash = name.lastIndexOf('/');
  if (slash > 0) mkdirSync(join(root, name.slice(0, slash)), { recursive: true });
}

export async function ensureDir(path: string, mode?: number): Promise<void> {
  await mkdir(path, { recursive: true, ...(mode === undefined ? {} : { mode }) });
}

/** Chunk size for streaming a claimed file: large chunks make COPY much faster than 64 KB ones. */
export const READ_CHUNK = 1 << 20;

/**
 * Reads up to this size are synchronous, and a file up to this size is read whole once and kept
 * until it is closed (its checksum, its scan and its header all need it). With at most 512 claims
 * open, that is 32 MiB at the very most.
 */
export const SYNC_READ_BYTES = 64 << 10;

function readAt(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    readCallback(fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))),
  );
}

/** A claimed file read through the descriptor opened at claim time. */
export class OpenedFile implements ClaimedFile {
  constructor(
    readonly fd: number,
    readonly name: string,
    readonly extension: string,
    readonly claimId: string,
    readonly stagedPath: string,
    readonly size: number,
    readonly mtimeMs: number,
  ) {}

  /** Bytes handed out by `read` so far (progress reports; may pass `size` if ranges are re-read). */
  bytesRead = 0;

  /** SHA-256 of the content (hex), once the watcher computed it; see src/util/checksum.ts. */
  checksum: string | undefined = undefined;

  /** The whole content of a small file, read on first use (see `SYNC_READ_BYTES`). */
  #content: Uint8Array | undefined;
  #closed = false;

  async read(position: number, length: number): Promise<Uint8Array> {
    const bytes =
      this.readNow(position, length) ?? (await this.#fill(new Uint8Array(Math.max(0, Math.min(length, this.size - position))), position));
    this.bytesRead += bytes.length;
    return bytes;
  }

  /**
   * The bytes at once when the file is small (read whole on first use, kept for later reads);
   * undefined for a large file. Not counted in `bytesRead`.
   */
  readNow(position: number, length: number): Uint8Array | undefined {
    if (this.size > SYNC_READ_BYTES) return undefined;
    if (!this.#content) {
      this.#open();
      const buffer = new Uint8Array(this.size);
      let filled = 0;
      while (filled < buffer.length) {
        const n = readSync(this.fd, buffer, filled, buffer.length - filled, filled);
        if (n === 0) break;
        filled += n;
      }
      this.#content = filled === buffer.length ? buffer : buffer.subarray(0, filled);
    }
    const start = Math.min(Math.max(0, position), this.#content.length);
    return this.#content.subarray(start, Math.min(this.#content.length, start + Math.max(0, length)));
  }

  async readInto(buffer: Uint8Array, position: number): Promise<Uint8Array> {
    const bytes = this.readNow(position, buffer.length) ?? (await this.#fill(buffer, position));
    this.bytesRead += bytes.length;
    return bytes;
  }

  /**
   * Reads into `buffer` through the thread pool (the part filled), for large files; not counted
   * in `bytesRead` (checksums).
   */
  readIntoUncounted(buffer: Uint8Array, position: number): Promise<Uint8Array> {
    return this.#fill(buffer, position);
  }

  /** Fills `buffer` (up to the file's end) from `position`; the part filled. */
  async #fill(buffer: Uint8Array, position: number): Promise<Uint8Array> {
    const want = Math.max(0, Math.min(buffer.length, this.size - position));
    let filled = 0;
    while (filled < want) {
      this.#open();
      const bytesRead = await readAt(this.fd, buffer, filled, want - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return filled === buffer.length ? buffer : buffer.subarray(0, filled);
  }

  async *stream(options: { start?: number; end?: number } = {}): AsyncIterable<Uint8Array> {
    let position = options.start ?? 0;
    const end = Math.min(options.end ?? this.size, this.size);
    while (position < end) {
      // A fresh buffer per chunk: the consumer may still hold the previous one (socket writes).
      const chunk = await this.read(position, Math.min(READ_CHUNK, end - position));
      if (chunk.length === 0) return;
      position += chunk.length;
      yield chunk;
    }
  }

  /** Size or mtime changed since the claim: the producer is still writing through an old descriptor. */
  changedSinceClaim(): string | undefined {
    this.#open();
    const now = fstatSync(this.fd);
    if (now.size !== this.size) return `size changed from ${this.size} to ${now.size} bytes`;
    if (now.mtimeMs !== this.mtimeMs) return `modified at ${new Date(now.mtimeMs).toISOString()}, after it was claimed`;
    return undefined;
  }

  /**
   * A plain descriptor number may be given to another file once closed: a late read must fail,
   * never read that file.
   */
  #open(): void {
    if (this.#closed) throw Object.assign(new Error(`${this.name}: read after its claim was closed`), { code: 'EBADF' });
  }

  /** Closes the descriptor (once; later calls do nothing) and lets go of the cached content. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#content = undefined;
    closeQuietly(this.fd);
  }
}

export type ClaimOutcome =
  | { readonly status: 'claimed'; readonly file: OpenedFile }
  /** The data file is not there (yet): an orphan sentinel, or a name already claimed. */
  | { readonly status: 'missing' }
  /** Not a regular file, or swapped while we claimed it. `path` is where the offending entry now is. */
  | { readonly status: 'unsafe'; readonly reason: string; readonly path: string }
  | { readonly status: 'error'; readonly error: unknown };

function describeType(st: Stats): string {
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isBlockDevice() || st.isCharacterDevice()) return 'a device';
  return 'not a regular file';
}

/** O_NONBLOCK: opening a FIFO must not block waiting for a writer. */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * Claims `dir/name`: opens it without following symlinks, checks it is a regular file, and renames
 * it into the staging folder as `stagedPath`. The renamed entry must be the very inode we opened;
 * if the producer swapped the path in between, the claim is refused as unsafe. From here on the
 * watcher reads only the descriptor (or the staged path, which only it writes to).
 */
export function claimFile(dir: string, name: string, stagedPath: string, meta: { claimId: string; extension: string }): ClaimOutcome {
  const source = join(dir, name);
  let fd: number;
  try {
    fd = openSync(source, OPEN_FLAGS);
  } catch (error) {
    if (isGone(error)) return { status: 'missing' };
    const code = (error as { code?: unknown }).code;
    if (code === 'ELOOP' || code === 'EMLINK') return { status: 'unsafe', reason: 'is a symbolic link', path: source };
    if (code === 'ENXIO' || code === 'EISDIR') return { status: 'unsafe', reason: 'is not a regular file', path: source };
    return { status: 'error', error };
  }
  const refuse = (outcome: ClaimOutcome): ClaimOutcome => {
    closeQuietly(fd);
    return outcome;
  };
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return refuse({ status: 'unsafe', reason: `is ${describeType(st)}`, path: source });
    if (!renameIfPresent(source, stagedPath)) return refuse({ status: 'missing' });
    const staged = lstatSync(stagedPath);
    if (staged.ino !== st.ino || staged.dev !== st.dev)
      return refuse({ status: 'unsafe', reason: 'was replaced while it was being claimed', path: stagedPath });
    return { status: 'claimed', file: new OpenedFile(fd, name, meta.extension, meta.claimId, stagedPath, st.size, st.mtimeMs) };
  } catch (error) {
    return refuse({ status: 'error', error });
  }
}

/** Re-opens a file left in staging by an earlier run (crash recovery). */
export function reopenStaged(stagedPath: string, name: string, meta: { claimId: string; extension: string }): ClaimOutcome {
  let fd: number;
  try {
    fd = openSync(stagedPath, OPEN_FLAGS);
  } catch (error) {
    if (isGone(error)) return { status: 'missing' };
    return { status: 'unsafe', reason: 'is not a regular file', path: stagedPath };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      closeQuietly(fd);
      return { status: 'unsafe', reason: `is ${describeType(st)}`, path: stagedPath };
    }
    return { status: 'claimed', file: new OpenedFile(fd, name, meta.extension, meta.claimId, stagedPath, st.size, st.mtimeMs) };
  } catch (error) {
    closeQuietly(fd);
    return { status: 'error', error };
  }
}

/** Closing a descriptor we opened can only fail if it is already closed: nothing to undo. */
function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {}
}

/** Names in a directory; an empty list when it is gone. */
export async function listNames(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (isGone(error)) return [];
    throw error;
  }
}

/** Writes a new file, never replacing one (`wx`). */
export async function writeNewFile(path: string, data: string): Promise<void> {
  await writeFile(path, data, { flag: 'wx' });
}

/**
 * Moves `from` to `to` without ever replacing a file at `to` (a plain rename would): a hard link,
 * then the old name removed; across filesystems, an exclusive copy. `taken` when `to` holds another
 * file; `gone` when `from` is not there. A move interrupted after the link is finished the next
 * time: `to` is then the very same file, and only `from` goes.
 */
export function moveWithoutReplacing(from: string, to: string): 'moved' | 'taken' | 'gone' {
  try {
    linkSync(from, to);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (isGone(error)) return 'gone';
    if (code === 'EEXIST') {
      if (!sameFile(from, to)) return 'taken';
    } else if (code === 'EXDEV' || code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') {
      // Another filesystem, or one without hard links.
      try {
        copyFileSync(from, to, constants.COPYFILE_EXCL);
      } catch (copyError) {
        if ((copyError as { code?: unknown }).code === 'EEXIST') return 'taken';
        if (isGone(copyError)) return 'gone';
        throw copyError;
      }
    } else {
      throw error;
    }
  }
  removeIfPresent(from);
  return 'moved';
}

function sameFile(a: string, b: string): boolean {
  const x = lstatSync(a, { throwIfNoEntry: false });
  const y = lstatSync(b, { throwIfNoEntry: false });
  return x !== undefined && y !== undefined && x.ino === y.ino && x.dev === y.dev;
}
