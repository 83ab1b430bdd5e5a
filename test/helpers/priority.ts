/**
 * A process that a test starts in a session of its own keeps the test's CPU priority.
 *
 * `npm test` runs the files that time themselves at normal priority and the others beside them at
 * a low one (scripts/test.mjs, LOW_PRIORITY). A child inherits its parent's nice value, but on Linux a
 * new session (setsid: pg_ctl's postmaster, a `detached` child) is also a new autogroup, and the
 * scheduler shares the CPU between autogroups as equals, whatever the nice values inside them. So
 * each such process gets its autogroup's nice set to the test's own, or a low-priority file's
 * PostgreSQL would compete as an equal with the files that time themselves.
 */
import { writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import process from 'node:process';

/**
 * Gives the autogroup of `pid` (a process in a session of its own) this process's nice value,
 * when that is lowered. Best effort: a kernel without autogroups, another OS, or no permission
 * to write it leaves the priority as it was, which costs the timed files some of their margin
 * (the Arrow conformance's worst loop gap was 870 ms of its 1 s bound without it, 490 ms with it).
 */
export function keepPriority(pid: number | undefined): void {
  if (pid === undefined || process.platform !== 'linux') return;
  let nice: number;
  try {
    nice = getPriority();
  } catch {
    return;
  }
  if (nice <= 0) return;
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // Not there (CONFIG_SCHED_AUTOGROUP off) or not allowed: see above.
  }
}
