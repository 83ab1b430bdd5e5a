/** Process helpers for lifecycle tests (Linux /proc). */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cliCommand } from './dist.ts';
import { ROOT } from './root.ts';

export { ROOT } from './root.ts';

/** Alive and not a zombie. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Pids of `hyperd` processes whose parent is `parent`. */
export function hyperdChildrenOf(parent: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      // hyperd renames its main thread to hyperdMain once it runs.
      if ((comm === 'hyperd' || comm === 'hyperdMain') && ppid === parent) found.push(Number(entry));
    } catch {
      // the process went away while we looked
    }
  }
  return found;
}

export interface Run {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the `hyperwatch` command: the build in dist/ when current, else the sources (see `cliCommand`). */
export function cli(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): { child: ChildProcess; done: Promise<Run> } {
  const child = spawn(process.execPath, [...cliCommand(), ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const done = new Promise<Run>((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

/**
 * Runs the CLI with `args` and asserts that it refused them as a usage error does: exit 2, and
 * one line on stderr that matches `message`. Returns the run for what a test checks besides.
 */
export async function usageError(args: readonly string[], message: RegExp): Promise<Run> {
  const run = await cli(args).done;
  assert.equal(run.code, 2);
  assert.match(run.stderr, message);
  assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
  return run;
}

/**
 * The JSON log lines a child has written so far, read from its stderr text: only whole lines (a
 * pipe may hand over the last one in two pieces), and lines that are not JSON (a runtime's own
 * warning) are left out rather than thrown on.
 */
export function jsonLogLines<T = { message: string; url?: string; level?: string }>(stderr: string): T[] {
  const whole = stderr.slice(0, stderr.lastIndexOf('\n') + 1);
  const parsed: T[] = [];
  for (const line of whole.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      parsed.push(JSON.parse(line) as T);
    } catch {
      // not a log line of ours
    }
  }
  return parsed;
}
