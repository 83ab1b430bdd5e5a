/**
 * Ending the hyperd sessions of a client that is gone.
 *
 * hyperd 9.1.0 never ends a `COPY ... FROM STDIN` whose client died in the middle of it: it sees
 * the connection end, yet the statement stays active for good, and every later statement that
 * reads or writes that table (other processes' COPYs and COMMITs, COUNT(*), CREATE TABLE) waits
 * behind it. Nothing on the server side releases it (no pg_cancel_backend, no statement timeout;
 * the watchdog does not count it as a hang); a protocol CancelRequest carrying the session's
 * cancel key does: hyperd then ends the COPY when its pending read times out, 10 s after the
 * COPY's last message, or at the next 10 s tick for a cancel sent later (its log, from
 * `read_with_timeout`: `connection-cancel-async-ops`, `time limit exceeded`).
 * Only the client that opened a session knows its key, so each session of a pool writes its own
 * key into its `application_name` before it runs anything else, where it stays visible (in
 * `pg_stat_activity`) after the client is gone: the process that takes a dead one's files over
 * cancels whatever that one left running. A session cancelled this way never commits: its
 * client, which alone could send the COMMIT, is dead.
 *
 * Reading `pg_stat_activity` is a statement, and a dead process's COPYs hold hyperd's worker
 * threads (two on a 2-core host): with two of them dead, that read waits with everything else,
 * up to 27 s seen, while the COPYs they left end only after a cancel. So each process also lists
 * its sessions' keys in a file of its own, `<keys dir>/<owner>` beside the staging folder
 * (`.hyperwatch/sessions/`), rewritten as sessions open and close and removed with the last one;
 * a CancelRequest goes to hyperd's network threads, so cancelling by the file's keys needs no
 * worker thread.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { quoteLiteral } from '../../../src/columns/sql.ts';
import { within } from '../../../src/util/within.ts';
import type { Sql } from '../postgres-js/pool.ts';
import type { Endpoint } from './hyperd.ts';

/** The cancel key hyperd gave a session (BackendKeyData). */
export interface CancelKey {
  readonly pid: number;
  readonly secret: number;
}

const TAG = 'hyperwatch';

/** `hyperwatch <owner> <pid>.<secret>`: who opened the session, and how to cancel it. */
export function sessionTag(owner: string, key: CancelKey): string {
  return `${TAG} ${owner} ${key.pid >>> 0}.${key.secret >>> 0}`;
}

/** The cancel key in `tag` when it names `owner`. */
export function keyOf(tag: string, owner: string): CancelKey | undefined {
  const match = /^hyperwatch (\S+) (\d+)\.(\d+)$/.exec(tag);
  if (!match || match[1] !== owner) return undefined;
  return { pid: Number(match[2]), secret: Number(match[3]) };
}

/** The statement that tags the session it runs on. */
export function tagStatement(owner: string, key: CancelKey): string {
  return `SET application_name = ${quoteLiteral(sessionTag(owner, key))}`;
}

/**
 * Watches what the server sends on a new connection until it is ready for queries, and reports
 * the BackendKeyData it carries. The listener is attached before postgres.js attaches its own,
 * so `onKey` runs before postgres.js sends anything it had queued for this connection.
 */
export function tapCancelKey(socket: net.Socket, onKey: (key: CancelKey) => void): void {
  let buffered: Buffer = Buffer.alloc(0);
  const listen = (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    // Messages: one type byte, a 4-byte length (itself included), the body. SSL/auth replies
    // before startup all follow this framing on an unencrypted loopback connection.
    while (buffered.length >= 5) {
      const type = buffered[0];
      const length = buffered.readUInt32BE(1);
      if (buffered.length < 1 + length) return;
      if (type === 0x4b && length === 12) onKey({ pid: buffered.readUInt32BE(5), secret: buffered.readUInt32BE(9) });
      buffered = buffered.subarray(1 + length);
      if (type === 0x4b || type === 0x5a || type === 0x45) {
        // BackendKeyData, ReadyForQuery or an error: nothing more to look for.
        socket.off('data', listen);
        return;
      }
    }
  };
  socket.on('data', listen);
}

/** Each `<keys dir>/<owner>` file this process writes: the keys of its sessions open now. */
const books = new Map<string, Set<string>>();

/** Rewrites `file` with `keys` (one `pid.secret` a line), or removes it when there are none. Never throws. */
function writeKeys(file: string, keys: ReadonlySet<string>): void {
  try {
    if (keys.size === 0) {
      rmSync(file, { force: true });
      return;
    }
    mkdirSync(join(file, '..'), { recursive: true, mode: 0o700 });
    // A whole new file each time, renamed over the old one: a reader never sees half of it.
    writeFileSync(`${file}.tmp`, [...keys].join('\n') + '\n', { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  } catch {
    // The database's own list (pg_stat_activity) still has them.
  }
}

/** Lists `key` in this process's keys file `file` until `socket` closes. */
function listKey(file: string, key: CancelKey, socket: net.Socket): void {
  const entry = `${key.pid >>> 0}.${key.secret >>> 0}`;
  const keys = books.get(file) ?? new Set<string>();
  books.set(file, keys);
  keys.add(entry);
  writeKeys(file, keys);
  socket.once('close', () => {
    keys.delete(entry);
    if (keys.size === 0) books.delete(file);
    writeKeys(file, keys);
  });
}

/** The keys `<keysDir>/<owner>` lists (none when there is no such file). */
export function listedKeys(keysDir: string, owner: string): CancelKey[] {
  let text: string;
  try {
    text = readFileSync(join(keysDir, owner), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map((line) => /^(\d+)\.(\d+)$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), secret: Number(m[2]) }));
}

/** Sends a CancelRequest for `key` on a connection of its own; resolves when hyperd closes it (at most `timeoutMs`). */
export function cancelSession(endpoint: Endpoint, key: CancelKey, timeoutMs = 5000): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: endpoint.host, port: endpoint.port, noDelay: true });
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    socket.once('error', done);
    socket.once('close', done);
    socket.once('connect', () => {
      const message = Buffer.alloc(16);
      message.writeUInt32BE(16, 0);
      message.writeUInt32BE(80877102, 4);
      message.writeUInt32BE(key.pid >>> 0, 8);
      message.writeUInt32BE(key.secret >>> 0, 12);
      socket.end(message);
    });
  });
}

/** How long `endSessionsOf` waits for pg_stat_activity: a stalled hyperd answers it only once freed. */
export const ACTIVITY_READ_MS = 3000;

/**
 * Cancels every statement still running in a session that `owner` opened: first those its keys
 * file in `keysDir` lists (at once, see above), then those pg_stat_activity (read through a
 * session of `control`, closed after) lists. Returns how many sessions it cancelled.
 *
 * The read waits `readMs` at most: a server stalled by dead sessions answers it only once they
 * are ended, and while a pass for an owner runs the reaper starts no other for that owner; so
 * while a stall lasts, the keys file's cancels still go out again every few seconds.
 */
export async function endSessionsOf(
  control: Sql,
  endpoint: Endpoint,
  owner: string,
  keysDir?: string,
  readMs = ACTIVITY_READ_MS,
): Promise<number> {
  const id = (k: CancelKey) => `${k.pid >>> 0}.${k.secret >>> 0}`;
  const listed = keysDir === undefined ? [] : listedKeys(keysDir, owner);
  const cancelled = new Set(listed.map(id));
  const early = Promise.all(listed.map((k) => cancelSession(endpoint, k)));
  try {
    const read = control.unsafe<{ tag: string }[]>('SELECT application_name AS tag FROM pg_stat_activity');
    // Dropped when it comes too late: its failure (the connection ended below) is nobody's.
    read.catch(() => {});
    const rows = await within(read, readMs);
    const keys = (rows ?? []).map((r) => keyOf(r.tag, owner)).filter((k): k is CancelKey => k !== undefined && !cancelled.has(id(k)));
    for (const k of keys) cancelled.add(id(k));
    await Promise.all([early, ...keys.map((k) => cancelSession(endpoint, k))]);
    return cancelled.size;
  } finally {
    await early;
    // A read still waiting is dropped with its connection.
    await control.end({ timeout: 0 });
  }
}

/**
 * A new connection of `owner`'s pool to the endpoint: once hyperd gives it its cancel key, `run`
 * sends the tag statement, queued ahead of anything the connection runs after its start-up.
 * When the connection closes, a CancelRequest for its key ends whatever its session may still
 * run (nothing, after a clean close; a COPY cut off by a lost connection otherwise).
 */
export function keyTagged(
  socket: net.Socket,
  endpoint: Endpoint,
  owner: string,
  run: (statement: string) => { execute(): Promise<unknown> },
  keysDir?: string,
): net.Socket {
  tapCancelKey(socket, (key) => {
    if (keysDir !== undefined) listKey(join(keysDir, owner), key, socket);
    run(tagStatement(owner, key))
      .execute()
      .catch(() => {});
    socket.once('close', () => void cancelSession(endpoint, key));
  });
  return socket;
}
