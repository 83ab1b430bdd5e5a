/**
 * The producer's side of the protocol, done right: the data is written under a temporary dot-name
 * (which watchers ignore), flushed to disk, renamed to its final name, and only then is the empty
 * `.ready` sentinel created. The directory is flushed after each rename or create, so after a
 * power loss a sentinel never exists without its complete data file. node:fs only: the same code
 * runs on Node, Deno and Bun.
 */
import { constants } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { READY_SUFFIX } from '../constants.ts';
import { exists } from '../protocol/files.ts';
import { dataNameOf, isIgnoredName, randomHex } from '../protocol/names.ts';

export class DropError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'DropError';
    this.code = code;
  }
}

export interface DropResult {
  /** The data file's final path. */
  readonly path: string;
  readonly readyPath: string;
  readonly bytes: number;
}

/** What `dropFile` writes: bytes, text (UTF-8) or a stream of chunks (large files). */
export type DropData = string | Uint8Array | AsyncIterable<Uint8Array | string>;

/**
 * Flushes a directory's entries (renames, creates) to disk. Windows cannot open a directory for
 * this; there, NTFS journals the metadata and the call is a no-op.
 */
export async function fsyncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, constants.O_RDONLY);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'EISDIR' || code === 'EPERM' || code === 'EACCES') return;
    throw error;
  }
  try {
    await handle.sync();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'EINVAL' && code !== 'EPERM' && code !== 'EBADF') throw error;
  } finally {
    await handle.close();
  }
}

/** Why `name` cannot be dropped, or undefined when it can. */
export function invalidDropName(name: string): string | undefined {
  if (name === '' || name !== basename(name) || name.includes('/') || name.includes('\\'))
    return `${JSON.stringify(name)} is not a plain file name (no directories)`;
  if (isIgnoredName(name))
    return `${JSON.stringify(name)} would be ignored by the watcher (names starting with "." or ending in ".tmp" are in-progress files)`;
  if (name.endsWith(READY_SUFFIX) || dataNameOf(name + READY_SUFFIX) === undefined)
    return `${JSON.stringify(name)} is a sentinel name; give the data file's name`;
  return undefined;
}

/** The data file or its sentinel, whichever is already at `path` (a drop the watcher has not taken). */
export function existingDrop(path: string): string | undefined {
  return [path, path + READY_SUFFIX].find((p) => exists(p));
}

/**
 * Drops `data` into the watched directory `dir` as `name`, following the protocol: temp
 * dot-name, fsync, rename to `name`, fsync the directory, create `name.ready`, fsync the directory.
 * Refuses (DropError `DROP_EXISTS`) when `name` or its sentinel is already there, which means an
 * earlier drop of that name has not been ingested yet.
 *
 * @example
 * import { dropFile } from 'hyperwatch';
 * await dropFile('./inbox', 'orders-2024-06-01.csv', 'id,amount\n1,9.50\n');
 */
export async function dropFile(dir: string, name: string, data: DropData): Promise<DropResult> {
  const invalid = invalidDropName(name);
  if (invalid) throw new DropError('DROP_NAME', `${invalid}.`);
  const path = join(dir, name);
  const readyPath = path + READY_SUFFIX;
  const taken = existingDrop(path);
  if (taken) {
    throw new DropError(
      'DROP_EXISTS',
      `${taken} already exists: an earlier drop of ${name} is not ingested yet. Wait until the watcher has taken it, or ` +
        `drop under another name.`,
    );
  }
  const temp = join(dir, `.${name}.${randomHex(6)}.tmp`);
  let bytes = 0;
  const file = await open(temp, 'wx');
  try {
    const chunks: AsyncIterable<Uint8Array | string> | Iterable<Uint8Array | string> =
      typeof data === 'string' || data instanceof Uint8Array ? [data] : data;
    for await (const chunk of chunks) {
      const buffer = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      let written = 0;
      while (written < buffer.length) written += (await file.write(buffer, written, buffer.length - written)).bytesWritten;
      bytes += buffer.length;
    }
    await file.sync();
  } catch (error) {
    await file.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw error;
  }
  await file.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw error;
  }
  await fsyncDirectory(dir);
  await (await open(readyPath, 'wx')).close();
  await fsyncDirectory(dir);
  return { path, readyPath, bytes };
}
