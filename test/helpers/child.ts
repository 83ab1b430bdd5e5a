/** A watcher in a child process (test/fixtures/watch-child.mjs), for tests that kill or measure it. */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DbAdapter, DbPool } from '../../src/types.ts';
import { codeRunner } from './dist.ts';
import { ROOT } from './proc.ts';

export interface WatchChild {
  readonly child: ChildProcess;
  /** Resolves once the child's initial sweep is done. */
  readonly started: Promise<void>;
  readonly exited: Promise<void>;
}

/** Starts the watcher child on `dir` → `table` in `database`; `options`: more `WatchOptions` (JSON). */
export function startWatchChild(dir: string, table: string, database: string, options: Record<string, unknown> = {}): WatchChild {
  const run = codeRunner(join(ROOT, 'test', 'fixtures', 'watch-child.mjs'));
  const child = spawn(process.execPath, [...run.args, dir, table, database, JSON.stringify(options)], {
    env: { ...process.env, ...run.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const started = new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      if (d.includes('started')) resolve();
    });
    child.once('exit', (code, signal) => reject(new Error(`child exited before starting (${code ?? signal}): ${stderr}`)));
  });
  started.catch(() => {});
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return { child, started, exited };
}

/** Peak resident memory (VmHWM, bytes) and open descriptors of a live process, on Linux. */
export function processFootprint(pid: number): { peakRss: number; fds: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
    return { peakRss: kb * 1024, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return undefined;
  }
}

/** The killed watcher's own hyperd lets go of the database a moment after the watcher is gone. */
export async function openWhenUnlocked(db: DbAdapter): Promise<DbPool> {
  for (let attempt = 1; ; attempt++) {
    try {
      const pool = await db.openPool({ maxConnections: 1 });
      await pool.query('SELECT 1');
      return pool;
    } catch (error) {
      const held =
        (error as { code?: unknown }).code === 'DATABASE_HELD' || /locked by another process/.test(String((error as Error).message));
      if (attempt >= 50 || !held) throw error;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
