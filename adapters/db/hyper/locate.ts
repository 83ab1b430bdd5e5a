/**
 * Finds the `hyperd` binary: `HYPERD_PATH`, else the npm package that ships it, else the copy
 * `hyperwatch install-hyperd` (or the first use, see provision.ts) put in the user cache.
 *
 * The package `hyperdb-api-node-linux-x64-gnu` declares `engines: node >= 21`, so npm on Node 20
 * silently skips it as an optional dependency; the cache copy covers that case, and every other
 * platform (the packages for macOS and Windows are no dependency of ours).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { HYPERD_BUILDS, HYPERD_VERSION, type HyperdPlatform, isHyperdPlatform, noBuildMessage, runningPlatform } from './platforms.ts';

export const HYPERD_PACKAGE = HYPERD_BUILDS['linux-x64'].package;
export const HYPERD_PACKAGE_VERSION = HYPERD_VERSION;
/** Integrity of the pinned Linux x64 tarball, as the npm registry publishes it. */
export const HYPERD_PACKAGE_INTEGRITY = HYPERD_BUILDS['linux-x64'].integrity;

/** `$HYPERWATCH_CACHE_DIR`, else `$XDG_CACHE_HOME/hyperwatch`, else `~/.cache/hyperwatch`. */
export function cacheDir(): string {
  const env = process.env;
  if (env.HYPERWATCH_CACHE_DIR) return env.HYPERWATCH_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'hyperwatch');
}

/** Where the cache keeps the hyperd of `platform`: `<cache>/hyperd-0.7.3/<platform>/`. */
export function platformCacheDir(platform: HyperdPlatform): string {
  return join(cacheDir(), `hyperd-${HYPERD_VERSION}`, platform);
}

/** The running platform's hyperd in the cache (undefined where no build is published). */
export function cachedHyperdPath(): string | undefined {
  const platform = runningPlatform();
  return isHyperdPlatform(platform) ? join(platformCacheDir(platform), HYPERD_BUILDS[platform].file) : undefined;
}

/** Before there was one folder per platform, the Linux x64 binary sat in `<cache>/hyperd-0.7.3/` itself. */
function legacyCachePath(): string {
  return join(cacheDir(), `hyperd-${HYPERD_VERSION}`, 'hyperd');
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

/** A cached copy counts when it is executable and of its pinned size (a stat, not a checksum: this runs at every start). */
function isWholeCopy(path: string, platform: HyperdPlatform): boolean {
  if (!isExecutable(path)) return false;
  try {
    return statSync(path).size === HYPERD_BUILDS[platform].bytes;
  } catch {
    return false;
  }
}

function fromPackage(platform: HyperdPlatform): string | undefined {
  const build = HYPERD_BUILDS[platform];
  try {
    const require = createRequire(import.meta.url);
    const pkg = require.resolve(`${build.package}/package.json`);
    const candidate = join(dirname(pkg), build.file);
    return isExecutable(candidate) ? candidate : undefined;
  } catch {
    return undefined;
  }
}

function fromCache(platform: HyperdPlatform): string | undefined {
  const candidates = [
    join(platformCacheDir(platform), HYPERD_BUILDS[platform].file),
    ...(platform === 'linux-x64' ? [legacyCachePath()] : []),
  ];
  return candidates.find((path) => isWholeCopy(path, platform));
}

/** What to do without a hyperd on `platform`. */
export function hyperdMissingMessage(platform: string = runningPlatform()): string {
  if (!isHyperdPlatform(platform)) return `hyperd not found: ${noBuildMessage(platform)}`;
  const build = HYPERD_BUILDS[platform];
  return (
    `hyperd not found. Run "npx hyperwatch install-hyperd" (fetches ${build.package}@${HYPERD_VERSION} ` +
    `from the npm registry into ${platformCacheDir(platform)}), or set HYPERD_PATH to a hyperd binary, ` +
    `or pass an endpoint of a running hyperd.`
  );
}

/** The message for the running platform (kept for callers of the time before one per platform). */
export const HYPERD_MISSING_MESSAGE = hyperdMissingMessage();

export type HyperdLocation =
  | { ok: true; path: string; source: 'HYPERD_PATH' | 'package' | 'cache' }
  | { ok: false; message: string; explicit: boolean };

export function locateHyperd(explicit?: string): HyperdLocation {
  const fromEnv = explicit ?? process.env.HYPERD_PATH;
  if (fromEnv) {
    return isExecutable(fromEnv)
      ? { ok: true, path: fromEnv, source: 'HYPERD_PATH' }
      : { ok: false, message: `HYPERD_PATH=${fromEnv} is not an executable file.`, explicit: true };
  }
  const platform = runningPlatform();
  if (!isHyperdPlatform(platform)) return { ok: false, message: hyperdMissingMessage(platform), explicit: false };
  const pkg = fromPackage(platform);
  if (pkg) return { ok: true, path: pkg, source: 'package' };
  const cached = fromCache(platform);
  if (cached) return { ok: true, path: cached, source: 'cache' };
  return { ok: false, message: hyperdMissingMessage(platform), explicit: false };
}
