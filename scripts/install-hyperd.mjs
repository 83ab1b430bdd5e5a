#!/usr/bin/env node
/**
 * Makes sure a `hyperd` binary is available, fetching the pinned npm package that ships it into
 * the user's cache when npm did not install it (npm on Node 20 skips it: its `engines` says
 * node >= 21). Plain JavaScript so it runs as `postinstall` before anything is built.
 *
 *   node scripts/install-hyperd.mjs            # postinstall: never fails the install
 *   node scripts/install-hyperd.mjs --strict   # `hyperwatch install-hyperd`: exit 1 on failure
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import process from 'node:process';

// Keep in step with adapters/db/hyper/locate.ts.
const PACKAGE = 'hyperdb-api-node-linux-x64-gnu';
const VERSION = '0.7.3';
const INTEGRITY = 'sha512-EoYn8uDZVS09yc0saXXHBQRNJ+W6FO/r4qKjIXx7HcyZ8Sdnbu/Mohz+mEgqtnIQ8luMhJaxyhUFRQYt8oNhkA==';

const strict = process.argv.includes('--strict');
const log = (msg) => process.stderr.write(`hyperwatch: ${msg}\n`);

function cacheDir() {
  if (process.env.HYPERWATCH_CACHE_DIR) return process.env.HYPERWATCH_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'hyperwatch');
}

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function fromPackage() {
  try {
    const pkg = createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`);
    const candidate = join(dirname(pkg), 'hyperd');
    return executable(candidate) ? candidate : undefined;
  } catch {
    return undefined;
  }
}

function done(code, message) {
  if (message) log(message);
  process.exit(strict ? code : 0);
}

const target = join(cacheDir(), `hyperd-${VERSION}`);
const found =
  (process.env.HYPERD_PATH && executable(process.env.HYPERD_PATH) && process.env.HYPERD_PATH) ||
  fromPackage() ||
  (executable(join(target, 'hyperd')) && join(target, 'hyperd'));
if (found) done(0, strict ? `hyperd is available at ${found}` : undefined);

if (process.platform !== 'linux' || process.arch !== 'x64') {
  done(1, `hyperd is shipped for Linux x64 only; on ${process.platform}/${process.arch} set HYPERD_PATH to a hyperd binary, or use an endpoint.`);
}

log(`fetching ${PACKAGE}@${VERSION} (hyperd, about 80 MB) from the npm registry into ${target}`);
mkdirSync(cacheDir(), { recursive: true });
const work = mkdtempSync(join(cacheDir(), '.fetch-'));
try {
  // npm_execpath is set when we run as an npm lifecycle script; use that npm, else the one on PATH.
  const npm = process.env.npm_execpath;
  const [cmd, args] = npm && npm.endsWith('.js') ? [process.execPath, [npm]] : ['npm', []];
  const out = execFileSync(cmd, [...args, 'pack', `${PACKAGE}@${VERSION}`, '--json', '--pack-destination', work], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  const [info] = JSON.parse(out);
  const tarball = join(work, info.filename);
  const digest = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  if (digest !== INTEGRITY) throw new Error(`integrity mismatch for ${info.filename}: got ${digest}`);
  execFileSync('tar', ['-xzf', tarball, '-C', work, 'package/hyperd', 'package/LICENSE-HYPERD'], { stdio: 'inherit' });
  rmSync(target, { recursive: true, force: true });
  // Rename into place so a concurrent install never sees a half-written binary.
  renameSync(join(work, 'package'), target);
  done(0, `hyperd ${VERSION} installed at ${join(target, 'hyperd')}`);
} catch (error) {
  done(1, `could not fetch hyperd (${error instanceof Error ? error.message : String(error)}). Set HYPERD_PATH to a hyperd binary, or run "npx hyperwatch install-hyperd" later.`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
