/**
 * The bearer token of `hyperwatch serve` when the config names none: made once, kept in a file
 * only the service's user can read, and found there again by `hyperwatch status`.
 *
 * Where: `$XDG_STATE_HOME/hyperwatch/serve.token` (default `~/.local/state/hyperwatch/`), or
 * `http.tokenFile`. A per-user state folder rather than next to the config, because
 * - the config's folder is often shared or not writable by the service (a checked-in project
 *   folder, `/etc/hyperwatch` owned by root), and a secret in a shared folder is one `chmod` away
 *   from being readable;
 * - `hyperwatch status` does not know where the config is, but it knows its own user: run as the
 *   service's user it finds the token without flags, run as anyone else it cannot read it, which
 *   is the point.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, lstatSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import process from 'node:process';

export const TOKEN_FILE_NAME = 'serve.token';
const MIN_TOKEN = 16;

/** The token file `serve` makes and `status` reads when nothing else names one. */
export function defaultTokenFile(env: Record<string, string | undefined> = process.env): string {
  const state = env.XDG_STATE_HOME || (process.platform === 'win32' && env.LOCALAPPDATA) || join(homedir(), '.local', 'state');
  return join(state, 'hyperwatch', TOKEN_FILE_NAME);
}

export class TokenFileError extends Error {
  readonly code = 'CONFIG_INVALID';
}

/**
 * The token in `path`, or undefined when there is no such file. Refuses a file others may read
 * or that another user owns (as ssh does with its keys): its token is no secret any more.
 */
export function readTokenFile(path: string): string | undefined {
  let mode: number;
  let uid: number;
  try {
    ({ mode, uid } = lstatSync(path));
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw new TokenFileError(`the token file ${path} cannot be read (${String((error as { code?: unknown }).code ?? error)})`);
  }
  if (process.platform !== 'win32') {
    if ((mode & 0o170000) !== 0o100000)
      throw new TokenFileError(`the token file ${path} is not a regular file. Fix: remove it; serve makes a new one`);
    if ((mode & 0o077) !== 0)
      throw new TokenFileError(
        `the token file ${path} may be read by other users (mode ${(mode & 0o777).toString(8)}). Fix: remove it (serve ` +
          `makes a new one), or chmod 600 it if nobody else has read it`,
      );
    if (process.getuid && uid !== process.getuid())
      throw new TokenFileError(`the token file ${path} belongs to another user (uid ${uid}). Fix: remove it, or run as its owner`);
  }
  const token = readFileSync(path, 'utf8').trim();
  if (token.length < MIN_TOKEN)
    throw new TokenFileError(`the token file ${path} holds fewer than ${MIN_TOKEN} characters. Fix: remove it; serve makes a new one`);
  return token;
}

/**
 * The token in `path`, made first if there is none: 32 random bytes, base64url. Written to a
 * private temporary file and linked into place, so the file never exists with another mode or
 * half written, and two services starting at once end up with the same token.
 */
export function loadOrCreateToken(path: string): { token: string; created: boolean } {
  const existing = readTokenFile(path);
  if (existing !== undefined) return { token: existing, created: false };
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  // One in 64 base64url tokens starts with '-', which `hyperwatch status --token <token>` reads as
  // a flag (parseArgs refuses it): drawn again, so that the token can be passed as written.
  let token: string;
  do token = randomBytes(32).toString('base64url');
  while (token.startsWith('-'));
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${token}\n`, { mode: 0o600, flag: 'wx' });
  try {
    chmodSync(temp, 0o600); // the mode above is before the umask, which can only take bits away
    linkSync(temp, path);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'EEXIST') throw error;
    // Another serve made it first: use theirs.
    return { token: readTokenFile(path)!, created: false };
  } finally {
    unlinkSync(temp);
  }
  return { token, created: true };
}
