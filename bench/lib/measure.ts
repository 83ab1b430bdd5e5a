/** Clocks, summaries and process memory readings shared by the bench and its worker. */
import { readFileSync } from 'node:fs';
import process from 'node:process';

/**
 * Milliseconds on the monotonic clock (`CLOCK_MONOTONIC` on Linux): the same clock in every
 * process of the machine, so a time taken by the producer and one taken by the watcher's
 * process can be subtracted.
 */
export const now = (): number => Number(process.hrtime.bigint()) / 1e6;

export interface Summary {
  readonly min: number;
  readonly median: number;
  readonly max: number;
  readonly n: number;
}

/** One value as a summary of one run (kept as it is, even when it is not finite). */
export const single = (v: number): Summary => ({ min: v, median: v, max: v, n: 1 });

export function summarize(values: readonly number[]): Summary {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return { min: Number.NaN, median: Number.NaN, max: Number.NaN, n: 0 };
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: sorted[0]!, median, max: sorted.at(-1)!, n: sorted.length };
}

/** Nearest-rank percentile. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** A `VmXxx:` field of /proc/<pid>/status in MB (Linux), or NaN where there is none. */
export function procMemoryMb(pid: number | 'self', field: 'VmRSS' | 'VmHWM'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU time (user + system) a process has used so far, in seconds, from /proc/<pid>/stat (Linux;
 * NaN elsewhere). Clock ticks are 100 per second on Linux for every architecture Node runs on.
 */
export function procCpuSeconds(pid: number | 'self'): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak seen and the series. */
export function sampleRss(pid: number, everyMs = 100): { stop(): { peakMb: number; series: number[] } } {
  const series: number[] = [];
  const take = () => {
    const mb = procMemoryMb(pid, 'VmRSS');
    if (Number.isFinite(mb)) series.push(Math.round(mb * 10) / 10);
  };
  take();
  const timer = setInterval(take, everyMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return { peakMb: series.length ? Math.max(...series) : Number.NaN, series };
    },
  };
}
