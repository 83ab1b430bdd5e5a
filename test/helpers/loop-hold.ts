/**
 * How long work held the event loop, and how much the process grew meanwhile: the bound the
 * conformance files put on every load (no case may hold the loop for a second, or grow the process
 * by 512 MiB).
 *
 * A 10 ms timer ticks while the work runs; between two ticks the loop was held for as long as the
 * main thread ran. That is measured as the thread's own CPU time over the gap (Linux:
 * /proc/self/task/<pid>/schedstat, in nanoseconds), not as the gap's wall-clock length: the wall
 * clock also counts the time the machine gave to other processes, so beside other test files on 2
 * cores a 370 ms hold read as a second or more, and the files had to run with nothing beside them.
 * Where the thread's own time cannot be read, the whole process's CPU time stands in (all threads:
 * never less than the main thread's). The wall-clock gap is kept too, for the report.
 */
import { readFileSync } from 'node:fs';

/** The main thread's CPU time in ms, or undefined where /proc does not give it. */
function threadCpuMs(path: string | undefined): number | undefined {
  if (path === undefined) return undefined;
  try {
    return Number(readFileSync(path, 'latin1').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}

function schedstatPath(): string | undefined {
  const path = `/proc/self/task/${process.pid}/schedstat`;
  return threadCpuMs(path) === undefined ? undefined : path;
}

/** The process's CPU time in ms, all threads (user and system). */
function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

export interface Hold {
  /** The longest the main thread ran between two ticks of the timer: how long the loop was held. */
  readonly heldMs: number;
  /** The longest wall-clock gap between two ticks (the hold, plus any time other processes had the CPU). */
  readonly gapMs: number;
  /** Peak RSS over the start, in bytes. */
  readonly growth: number;
}

/** Starts watching; the function returned stops and tells the longest hold, gap and growth. */
export function holdProbe(): () => Hold {
  const path = schedstatPath();
  const cpu = (): number => threadCpuMs(path) ?? processCpuMs();
  const start = process.memoryUsage().rss;
  let peak = start;
  let lastWall = performance.now();
  let lastCpu = cpu();
  let held = 0;
  let gap = 0;
  const sample = (): void => {
    const wall = performance.now();
    const now = cpu();
    gap = Math.max(gap, wall - lastWall);
    held = Math.max(held, now - lastCpu);
    lastWall = wall;
    lastCpu = now;
    peak = Math.max(peak, process.memoryUsage().rss);
  };
  const timer = setInterval(sample, 10);
  return () => {
    clearInterval(timer);
    sample();
    return { heldMs: held, gapMs: gap, growth: peak - start };
  };
}
