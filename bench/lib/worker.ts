/**
 * The watcher's own process for one workload: the bench runs hyperwatch here, apart from the
 * producer and the measurements, so its peak RSS is hyperwatch's alone. Started by `fork` with
 * the job as JSON in argv[2], run as compiled JavaScript (no TypeScript loader in the process).
 * Uses only the public API.
 */
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { createHyperAdapter, FAILED_DIR, openWatcher, STAGING_DIR, type WatchOptions } from '../../src/index.ts';
import type { WorkerJob, WorkerMessage } from './job.ts';
import { now, procCpuSeconds, procMemoryMb } from './measure.ts';

const send = (message: WorkerMessage) => new Promise<void>((resolve) => process.send!(message, () => resolve()));
/** The watcher's private folder: the first part of its staging path. */
const STATE_DIR = STAGING_DIR.split('/')[0]!;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function untilTrue(check: () => boolean | Promise<boolean>, deadline: number, everyMs: number): Promise<boolean> {
  while (!(await check())) {
    if (now() > deadline) return false;
    await sleep(everyMs);
  }
  return true;
}

/** Nothing left of the drops but failed/: staging empty, no data or sentinel in the inbox. */
/** Whether `at` holds no file at any depth (staging has a folder per process, kept while it runs). */
async function noFiles(at: string): Promise<boolean> {
  for (const e of await readdir(at, { withFileTypes: true }).catch(() => [])) {
    if (!e.isDirectory() || !(await noFiles(join(at, e.name)))) return false;
  }
  return true;
}

async function allGone(dir: string): Promise<boolean> {
  if (!(await noFiles(join(dir, STAGING_DIR)))) return false;
  const left = (await readdir(dir)).filter((n) => n !== FAILED_DIR && n !== STATE_DIR);
  return left.length === 0;
}

async function main(job: WorkerJob): Promise<void> {
  const connect = job.connect ?? 'adapter';
  const db =
    connect === 'adapter' ? createHyperAdapter({ database: job.database, endpoint: job.endpoint, sharedFilesystem: true }) : undefined;
  let readsFilesNote: string | null = null;
  const marks: Record<string, number> = {};
  const mark = (name: string) => (marks[name] ??= now());
  // Each file's time is taken when the watcher reports it through its public logger: `ingested`
  // right after the commit returned, `failed` once it is in failed/. (A poll of the stats, as
  // before, added up to its period to every figure and woke the process all the time.)
  const settledAt: number[] = [];
  // `HYPERWATCH_BENCH_TRACE=dir`: every log call, timed, as JSON lines in dir/trace-<pid>.jsonl
  // (with the watcher's debug messages): where a workload's time goes, file by file.
  const traceDir = process.env.HYPERWATCH_BENCH_TRACE;
  const trace: string[] = [];
  const record = traceDir
    ? (level: string, message: string, fields?: Record<string, unknown>) =>
        trace.push(JSON.stringify({ t: now(), level, message, ...fields }))
    : () => {};
  const logger = {
    debug: (message: string, fields?: Record<string, unknown>) => {
      if (message === 'claiming' || message === 'claimed') mark(message);
      else if (message === 'arrow: the database reads the file itself') mark('server-read');
      record('debug', message, fields);
    },
    info: (message: string, fields?: Record<string, unknown>) => {
      if (message === 'ingested') {
        const t = now();
        settledAt.push(t);
        marks.ingested ??= t;
      } else if (/reads the claimed files itself|cannot read the claimed files itself/.test(message)) readsFilesNote = message;
      record('info', message, fields);
    },
    warn: (message: string, fields?: Record<string, unknown>) => record('warn', message, fields),
    error: (message: string, fields?: Record<string, unknown>) => {
      if (message === 'failed') settledAt.push(now());
      record('error', message, fields);
    },
  };
  const startedAt = now();
  const where: WatchOptions = db
    ? { db }
    : connect === 'endpoint'
      ? { database: job.database, endpoint: job.endpoint }
      : { database: job.database };
  const handle = await openWatcher(job.dir, job.table, { ...(job.watch as WatchOptions | undefined), ...where, logger });
  const openedAt = now();
  const cpuAtReady = procCpuSeconds('self');
  await send({ type: 'ready', startedAt, openedAt, rssMb: procMemoryMb('self', 'VmRSS') });

  const deadline = now() + job.timeoutMs;
  const ok = await untilTrue(() => settledAt.length >= job.expectFiles, deadline, 5);
  const cpuSeconds = procCpuSeconds('self') - cpuAtReady;
  // Committed files leave staging after the next checkpoint; with checkpoints put off (--watch)
  // they may stay: then there is no "gone" time (NaN), which is not a failure.
  const gone = ok && (await untilTrue(() => allGone(job.dir), Math.min(deadline, now() + 30_000), 5));
  const goneAt = gone ? now() : Number.NaN;
  const peakRssMb = procMemoryMb('self', 'VmHWM');
  const idleRssMb = procMemoryMb('self', 'VmRSS');
  const { stats } = await handle.stop();
  await db?.close();
  if (traceDir) await writeFile(join(traceDir, `trace-${process.pid}.jsonl`), trace.join('\n') + '\n');
  await send({
    type: 'done',
    startedAt,
    openedAt,
    settledAt,
    goneAt,
    timedOut: !ok,
    filesIngested: stats.filesIngested,
    filesFailed: stats.filesFailed,
    rowsIngested: stats.rowsIngested,
    checkpoints: stats.checkpoints,
    lastError: stats.lastError ? `${stats.lastError.code}: ${stats.lastError.message}` : null,
    peakRssMb,
    idleRssMb,
    cpuSeconds,
    readsFilesNote,
    marks,
  });
}

// The bench went away (killed, crashed): nobody is measuring any more.
process.once('disconnect', () => process.exit(1));

main(JSON.parse(process.argv[2]!) as WorkerJob).then(
  () => process.exit(0),
  async (error: unknown) => {
    await send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    process.exit(1);
  },
);
