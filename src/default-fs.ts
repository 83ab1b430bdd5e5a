/**
 * The FS adapter used when `WatchOptions.fs` is not given. On Linux `node:fs` `watch` delivers an
 * event in about 0.5 ms while @parcel/watcher batches for about 50 ms (measured, see
 * BENCHMARKS.md), and the core rescans anyway for anything lost; elsewhere @parcel/watcher's
 * native backends (FSEvents, ReadDirectoryChangesW) are the better choice.
 */
import process from 'node:process';
import { nodeFsAdapter } from '../adapters/fs/node/index.ts';
import { parcelFsAdapter } from '../adapters/fs/parcel/index.ts';
import type { FsAdapter } from './types.ts';

export function defaultFsAdapter(): FsAdapter {
  return process.platform === 'linux' ? nodeFsAdapter() : parcelFsAdapter();
}

export function fsAdapterByName(name: string): FsAdapter | undefined {
  if (name === 'node-fs' || name === 'node') return nodeFsAdapter();
  if (name === 'parcel') return parcelFsAdapter();
  return undefined;
}
