/**
 * What a watcher added over HTTP may touch: its directory and its Hyper database must lie under
 * the roots the config allows, and its database server must be one the config already uses or
 * lists. Everything is checked on real paths (symlinks and `..` resolved), and the watcher is
 * then started on those real paths, so a link swapped in after the check cannot redirect it.
 *
 * Why servers are confined too: a URL is not a path, but the service connects with its own
 * network position and credentials (peer authentication over a Unix socket, ~/.pgpass, Kerberos).
 * A URL chosen by a request could point those at a server the operator never chose, or send the
 * files dropped into an allowed directory to a server the requester controls.
 */
import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import process from 'node:process';
import { DEFAULT_DATABASE } from '../../adapters/db/hyper/index.ts';
import type { WatcherConfig } from './config.ts';

/** The config's limits on watchers added over HTTP. */
export interface Confinement {
  /** Absolute directories; a watcher's dir and database must lie under one of them. */
  readonly allowedRoots: readonly string[];
  /** PostgreSQL URLs and hyperd `host:port`s a watcher may name, exactly as written. */
  readonly allowedServers: readonly string[];
}

class Refused extends Error {}

/**
 * The real path of `path`; for one that does not exist yet, the real path of its nearest existing
 * ancestor with the rest appended (what creating it would create). A dangling symlink on the way
 * is refused: creating through it would land wherever it points.
 */
export async function realPathOf(path: string): Promise<string> {
  const rest: string[] = [];
  let at = resolve(path);
  for (;;) {
    try {
      return join(await realpath(at), ...rest);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code !== 'ENOENT') throw new Refused(`${at} cannot be resolved (${String(code ?? error)})`);
      const link = await lstat(at).then(
        () => true,
        () => false,
      );
      if (link) throw new Refused(`${at} is a symbolic link to a path that does not exist`);
      const parent = dirname(at);
      if (parent === at) throw new Refused(`${path} cannot be resolved`);
      rest.unshift(basename(at));
      at = parent;
    }
  }
}

export function isUnder(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

async function underRoots(what: string, path: string, roots: readonly string[]): Promise<string> {
  const real = await realPathOf(path);
  const realRoots = await Promise.all(roots.map((r) => realPathOf(r).catch(() => undefined)));
  if (realRoots.some((root) => root !== undefined && isUnder(real, root))) return real;
  const shown = real === path ? path : `${path} (really ${real})`;
  const allowed =
    roots.length === 0
      ? 'none are allowed: set http.allowedRoots in the config'
      : `allowed: ${roots.join(', ')}; the config's http.allowedRoots widens this`;
  throw new Refused(`${what} ${shown} is outside the allowed roots (${allowed})`);
}

function checkServer(field: 'url' | 'endpoint', value: string | undefined, allowed: readonly string[]): void {
  if (value === undefined || allowed.includes(value)) return;
  throw new Refused(
    `${field} ${JSON.stringify(value)} is not a server the config uses or lists (add it to http.allowedServers to allow it)`,
  );
}

/**
 * `watcher` (paths resolved, body already valid) with its dir and database replaced by their real
 * paths; or the reason it is refused. Nothing is created either way.
 */
export async function confineWatcher(
  watcher: WatcherConfig,
  limits: Confinement,
): Promise<{ watcher: WatcherConfig } | { refused: string }> {
  try {
    checkServer('url', watcher.url, limits.allowedServers);
    checkServer('endpoint', watcher.endpoint, limits.allowedServers);
    const dir = await underRoots('dir', watcher.dir, limits.allowedRoots);
    // The archive receives the watcher's files: it must lie under the allowed roots too.
    const archived =
      watcher.archiveDir === undefined
        ? {}
        : { archiveDir: await underRoots('archiveDir', resolve(dir, watcher.archiveDir), limits.allowedRoots) };
    if (watcher.adapter === 'postgres') return { watcher: { ...watcher, dir, ...archived } };
    // The database file is checked on this machine's paths, with an endpoint too; the default
    // is resolved as the adapter resolves it (against the working directory).
    const database = await underRoots('database', watcher.database ?? resolve(process.cwd(), DEFAULT_DATABASE), limits.allowedRoots);
    return { watcher: { ...watcher, dir, database, ...archived } };
  } catch (error) {
    if (error instanceof Refused) return { refused: error.message };
    throw error;
  }
}
