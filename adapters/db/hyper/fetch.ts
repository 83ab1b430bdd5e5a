/**
 * Fetches a pinned hyperd build with `npm pack` (so npm's own registry, proxy and auth settings
 * apply), checks the tarball against the registry's integrity and the binary against its pinned
 * size, format and SHA-256, and only then renames it to where it is looked for.
 *
 * Everything is unpacked into a folder of its own beside the destination (same filesystem), and
 * the binary is renamed into place last, in one step: a process killed half way, or two
 * processes fetching at once, never leave a partial binary where `locateHyperd` finds one.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { hyperdBinaryProblem } from './binary-check.ts';
import { platformCacheDir } from './locate.ts';
import { HYPERD_BUILDS, HYPERD_VERSION, type HyperdPlatform } from './platforms.ts';

/** The error code of a fetch that could not be done (no registry, no npm, a check failed). */
export const HYPERD_FETCH_FAILED = 'HYPERD_FETCH_FAILED';

export interface FetchHyperdOptions {
  readonly platform: HyperdPlatform;
  /** The folder for the binary; default: the user cache, where `locateHyperd` looks. */
  readonly dir?: string;
  /**
   * A folder to keep the npm tarball in and take it from next time (checked against its pinned
   * integrity first): for CI and machines that install often. Default `HYPERWATCH_TARBALL_DIR`.
   */
  readonly tarballDir?: string;
  /** Progress lines (what is fetched from where, and the outcome). */
  readonly report?: (line: string) => void;
}

export interface FetchedHyperd {
  readonly path: string;
  /** false: a checked copy was there already. */
  readonly fetched: boolean;
  readonly seconds: number;
}

function fetchError(message: string): Error {
  return Object.assign(new Error(message), { code: HYPERD_FETCH_FAILED });
}

export async function tarballIntegrity(path: string): Promise<string> {
  const hash = createHash('sha512');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `sha512-${hash.digest('base64')}`;
}

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[], options: { cwd: string; shell?: boolean }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      shell: options.shell ?? false,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The npm to run: the one running us as a lifecycle script, else `npm` on PATH. */
function npmCommand(): { command: string; prefix: string[]; shell: boolean } {
  const execPath = process.env.npm_execpath;
  const onNode = !('Deno' in globalThis) && !('Bun' in globalThis);
  if (onNode && execPath && /\.c?js$/.test(execPath)) return { command: process.execPath, prefix: [execPath], shell: false };
  // npm is npm.cmd on Windows, which Node starts only through a shell; the arguments are fixed
  // words (the output goes to the working directory), so nothing needs quoting.
  return { command: 'npm', prefix: [], shell: process.platform === 'win32' };
}

/** npm's reason for a failed run: the code and summary of its `--json` error, else its last error line. */
function npmReason(ran: Ran): string {
  try {
    const { error } = JSON.parse(ran.stdout) as { error?: { code?: string; summary?: string } };
    if (error?.summary) return `${error.code ? `${error.code}: ` : ''}${error.summary.split('\n')[0]}`;
  } catch {
    // not JSON: fall back to stderr
  }
  const lines = ran.stderr.split('\n').filter((l) => /npm (error|ERR!)/.test(l) && !/complete log/.test(l));
  return lines.slice(0, 2).join(' / ') || `exit code ${ran.code}`;
}

/** What to do where the registry cannot be reached. */
export function noRegistryMessage(platform: HyperdPlatform, reason: string): string {
  const { file } = HYPERD_BUILDS[platform];
  return (
    `could not fetch hyperd for ${platform} from the npm registry (${reason}). ` +
    `If this machine has no registry to fetch from (offline, or a registry mirror without this package): ` +
    `on a machine that has one run "npx hyperwatch install-hyperd --platform ${platform} --dir <folder>", copy <folder>/${file} here ` +
    `and set HYPERD_PATH to it; or set HYPERD_PATH to the hyperd of a Tableau Hyper API install ` +
    `(.../tableauhyperapi/bin/hyper/${file}); or point npm at a registry that has ${HYPERD_BUILDS[platform].package} ` +
    `(npm_config_registry); ` +
    `or connect to a running hyperd with --endpoint host:port.`
  );
}

/** `npm pack <package>@<version>` into `dir`: the tarball's path. */
async function npmPack(platform: HyperdPlatform, dir: string): Promise<string> {
  const spec = `${HYPERD_BUILDS[platform].package}@${HYPERD_VERSION}`;
  const npm = npmCommand();
  let ran: Ran;
  try {
    ran = await run(npm.command, [...npm.prefix, 'pack', spec, '--json'], { cwd: dir, shell: npm.shell });
  } catch (error) {
    const reason =
      (error as { code?: unknown }).code === 'ENOENT' ? 'npm was not found on PATH; hyperd is fetched with "npm pack"' : String(error);
    throw fetchError(noRegistryMessage(platform, reason));
  }
  if (ran.code !== 0) throw fetchError(noRegistryMessage(platform, `npm pack ${spec}: ${npmReason(ran)}`));
  const [packed] = JSON.parse(ran.stdout) as { filename: string }[];
  if (!packed) throw fetchError(`npm pack ${spec} printed no tarball: ${ran.stdout.slice(0, 200)}`);
  return join(dir, packed.filename);
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM';
  }
}

const WORK_PREFIX = '.fetch-';

/** A work folder in `dir`, named after our pid; those of processes that died half way go first. */
async function workDir(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  for (const name of await readdir(dir)) {
    const pid = Number(new RegExp(`^\\${WORK_PREFIX}(\\d+)-`).exec(name)?.[1]);
    if (pid && pid !== process.pid && !isAlive(pid)) await rm(join(dir, name), { recursive: true, force: true });
  }
  return mkdtemp(join(dir, `${WORK_PREFIX}${process.pid}-`));
}

/** Moves `from` onto `to` in one step; a `to` that is busy (a running .exe on Windows) stays if it is right. */
async function renameInto(from: string, to: string, platform: HyperdPlatform): Promise<void> {
  try {
    await rename(from, to);
  } catch (error) {
    if ((await exists(to)) && !(await hyperdBinaryProblem(to, platform))) return;
    throw error;
  }
}

/**
 * Installs the hyperd of `platform` from its npm tarball into `dir`, after checking the tarball's
 * integrity and the binary: the installed binary's path.
 */
export async function installFromTarball(tarball: string, platform: HyperdPlatform, dir: string): Promise<string> {
  const build = HYPERD_BUILDS[platform];
  const integrity = await tarballIntegrity(tarball);
  if (integrity !== build.integrity)
    throw fetchError(
      `${tarball} is not ${build.package}@${HYPERD_VERSION} as published: its integrity is ${integrity}, the registry's ${build.integrity}`,
    );
  const work = await workDir(dir);
  try {
    const extracted = await run('tar', ['-xzf', tarball, '-C', work, build.entry, 'package/LICENSE-HYPERD'], { cwd: work }).catch(
      (error: unknown) => {
        throw fetchError(`could not run tar to unpack ${tarball} (${String(error)})`);
      },
    );
    if (extracted.code !== 0) throw fetchError(`tar could not unpack ${build.entry} from ${tarball}: ${extracted.stderr.trim()}`);
    const binary = join(work, build.entry);
    const problem = await hyperdBinaryProblem(binary, platform);
    if (problem) throw fetchError(`the hyperd unpacked from ${build.package}@${HYPERD_VERSION} fails its check: ${problem}`);
    await rename(join(work, 'package', 'LICENSE-HYPERD'), join(dir, 'LICENSE-HYPERD')).catch(() => {});
    // Last, and in one step: from here on the binary is found, and it is whole.
    const target = join(dir, build.file);
    await renameInto(binary, target, platform);
    return target;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The tarball, from `keep` when a right one is there, else packed into `work` (and copied to `keep`); `say` tells which. */
async function obtainTarball(
  platform: HyperdPlatform,
  work: string,
  keep: string | undefined,
  say: (line: string) => void,
): Promise<string> {
  const build = HYPERD_BUILDS[platform];
  const name = `${build.package}-${HYPERD_VERSION}.tgz`;
  if (keep && (await exists(join(keep, name)))) {
    if ((await tarballIntegrity(join(keep, name))) === build.integrity) {
      say(`installing hyperd ${HYPERD_VERSION} for ${platform} from the ${build.package}@${HYPERD_VERSION} tarball kept in ${keep}`);
      return join(keep, name);
    }
    await rm(join(keep, name), { force: true });
  }
  const megabytes = Math.round(build.tarballBytes / 1e6);
  say(`fetching hyperd ${HYPERD_VERSION} for ${platform} (${build.package}@${HYPERD_VERSION}, ${megabytes} MB) from the npm registry`);
  const packed = await npmPack(platform, work);
  if (keep && (await tarballIntegrity(packed)) === build.integrity) {
    await mkdir(keep, { recursive: true });
    const temp = join(keep, `.${name}.${process.pid}.part`);
    await copyFile(packed, temp);
    await rename(temp, join(keep, name));
  }
  return packed;
}

const inFlight = new Map<string, Promise<FetchedHyperd>>();

/**
 * Puts the checked hyperd of `platform` into `dir` (default: the user cache), fetching it from
 * the npm registry unless a checked copy is there already. Concurrent calls in one process share
 * one fetch; other processes may fetch at the same time (each renames a whole, checked binary).
 *
 * @example
 * const { path } = await fetchHyperd({ platform: 'darwin-arm64', dir: './hyperd-macos' });
 */
export function fetchHyperd(options: FetchHyperdOptions): Promise<FetchedHyperd> {
  const dir = options.dir ?? platformCacheDir(options.platform);
  const target = join(dir, HYPERD_BUILDS[options.platform].file);
  let pending = inFlight.get(target);
  if (!pending) {
    pending = fetchInto(dir, target, options).finally(() => inFlight.delete(target));
    inFlight.set(target, pending);
  }
  return pending;
}

async function fetchInto(dir: string, target: string, options: FetchHyperdOptions): Promise<FetchedHyperd> {
  const { platform } = options;
  const report = options.report ?? (() => {});
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 100) / 10;
  if (await exists(target)) {
    const problem = await hyperdBinaryProblem(target, platform);
    if (!problem) return { path: target, fetched: false, seconds: seconds() };
    report(`replacing ${target}: ${problem}`);
  }
  const work = await workDir(dir);
  try {
    const tarball = await obtainTarball(platform, work, options.tarballDir ?? (process.env.HYPERWATCH_TARBALL_DIR || undefined), (line) =>
      report(`${line} into ${dir}`),
    );
    const path = await installFromTarball(tarball, platform, dir);
    report(
      `hyperd ${HYPERD_VERSION} for ${platform} is at ${path} (tarball integrity, size, SHA-256 and file format checked; ${seconds()} s)`,
    );
    return { path, fetched: true, seconds: seconds() };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
