/**
 * Every filesystem race of the protocol is decided here: which errors mean "already gone", how a
 * producer's file is claimed without following links, and how failures are moved without ever
 * overwriting an earlier one. node:fs is the one file API Node, Deno and Bun all implement.
 */
import { constants, type Stats } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ClaimedFile } from './types.ts';

/** True for errors that mean the path is not there (any more): the race was lost, not a fault. */
export function isGone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export async function removeIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (!isGone(error)) throw error;
  }
}

/** Renames, answering false when the source was already gone. */
export async function renameIfPresent(from: string, to: string): Promise<boolean> {
  try {
    await rename(from, to);
    return true;
  } catch (error) {
    if (isGone(error)) return false;
    throw error;
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if (isGone(error)) return false;
    throw error;
  }
}

export async function ensureDir(path: string, mode?: number): Promise<void> {
  await mkdir(path, { recursive: true, ...(mode === undefined ? {} : { mode }) });
}

/** Chunk size for streaming a claimed file: large chunks make COPY much faster than 64 KB ones. */
export const READ_CHUNK = 1 << 20;

/** A claimed file read through the descriptor opened at claim time. */
export class OpenedFile implements ClaimedFile {
  constructor(
    readonly handle: FileHandle,
    readonly name: string,
    readonly extension: string,
    readonly claimId: string,
    readonly stagedPath: string,
    readonly size: number,
    readonly mtimeMs: number,
  ) {}

  /** Bytes handed out by `read` so far (progress reports; may pass `size` if ranges are re-read). */
  bytesRead = 0;

  /** SHA-256 of the content (hex), once the watcher computed it; see src/checksum.ts. */
  checksum: string | undefined = undefined;

  async read(position: number, length: number): Promise<Uint8Array> {
    const buffer = new Uint8Array(Math.max(0, Math.min(length, this.size - position)));
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await this.handle.read(buffer, filled, buffer.length - filled, position + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    this.bytesRead += filled;
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
  async changedSinceClaim(): Promise<string | undefined> {
    const now = await this.handle.stat();
    if (now.size !== this.size) return `size changed from ${this.size} to ${now.size} bytes`;
    if (now.mtimeMs !== this.mtimeMs) return `modified at ${new Date(now.mtimeMs).toISOString()}, after it was claimed`;
    return undefined;
  }

  close(): Promise<void> {
    return this.handle.close().catch(() => {});
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
export async function claimFile(
  dir: string,
  name: string,
  stagedPath: string,
  meta: { claimId: string; extension: string },
): Promise<ClaimOutcome> {
  const source = join(dir, name);
  let handle: FileHandle;
  try {
    handle = await open(source, OPEN_FLAGS);
  } catch (error) {
    if (isGone(error)) return { status: 'missing' };
    const code = (error as { code?: unknown }).code;
    if (code === 'ELOOP' || code === 'EMLINK') return { status: 'unsafe', reason: 'is a symbolic link', path: source };
    if (code === 'ENXIO' || code === 'EISDIR') return { status: 'unsafe', reason: 'is not a regular file', path: source };
    return { status: 'error', error };
  }
  try {
    const st = await handle.stat();
    if (!st.isFile()) {
      await handle.close();
      return { status: 'unsafe', reason: `is ${describeType(st)}`, path: source };
    }
    if (!(await renameIfPresent(source, stagedPath))) {
      await handle.close();
      return { status: 'missing' };
    }
    const staged = await lstat(stagedPath);
    if (staged.ino !== st.ino || staged.dev !== st.dev) {
      await handle.close();
      return { status: 'unsafe', reason: 'was replaced while it was being claimed', path: stagedPath };
    }
    return { status: 'claimed', file: new OpenedFile(handle, name, meta.extension, meta.claimId, stagedPath, st.size, st.mtimeMs) };
  } catch (error) {
    await handle.close().catch(() => {});
    return { status: 'error', error };
  }
}

/** Re-opens a file left in staging by an earlier run (crash recovery). */
export async function reopenStaged(
  stagedPath: string,
  name: string,
  meta: { claimId: string; extension: string },
): Promise<ClaimOutcome> {
  let handle: FileHandle;
  try {
    handle = await open(stagedPath, OPEN_FLAGS);
  } catch (error) {
    if (isGone(error)) return { status: 'missing' };
    return { status: 'unsafe', reason: 'is not a regular file', path: stagedPath };
  }
  const st = await handle.stat();
  if (!st.isFile()) {
    await handle.close();
    return { status: 'unsafe', reason: `is ${describeType(st)}`, path: stagedPath };
  }
  return { status: 'claimed', file: new OpenedFile(handle, name, meta.extension, meta.claimId, stagedPath, st.size, st.mtimeMs) };
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
