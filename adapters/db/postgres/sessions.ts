/**
 * Which server sessions belong to which watcher process, and ending those of one that lost its
 * lease. A process frozen past its lease (SIGSTOP, a paused VM, a laptop asleep) keeps its
 * sessions, and an open transaction of theirs keeps its locks: its CREATE TABLE not yet
 * committed makes every other process's CREATE TABLE IF NOT EXISTS of that table wait, for as
 * long as it stays frozen, and with them the start of every process that comes to take its files
 * over. So each session carries its process's owner id in `application_name`, and the reaper
 * (src/watcher/dead-sessions.ts) ends the sessions of an owner that is dead or whose lease expired
 * (it may no longer commit anything; resumed, it finds its connections gone and its lease taken).
 */
import type postgres from 'postgres';

/** PostgreSQL keeps the first 63 bytes of an application_name (NAMEDATALEN - 1). */
const NAME_BYTES = 63;

/**
 * The application_name of `owner`'s sessions. An owner id is `<host>-<pid>-<random>`: its unique
 * part goes first, so that a long host name cut at 63 bytes never makes two owners' names equal.
 */
export function sessionName(owner: string | undefined): string {
  if (owner === undefined) return 'hyperwatch';
  const parts = /^(.*)-(\d+)-([0-9a-f]+)$/.exec(owner);
  const name = parts ? `hyperwatch ${parts[3]}-${parts[2]}@${parts[1]}` : `hyperwatch ${owner}`;
  // Cut on a character boundary, as the server would not.
  let out = '';
  for (const ch of name) {
    if (Buffer.byteLength(out + ch) > NAME_BYTES) break;
    out += ch;
  }
  return out;
}

/** Ends every session of `owner` but the caller's; resolves with how many were ended. */
export async function endSessionsNamed(sql: postgres.Sql, owner: string): Promise<number> {
  const rows = await sql.unsafe<{ ended: boolean }[]>(
    `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
      WHERE application_name = $1 AND pid <> pg_backend_pid()`,
    [sessionName(owner)],
  );
  return rows.filter((r) => r.ended === true).length;
}
