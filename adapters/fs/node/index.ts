/**
 * FS events from `node:fs` `watch` (inotify on Linux): one event per change, delivered in well
 * under a millisecond. It cannot tell when the kernel queue overflowed, so it declares that events
 * may be lost and the core's periodic rescan covers that.
 */
import { watch } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { FsAdapter } from '../../../src/types.ts';

export function nodeFsAdapter(): FsAdapter {
  return {
    name: 'node-fs',
    mayLoseEvents: true,
    async subscribe(dir, onEvents, onError) {
      // Deno's watch() reports a missing directory only later, as an event: check first.
      if (!(await stat(dir)).isDirectory()) throw new Error(`${dir} is not a directory`);
      const watcher = watch(dir, { persistent: true, recursive: false }, (_event, filename) => {
        if (filename === null) return onError(new Error('event without a file name'));
        onEvents([String(filename)]);
      });
      watcher.on('error', onError);
      return {
        async close() {
          watcher.close();
        },
      };
    },
  };
}
