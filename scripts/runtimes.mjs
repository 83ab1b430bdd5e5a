/**
 * Finds the Deno and Bun executables that the npm packages `deno` and `bun` (devDependencies)
 * installed, without relying on their install scripts. Used by scripts/test-runtimes.mjs and by
 * the tests that run something under each runtime (README examples, `deno publish --dry-run`).
 *
 * Where a binary comes from, first match wins:
 *   1. DENO_BIN / BUN_BIN (a path to the executable);
 *   2. the platform package next to `deno` / `bun` in node_modules (`@deno/linux-x64-glibc/deno`,
 *      `@oven/bun-linux-x64/bin/bun`, ...): npm installs those as optional dependencies and they
 *      hold the real binary, install scripts or not;
 *   3. what the install scripts leave when they did run: `deno/deno`, `bun/bin/bun.exe` (bun's
 *      postinstall moves its binary there; before that, bun.exe is a shell script that only prints
 *      an error, so it is accepted only if it is an ELF/Mach-O/PE binary).
 * Never `node_modules/.bin/deno`: that is a Node.js script that spawns the real binary, so a
 * signal sent to it (SIGINT) does not reach the program.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const RUNTIMES = ['node', 'deno', 'bun'];

/** A native executable, not the shell-script placeholder bun ships before its postinstall. */
function isNativeBinary(path) {
  try {
    if (!statSync(path).isFile()) return false;
    const fd = openSync(path, 'r');
    const head = Buffer.alloc(4);
    try {
      readSync(fd, head, 0, 4, 0);
    } finally {
      closeSync(fd);
    }
    const magic = head.readUInt32BE(0);
    return (
      magic === 0x7f454c46 || // ELF
      magic === 0xcffaedfe || // Mach-O 64-bit, little-endian
      magic === 0xcafebabe || // Mach-O universal
      head.subarray(0, 2).toString('latin1') === 'MZ' // PE
    );
  } catch {
    return false;
  }
}

function isMusl() {
  if (process.platform !== 'linux') return false;
  const report = process.report?.getReport?.();
  const shared = typeof report === 'object' && report !== null ? report.sharedObjects : undefined;
  if (Array.isArray(shared)) return shared.some((o) => o.includes('libc.musl-') || o.includes('ld-musl-'));
  return false;
}

/** Resolves `name/package.json` from node_modules (as `require` would from the project). */
function packageDir(name, from) {
  try {
    return dirname(createRequire(from).resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

function denoCandidates(modulesDir) {
  const root = join(modulesDir, '..', 'package.json');
  const exe = process.platform === 'win32' ? 'deno.exe' : 'deno';
  const target = process.platform === 'linux' ? `linux-${process.arch}-glibc` : `${process.platform}-${process.arch}`;
  const main = packageDir('deno', root);
  const platform = packageDir(`@deno/${target}`, main ? join(main, 'package.json') : root);
  return [platform && join(platform, exe), main && join(main, exe)];
}

function bunCandidates(modulesDir) {
  const root = join(modulesDir, '..', 'package.json');
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const arch = process.arch === 'arm64' ? 'aarch64' : process.arch;
  const abi = isMusl() ? '-musl' : '';
  const exe = process.platform === 'win32' ? 'bin/bun.exe' : 'bin/bun';
  const main = packageDir('bun', root);
  const from = main ? join(main, 'package.json') : root;
  const names = [`@oven/bun-${os}-${arch}${abi}`, `@oven/bun-${os}-${arch}${abi}-baseline`];
  const platform = names
    .map((n) => packageDir(n, from))
    .filter(Boolean)
    .map((d) => join(d, exe));
  return [...platform, main && join(main, 'bin', 'bun.exe')];
}

/**
 * The executable of `name` (node, deno or bun): `{ path, source }`, or `{ error }` saying where
 * it looked and how to fix it. `modulesDir` is the node_modules to search (default: the project's).
 */
export function findRuntime(name, modulesDir = join(ROOT, 'node_modules')) {
  if (name === 'node') return { path: process.execPath, source: 'the running node' };
  const variable = `${name.toUpperCase()}_BIN`;
  const fromEnv = process.env[variable];
  if (fromEnv) return existsSync(fromEnv) ? { path: fromEnv, source: variable } : { error: `${variable}=${fromEnv} does not exist` };
  const candidates = (name === 'deno' ? denoCandidates(modulesDir) : bunCandidates(modulesDir)).filter(Boolean);
  const found = candidates.find(isNativeBinary);
  if (found) return { path: found, source: found.startsWith(modulesDir) ? `node_modules/${found.slice(modulesDir.length + 1)}` : found };
  return {
    error:
      `no ${name} binary under ${modulesDir} (looked at: ${candidates.join(', ') || `no "${name}" package`}). ` +
      `Install the devDependency ("npm ci" installs ${name} and its platform package; install scripts are not needed), ` +
      `or set ${variable}.`,
  };
}

/** The first line of `<path> --version`, or undefined when it does not run. */
export function versionOf(path) {
  const run = spawnSync(path, ['--version'], { encoding: 'utf8' });
  if (run.status !== 0) return undefined;
  return run.stdout.split('\n')[0].trim();
}
