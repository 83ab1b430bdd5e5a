/**
 * FS events from `Deno.watchFs` (inotify, FSEvents, ReadDirectoryChangesW through Rust's
 * `notify`), for hyperwatch running on Deno. `node:fs` `watch` also works on Deno (it is built on
 * the same call), but this adapter sees what `node:fs` hides: `notify` flags a kernel queue
 * overflow as a `rescan` event, which is passed to the core as an error, so the core rescans.
 *
 * Only usable on Deno: the factory throws elsewhere (use `nodeFsAdapter()` there).
 */
import { basename, dirname, resolve } from 'node:path';
import type { FsAdapter } from '../../../src/types.ts';

/** The part of Deno's API this adapter uses (typed here: the package is type-checked with Node types). */
interface DenoFsEvent {
  readonly kind: 'any' | 'access' | 'create' | 'modify' | 'rename' | 'remove' | 'other';
  readonly paths: readonly string[];
  readonly flag?: 'rescan';
}

interface DenoFsWatcher extends AsyncIterable<DenoFsEvent> {
  close(): void;
}

interface DenoNamespace {
  watchFs(paths: string | string[], options?: { recursive: boolean }): DenoFsWatcher;
}

function denoNamespace(): DenoNamespace | undefined {
  const deno = (globalThis as { Deno?: Partial<DenoNamespace> }).Deno;
  return typeof deno?.watchFs === 'function' ? (deno as DenoNamespace) : undefined;
}

/** True when running on Deno (where `denoFsAdapter()` can be used). */
export function isDenoRuntime(): boolean {
  return denoNamespace() !== undefined;
}

export function denoFsAdapter(): FsAdapter {
  const deno = denoNamespace();
  if (!deno) throw new Error('denoFsAdapter() needs Deno.watchFs, which only Deno has; use nodeFsAdapter() on Node.js and Bun');
  return {
    name: 'deno',
    // A kernel queue overflow arrives as a `rescan` event and is reported through onError.
    mayLoseEvents: false,
    async subscribe(dir, onEvents, onError) {
      const root = resolve(dir);
      const watcher = deno.watchFs(root, { recursive: false });
      let closed = false;
      const pump = (async () => {
        try {
          for await (const event of watcher) {
            if (event.flag === 'rescan') {
              onError(new Error(`events under ${root} were dropped (queue overflow)`));
              continue;
            }
            // A name that went away is of no interest; the core checks every name it gets anyway.
            if (event.kind === 'remove' || event.kind === 'access') continue;
            const names = event.paths.filter((p) => dirname(p) === root).map((p) => basename(p));
            if (names.length > 0) onEvents(names);
          }
          if (!closed) onError(new Error(`the watch on ${root} ended`));
        } catch (error) {
          if (!closed) onError(error);
        }
      })();
      return {
        async close() {
          if (closed) return;
          closed = true;
          try {
            watcher.close();
          } catch {
            // already closed (the directory went away)
          }
          await pump;
        },
      };
    },
  };
}
