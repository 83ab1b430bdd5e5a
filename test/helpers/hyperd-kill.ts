/**
 * The embedded hyperd killed under a running watcher (test/scenarios/crash/crash-hyperd.test.ts
 * and crash-hyperd-marker.test.ts beside it).
 */
import assert from 'node:assert/strict';
import process from 'node:process';
import type { HyperAdapter } from '../../adapters/db/hyper/index.ts';
import type { WatcherHandle } from '../../src/watcher/handle.ts';
import { waitFor } from './drop.ts';

/**
 * SIGKILLs the watcher's embedded hyperd and waits until its next connection has started another
 * one, whatever the watcher was doing at the kill (a checkpoint's farewell statements used to
 * hold every connection back for 30 s); stops the watcher when that does not come.
 */
export async function killHyperd(db: HyperAdapter, handle: WatcherHandle): Promise<void> {
  const pid = db.hyperdPid;
  assert.ok(pid);
  process.kill(pid, 'SIGKILL');
  await waitFor(() => db.hyperdPid !== undefined && db.hyperdPid !== pid, 'hyperd restarted', 30000).catch(async (error: unknown) => {
    await handle.stop().catch(() => {});
    throw error;
  });
}
