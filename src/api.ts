/**
 * The public entry points: `startWatching` and `stopWatching`. The adapters and plugins they use
 * come from the composition root (compose.ts).
 */
import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { csvDialectOf, defaultFsAdapter, jsonDialectOf, watcherDb, watcherPlugins } from './compose.ts';
import { resolveOptions, WatchConfigError, type WatchOptions } from './options.ts';
import { defaultRegistry, type WatcherRegistry } from './registry.ts';
import { parseTableName } from './columns/sql.ts';
import { linkWaitingFor, type WatcherStats } from './observe/stats.ts';
import type { TableName } from './types.ts';
import { archiveDirProblem } from './watcher/archive.ts';
import { WatcherHandle, type WatchSummary } from './watcher/handle.ts';

export { WatchConfigError };

async function realDirectory(dir: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(dir);
  } catch {
    throw new WatchConfigError(`directory ${JSON.stringify(dir)} does not exist`);
  }
  if (!(await stat(real)).isDirectory()) throw new WatchConfigError(`${JSON.stringify(dir)} is not a directory`);
  return real;
}

function tableOf(table: string | TableName): TableName {
  if (typeof table !== 'string') return table;
  const parsed = parseTableName(table);
  if (parsed.isErr()) throw new WatchConfigError(parsed.error);
  return parsed.value;
}

/**
 * Starts watching `dir` and appending its ready files to `table`, and returns the watcher once
 * its initial sweep is done.
 */
export async function openWatcher(dir: string, table: string | TableName, options: WatchOptions = {}): Promise<WatcherHandle> {
  // Every setting is checked here (a bad one: WatchConfigError naming it), before anything starts.
  const resolved = resolveOptions(options);
  const target = tableOf(table);
  const plugins = watcherPlugins(options.plugins ?? [], {
    compression: resolved.compression,
    maxDecompressedBytes: resolved.maxDecompressedBytes,
    csv: csvDialectOf(options),
    json: jsonDialectOf(options),
    encoding: options.encoding,
  });
  const real = await realDirectory(dir);
  const archiveProblem = resolved.onSuccess === 'archive' ? archiveDirProblem(real, resolved.archiveDir) : undefined;
  if (archiveProblem) throw new WatchConfigError(`${archiveProblem}; give a folder of its own, e.g. ${JSON.stringify('archive')}`);
  const registry = options.registry ?? defaultRegistry;
  registry.reserve(real);
  const { db, owned: ownsDb } = watcherDb(options, resolved.logger, real);
  const handle = new WatcherHandle({
    dir: real,
    table: target,
    db,
    ownsDb,
    fs: options.fs ?? defaultFsAdapter(),
    plugins,
    options: resolved,
    onStopped: () => registry.remove(real),
  });
  linkWaitingFor(handle.stats, db.waitingFor?.bind(db));
  const started = handle.start();
  const { signal } = options;
  const onAbort = () => void handle.stop();
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  void handle.whenStopped().then(() => signal?.removeEventListener('abort', onAbort));
  try {
    await started;
    // Stopping (aborted while starting) it stays listed until stopped, as after any stop();
    // already stopped, its removal has come and gone.
    registry.settle(real, handle.summary().stoppedAt === null ? handle : undefined);
    return handle;
  } catch (error) {
    registry.settle(real);
    await handle.stop().catch(() => {});
    if (ownsDb) await db.close().catch(() => {});
    throw error;
  }
}

/**
 * Begins watching `dir`: builds a dedicated connection pool, finishes files an earlier run left
 * claimed, subscribes to filesystem events, runs the initial sweep and returns its stats.
 * The watcher keeps running until `stopWatching(dir)`.
 *
 * @example
 * import { startWatching, stopWatching } from 'hyperwatch';
 * const sweep = await startWatching('./inbox', 'events', { database: './events.hyper' });
 * console.log(`initial sweep ingested ${sweep.filesIngested} files`);
 * // ... later
 * const summary = await stopWatching('./inbox');
 */
export async function startWatching(dir: string, table: string | TableName, options: WatchOptions = {}): Promise<WatcherStats> {
  const handle = await openWatcher(dir, table, options);
  return { ...handle.stats };
}

/** Looks a watcher up by the path it was started with, or any path to the same directory. */
export async function findWatcher(dir: string, registry: WatcherRegistry = defaultRegistry): Promise<WatcherHandle | undefined> {
  const real = await realpath(dir).catch(() => resolve(dir));
  return registry.get(real) ?? registry.list().find((w) => w.dir === resolve(dir));
}

/** Stops watching `dir` (finishing in-flight files) and returns a summary with the final stats. */
export async function stopWatching(dir: string, options: { registry?: WatcherRegistry } = {}): Promise<WatchSummary> {
  const handle = await findWatcher(dir, options.registry);
  if (!handle) throw new WatchConfigError(`${JSON.stringify(dir)} is not being watched`);
  return handle.stop();
}
