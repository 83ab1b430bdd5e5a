/**
 * `include` / `exclude`: which files of the watched directory are the watcher's to take. A file
 * left out is left alone: never claimed, never failed, not counted but as `ignored`.
 */
import picomatch from 'picomatch';
import type { ResolvedOptions } from '../options.ts';

/** Whether a path relative to the watched directory (`/`-separated) is to be taken; always true without globs. */
export type Selection = (relativePath: string) => boolean;

/**
 * The globs compiled once. picomatch rather than node:path's `matchesGlob`: that one is still
 * experimental on Node 20 (it warns on first use) and not in every runtime this package runs on.
 */
export function fileSelection(options: Pick<ResolvedOptions, 'include' | 'exclude'>): Selection {
  const { include, exclude } = options;
  if (include.length === 0 && exclude.length === 0) return () => true;
  const included = include.length > 0 ? picomatch(include) : () => true;
  const excluded = exclude.length > 0 ? picomatch(exclude) : () => false;
  return (path) => included(path) && !excluded(path);
}
