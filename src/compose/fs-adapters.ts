/**
 * The filesystem adapters: the one a watcher uses by default on this platform and runtime, and
 * the one a name (`--fs`, a serve config's `fs`) stands for. Part of the composition root
 * (src/compose.ts).
 */
import process from 'node:process';
import { denoFsAdapter, isDenoRuntime } from '../../adapters/fs/deno/index.ts';
import { nodeFsAdapter } from '../../adapters/fs/node/index.ts';
import { parcelFsAdapter } from '../../adapters/fs/parcel/index.ts';
import { DEFAULT_POLL_INTERVAL_MS, pollFsAdapter } from '../../adapters/fs/poll/index.ts';
import type { FsAdapter } from '../types.ts';

/**
 * The FS adapter used when `WatchOptions.fs` is not given, chosen by measured event latency
 * (`npm run bench:fs`, see README): on Linux, `node:fs` `watch` delivers an event in well under a
 * millisecond on Node and Bun while @parcel/watcher batches for about 50 ms; on Deno,
 * `Deno.watchFs` (no FFI needed). Elsewhere @parcel/watcher's native backends (FSEvents,
 * ReadDirectoryChangesW). The core rescans anyway for anything an adapter may lose.
 */
export function defaultFsAdapter(): FsAdapter {
  if (isDenoRuntime()) return denoFsAdapter();
  return process.platform === 'linux' ? nodeFsAdapter() : parcelFsAdapter();
}

/** `node`, `parcel`, `deno`, `poll` or `poll:<ms>` (the CLI's `--fs`). */
export function fsAdapterByName(name: string): FsAdapter | undefined {
  if (name === 'node-fs' || name === 'node') return nodeFsAdapter();
  if (name === 'parcel') return parcelFsAdapter();
  if (name === 'deno') return isDenoRuntime() ? denoFsAdapter() : undefined;
  const poll = /^poll(?::(\d+))?$/.exec(name);
  if (poll) return pollFsAdapter({ intervalMs: poll[1] ? Number(poll[1]) : DEFAULT_POLL_INTERVAL_MS });
  return undefined;
}
