/**
 * The workloads of many small files: the flood (1,000 files dropped at once, one bad among them),
 * the trickle (one file every 200 ms: latency per file) and the backlog (ready files present when
 * the watcher starts: sweep time and memory at two sizes).
 */
import { closeSync, openSync, renameSync } from 'node:fs';
import { mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FAILED_DIR, READY_SUFFIX } from '../../src/index.ts';
import { type BenchContext, jobFor, thin, verifyCount } from './bench-context.ts';
import { REFERENCE, SEED } from './config.ts';
import { badCsv, smallCsv } from './data.ts';
import { now, percentile, single, summarize } from './measure.ts';
import type { BacklogFigure, Figure, Latency } from './report.ts';
import { freshTable, withSession } from './server.ts';
import { runWatcher, type WatchRun } from './watch-run.ts';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The flood's `n` files of `per` rows, and one bad file in their middle (it must land alone in
 * failed/), written into `batch` with their sentinels: their names, in drop order.
 */
export async function writeFlood(batch: string, n: number, per: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i === n >> 1) {
      names.push('flood-bad.csv');
      await writeFile(join(batch, 'flood-bad.csv'), badCsv(per, SEED - 1, Math.min(per, 50)));
    }
    const name = `flood-${String(i).padStart(6, '0')}.csv`;
    names.push(name);
    await writeFile(join(batch, name), smallCsv(per, SEED + i, i * per + 1));
  }
  // The sentinels are made beforehand too, next to the data: creating a file costs ext4 an
  // inode allocation, which passes over every recently deleted inode of the block group, and
  // this bench deletes thousands a minute. Created in the inbox, 1,001 sentinels took
  // 90-350 ms (perf: find_inode_bit, recently_deleted), holding the directory's lock that
  // the watcher's claims wait on; renamed in, they take a few milliseconds.
  for (const name of names) closeSync(openSync(join(batch, name + READY_SUFFIX), 'wx'));
  return names;
}

/** Moves the flood's data files, then all its sentinels at once, into `inbox`: when the sentinels began to appear. */
export async function dropFlood(batch: string, inbox: string, names: readonly string[]): Promise<number> {
  for (const name of names) await rename(join(batch, name), join(inbox, name));
  // "Dropped at once": the sentinels are renamed in by a tight synchronous loop, not one
  // awaited call at a time, which would measure the producer's pace rather than the watcher's.
  const t0 = now();
  for (const name of names) renameSync(join(batch, name + READY_SUFFIX), join(inbox, name + READY_SUFFIX));
  return t0;
}

/** Drops `n` files of `per` rows into `inbox`, one every `every` ms (written in `outside` first): when each appeared. */
export async function dropTrickle(outside: string, inbox: string, n: number, per: number, every: number): Promise<number[]> {
  const drops: number[] = [];
  const start = now();
  for (let i = 0; i < n; i++) {
    const wait = start + i * every - now();
    if (wait > 0) await sleep(wait);
    const name = `trickle-${String(i).padStart(4, '0')}.csv`;
    await writeFile(join(outside, name), smallCsv(per, SEED + 7 * i, i * per + 1));
    await rename(join(outside, name), join(inbox, name));
    closeSync(openSync(join(outside, name + READY_SUFFIX), 'wx'));
    // The clock starts as the sentinel is renamed in, synchronously: the rename is the
    // moment it appears (creating it in place would first count ext4's inode allocation,
    // see the flood), and an awaited call would add the producer's own thread-pool round trip.
    drops.push(now());
    renameSync(join(outside, name + READY_SUFFIX), join(inbox, name + READY_SUFFIX));
  }
  return drops;
}

/** The flood, `sizes.runs` times: its figure (the references are added by the caller). */
export async function flood(ctx: BenchContext): Promise<Figure> {
  const { sizes, server, work, outside, workerJs, log } = ctx;
  const { floodFiles: n, floodRowsPerFile: per } = sizes;
  const workload = `small-file flood, ${n} × ${per} rows + 1 bad`;
  const runs: number[] = [];
  const gone: number[] = [];
  let verified = true;
  let peak = 0;
  let hyperdPeak = 0;
  for (let r = 0; r < sizes.runs; r++) {
    const table = ctx.tableName('flood');
    await withSession(server, ctx.database, (sql) => freshTable(sql, table));
    const inbox = await mkdtemp(join(work, 'inbox-'));
    const batch = await mkdtemp(join(outside, 'flood-'));
    const names = await writeFlood(batch, n, per);
    let dropMs = 0;
    const run = await runWatcher(workerJs, jobFor(ctx, inbox, table, names.length, 600_000), server.pid, async () => {
      const t0 = await dropFlood(batch, inbox, names);
      dropMs = now() - t0;
      return [t0];
    });
    const failed = await readdir(join(inbox, FAILED_DIR)).catch(() => [] as string[]);
    const isolated =
      run.done.filesFailed === 1 &&
      failed.includes('flood-bad.csv') &&
      failed.includes('flood-bad.csv.error') &&
      failed.filter((f) => !f.startsWith('flood-bad.csv')).length === 0;
    if (!isolated) log(`WRONG: failed/ holds ${JSON.stringify(failed.slice(0, 10))}, filesFailed ${run.done.filesFailed}`);
    const ok = !run.done.timedOut && isolated && (await verifyCount(ctx, table, n * per));
    verified = ok && verified;
    await rm(inbox, { recursive: true, force: true });
    await rm(batch, { recursive: true, force: true });
    const s = (run.done.settledAt.at(-1)! - run.dropped[0]!) / 1000;
    runs.push(s);
    gone.push((run.done.goneAt - run.dropped[0]!) / 1000);
    peak = Math.max(peak, run.done.peakRssMb);
    hyperdPeak = Math.max(hyperdPeak, run.hyperdPeakRssMb);
    log(
      `flood run ${r + 1}: ${s.toFixed(3)} s, ${(names.length / s).toFixed(0)} files/s, drop ${dropMs.toFixed(0)} ms, ` +
        `checkpoints ${run.done.checkpoints}, CPU s watcher ${run.done.cpuSeconds.toFixed(2)} ` +
        `hyperd ${run.hyperdCpuSeconds.toFixed(2)}${ok ? '' : ' WRONG'}`,
    );
  }
  return {
    workload,
    method: 'hyperwatch',
    kind: 'hyperwatch',
    seconds: summarize(runs),
    runs,
    goneSeconds: summarize(gone),
    rows: n * per,
    files: n + 1,
    peakRssMb: peak,
    hyperdPeakRssMb: hyperdPeak,
    verified,
    referenceSeconds: REFERENCE.floodSeconds.persistent,
  };
}

/** The trickle, `sizes.runs` times: each file's latency from its sentinel to its commit. */
export async function trickle(ctx: BenchContext): Promise<Latency> {
  const { sizes, server, work, outside, workerJs, log } = ctx;
  const { trickleFiles: n, trickleRowsPerFile: per, trickleIntervalMs: every } = sizes;
  const p50: number[] = [];
  const p95: number[] = [];
  const max: number[] = [];
  const samples: number[][] = [];
  let verified = true;
  for (let r = 0; r < sizes.runs; r++) {
    const table = ctx.tableName('trickle');
    await withSession(server, ctx.database, (sql) => freshTable(sql, table));
    const inbox = await mkdtemp(join(work, 'inbox-'));
    const run = await runWatcher(workerJs, jobFor(ctx, inbox, table, n, 120_000 + n * every), server.pid, () =>
      dropTrickle(outside, inbox, n, per, every),
    );
    const ok = !run.done.timedOut && run.done.filesIngested === n && (await verifyCount(ctx, table, n * per));
    verified = ok && verified;
    await rm(inbox, { recursive: true, force: true });
    // Files are dropped one at a time, far apart: the k-th file settled is the k-th dropped.
    const latencies = run.dropped.map((d, i) => (run.done.settledAt[i] ?? Number.NaN) - d);
    samples.push(latencies.map((l) => Math.round(l * 100) / 100));
    p50.push(percentile(latencies, 50));
    p95.push(percentile(latencies, 95));
    max.push(Math.max(...latencies));
    log(
      `trickle run ${r + 1}: p50 ${p50.at(-1)!.toFixed(2)} ms, p95 ${p95.at(-1)!.toFixed(2)} ms, ` +
        `max ${max.at(-1)!.toFixed(2)} ms${ok ? '' : ' WRONG'}`,
    );
  }
  return {
    workload: 'trickle',
    files: n,
    intervalMs: every,
    p50: summarize(p50),
    p95: summarize(p95),
    max: summarize(max),
    verified,
    samples,
  };
}

/** The backlog at its two sizes, once each: their figures and the memory comparison. */
export async function backlog(ctx: BenchContext): Promise<{ figures: Figure[]; backlog: BacklogFigure }> {
  const { sizes, server, work, workerJs, log } = ctx;
  const figures: Figure[] = [];
  const peaks: number[] = [];
  const per = 10;
  const content = smallCsv(per, SEED + 3, 1);
  for (const n of [sizes.backlogSmall, sizes.backlogLarge]) {
    const table = ctx.tableName('backlog');
    await withSession(server, ctx.database, (sql) => freshTable(sql, table));
    const inbox = await mkdtemp(join(work, 'inbox-'));
    const t = now();
    for (let i = 0; i < n; i++) {
      const name = `backlog-${String(i).padStart(6, '0')}.csv`;
      await writeFile(join(inbox, name), content);
      await writeFile(join(inbox, name + READY_SUFFIX), '');
    }
    log(`backlog of ${n} ready files made in ${((now() - t) / 1000).toFixed(1)} s; starting the watcher on it`);
    const run: WatchRun = await runWatcher(workerJs, jobFor(ctx, inbox, table, n, 120_000 + n * 50), server.pid);
    const ok = !run.done.timedOut && run.done.filesIngested === n && (await verifyCount(ctx, table, n * per));
    await rm(inbox, { recursive: true, force: true });
    const s = (run.done.settledAt.at(-1)! - run.done.startedAt) / 1000;
    peaks.push(run.done.peakRssMb);
    figures.push({
      workload: `backlog of ${n} at start`,
      method: 'hyperwatch',
      kind: 'hyperwatch',
      seconds: single(s),
      runs: [s],
      goneSeconds: single((run.done.goneAt - run.done.startedAt) / 1000),
      rows: n * per,
      files: n,
      peakRssMb: run.done.peakRssMb,
      hyperdPeakRssMb: run.hyperdPeakRssMb,
      verified: ok,
      rssSeriesMb: thin(run.rssSeries),
    });
    log(
      `backlog ${n}: swept in ${s.toFixed(1)} s (${(n / s).toFixed(0)} files/s), peak RSS ${run.done.peakRssMb.toFixed(0)} ` +
        `MB${ok ? '' : ' WRONG'}`,
    );
  }
  return { figures, backlog: { small: sizes.backlogSmall, large: sizes.backlogLarge, smallPeakMb: peaks[0]!, largePeakMb: peaks[1]! } };
}
