/**
 * FS events from @parcel/watcher (inotify, FSEvents, ReadDirectoryChangesW). It batches events
 * (about 50 ms on Linux) and reports queue overflows as errors, on which the core rescans.
 */
import { basename, dirname, resolve } from 'node:path';
import type { FsAdapter } from '../../../src/types.ts';

export function parcelFsAdapter(): FsAdapter {
  return {
    name: 'parcel',
    mayLoseEvents: false,
    async subscribe(dir, onEvents, onError) {
      // Loaded on first use: a native addon, which Deno loads only with --allow-ffi.
      const { default: parcel } = await import('@parcel/watcher');
      const root = resolve(dir);
      const subscription = await parcel.subscribe(
        root,
        (error, events) => {
          if (error) return onError(error);
          // Recursive by design in @parcel/watcher: keep the directory's own entries only.
          const names = events.filter((e) => e.type !== 'delete' && dirname(e.path) === root).map((e) => basename(e.path));
          if (names.length > 0) onEvents(names);
        },
        { ignore: ['failed', '.hyperwatch'] },
      );
      return { close: () => subscription.unsubscribe() };
    },
  };
}
