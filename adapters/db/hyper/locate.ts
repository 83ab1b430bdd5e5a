/**
 * Finds the `hyperd` binary: `HYPERD_PATH`, else the npm package that ships it, else the copy
 * `hyperwatch install-hyperd` (run by this package's postinstall) put in the user's cache.
 *
 * The package `hyperdb-api-node-linux-x64-gnu` declares `engines: node >= 21`, so npm on Node 20
 * silently skips it as an optional dependency; the cache copy covers that case.
 */
import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import process from 'node:process';

export const HYPERD_PACKAGE = 'hyperdb-api-node-linux-x64-gnu';
export const HYPERD_PACKAGE_VERSION = '0.7.3';
/** Integrity of the pinned tarball, as the npm registry publishes it. */
export const HYPERD_PACKAGE_INTEGRITY =
  'sha512-EoYn8uDZVS09yc0saXXHBQRNJ+W6FO/r4qKjIXx7HcyZ8Sdnbu/Mohz+mEgqtnIQ8luMhJaxyhUFRQYt8oNhkA==';

/** `$HYPERWATCH_CACHE_DIR`, else `$XDG_CACHE_HOME/hyperwatch`, else `~/.cache/hyperwatch`. */
export function cacheDir(): string {
  const env = process.env;
  if (env.HYPERWATCH_CACHE_DIR) return env.HYPERWATCH_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'hyperwatch');
}

export function cachedHyperdPath(): string {
  return join(cacheDir(), `hyperd-${HYPERD_PACKAGE_VERSION}`, 'hyperd');
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch (error) {
    // Deno without --allow-sys: say so, rather than "hyperd not found".
    if ((error as { name?: unknown }).name === 'NotCapable') throw error;
    return false;
  }
}

function fromPackage(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const pkg = require.resolve(`${HYPERD_PACKAGE}/package.json`);
    const candidate = join(dirname(pkg), 'hyperd');
    return isExecutable(candidate) ? candidate : undefined;
  } catch {
    return undefined;
  }
}

export const HYPERD_MISSING_MESSAGE =
  `hyperd not found. Run "npx hyperwatch install-hyperd" (fetches ${HYPERD_PACKAGE}@${HYPERD_PACKAGE_VERSION} ` +
  `from the npm registry into ${cachedHyperdPath()}; Linux x64 glibc), or set HYPERD_PATH to a hyperd binary, ` +
  `or pass an endpoint of a running hyperd.`;

export type HyperdLocation = { ok: true; path: string; source: 'HYPERD_PATH' | 'package' | 'cache' } | { ok: false; message: string };

export function locateHyperd(explicit?: string): HyperdLocation {
  const fromEnv = explicit ?? process.env.HYPERD_PATH;
  if (fromEnv) {
    return isExecutable(fromEnv)
      ? { ok: true, path: fromEnv, source: 'HYPERD_PATH' }
      : { ok: false, message: `HYPERD_PATH=${fromEnv} is not an executable file.` };
  }
  const pkg = fromPackage();
  if (pkg) return { ok: true, path: pkg, source: 'package' };
  const cached = cachedHyperdPath();
  if (isExecutable(cached)) return { ok: true, path: cached, source: 'cache' };
  return { ok: false, message: HYPERD_MISSING_MESSAGE };
}
