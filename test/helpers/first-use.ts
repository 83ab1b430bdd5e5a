/**
 * What the tests of hyperd on first use share (test/scenarios/packaging/hyperd-first-use*.test.ts):
 * the build they fetch, a process started as a user starts it, and that user's environment.
 */
import { spawn } from 'node:child_process';
import process from 'node:process';
import { HYPERD_BUILDS } from '../../adapters/db/hyper/platforms.ts';
import type { Run } from './proc.ts';

export const LINUX = HYPERD_BUILDS['linux-x64'];

export interface Started {
  readonly pid: number;
  readonly done: Promise<Run>;
  output(): string;
}

/** Runs `command args` in its own process group (so a kill takes its npm and tar along). */
export function start(command: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd: string): Started {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return {
    pid: child.pid!,
    done: new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))),
    output: () => `stdout:\n${stdout}\nstderr:\n${stderr}`,
  };
}

/** The environment of a user without hyperd: HYPERD_PATH unset, `cache` as the user cache. */
export function userEnv(cache: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HYPERWATCH_CACHE_DIR: cache, NO_COLOR: '1', ...extra };
  for (const name of ['HYPERD_PATH', 'HYPERWATCH_NO_FETCH', 'HYPERWATCH_TARBALL_DIR']) if (!(name in extra)) delete env[name];
  return env;
}

/** `s` as a regular expression that matches it literally. */
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
