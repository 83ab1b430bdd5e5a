/**
 * Runs hyperwatch on one workload: forks the watcher's process (bench/lib/worker.ts, compiled),
 * waits until it watches, lets the producer drop files, and collects the watcher's timings with
 * the RSS of its process and of hyperd, sampled from here.
 */
import { fork } from 'node:child_process';
import process from 'node:process';
import type { WorkerJob, WorkerMessage } from './job.ts';
import { procCpuSeconds, sampleRss } from './measure.ts';

export type Done = Extract<WorkerMessage, { type: 'done' }>;

/**
 * `HYPERWATCH_BENCH_CPU_PROFILE=dir` writes a V8 CPU profile of every watcher process into `dir`
 * (open it in Chrome's DevTools): where the watcher's own time goes, apart from the producer's.
 */
const profileDir = process.env.HYPERWATCH_BENCH_CPU_PROFILE;

export interface WatchRun {
  readonly done: Done;
  /** What the producer returned: the monotonic time(s) its `.ready` file(s) appeared. */
  readonly dropped: number[];
  /** Peak RSS sampled every 50 ms: the watcher's process (its VmHWM is in `done`) and hyperd's. */
  readonly sampledPeakRssMb: number;
  readonly hyperdPeakRssMb: number;
  readonly rssSeries: number[];
  /** CPU seconds hyperd used from the drop until the watcher reported the workload done. */
  readonly hyperdCpuSeconds: number;
}

/**
 * `produce` runs once the watcher is watching and returns the drop time(s); for a backlog the
 * files are already there and `produce` is omitted (the watcher's start is the drop).
 */
export async function runWatcher(
  workerJs: string,
  job: WorkerJob,
  hyperdPid: number,
  produce?: () => Promise<number[]>,
): Promise<WatchRun> {
  const child = fork(workerJs, [JSON.stringify(job)], {
    execArgv: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const childRss = sampleRss(child.pid!, 50);
  const hyperdRss = sampleRss(hyperdPid, 50);
  const messages: WorkerMessage[] = [];
  let wake: (() => void) | undefined;
  let exited: string | undefined;
  child.on('message', (m) => {
    messages.push(m as WorkerMessage);
    wake?.();
  });
  child.once('exit', (code, signal) => {
    exited = `watcher process exited (code ${code}, signal ${signal})`;
    wake?.();
  });
  const next = async (): Promise<WorkerMessage> => {
    for (;;) {
      const m = messages.shift();
      if (m) {
        if (m.type === 'error') throw new Error(`watcher process failed: ${m.message}`);
        return m;
      }
      if (exited) throw new Error(exited);
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  };
  try {
    const ready = await next();
    if (ready.type !== 'ready') throw new Error(`unexpected message ${ready.type}`);
    const hyperdCpu = procCpuSeconds(hyperdPid);
    const dropped = produce ? await produce() : [ready.startedAt];
    const done = await next();
    const hyperdCpuSeconds = procCpuSeconds(hyperdPid) - hyperdCpu;
    if (done.type !== 'done') throw new Error(`unexpected message ${done.type}`);
    await new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
    const own = childRss.stop();
    return {
      done,
      dropped,
      sampledPeakRssMb: own.peakMb,
      hyperdPeakRssMb: hyperdRss.stop().peakMb,
      rssSeries: own.series,
      hyperdCpuSeconds,
    };
  } finally {
    childRss.stop();
    hyperdRss.stop();
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}
