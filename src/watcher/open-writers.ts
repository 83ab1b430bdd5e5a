/**
 * `readyWhen: 'stable'` on Linux: which files some process still holds open for writing, as
 * /proc shows it. Only the processes whose `/proc/<pid>/fd` this process may read are seen (its
 * own user's, or all of them as root); elsewhere, or when /proc is not there, none is.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { isGone } from '../protocol/files.ts';

/** O_ACCMODE of the `flags:` line of /proc/<pid>/fdinfo/<fd> (octal): O_WRONLY 1, O_RDWR 2. */
const ACCESS_MODE = 0o3;

/**
 * Of `paths` (absolute, with symbolic links resolved, as /proc writes them), those open for
 * writing in a process we can see. One pass over /proc for all of them: its cost is one readlink
 * per open descriptor on the machine, so it runs for the files about to be taken, not each look.
 */
export function heldForWriting(paths: ReadonlySet<string>): Set<string> {
  const held = new Set<string>();
  if (process.platform !== 'linux' || paths.size === 0) return held;
  let pids: string[];
  try {
    pids = readdirSync('/proc');
  } catch {
    return held;
  }
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // another user's process, or one that ended meanwhile
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      if (paths.has(target) && openForWriting(pid, fd)) held.add(target);
    }
    if (held.size === paths.size) break;
  }
  return held;
}

/**
 * A descriptor whose flags cannot be read counts as a writer (waiting longer is the safe side),
 * unless it was closed meanwhile.
 */
function openForWriting(pid: string, fd: string): boolean {
  try {
    const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'latin1'));
    return flags ? (Number.parseInt(flags[1]!, 8) & ACCESS_MODE) !== 0 : true;
  } catch (error) {
    return !isGone(error) && (error as { code?: unknown }).code !== 'ESRCH';
  }
}
