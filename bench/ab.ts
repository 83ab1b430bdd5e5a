/**
 * A/B of two watcher builds on the flood and trickle workloads (and, with `--only csv`, one big CSV
 * file into an existing table), interleaved in one run on one hyperd and one database: the only
 * comparison that holds on a shared, noisy machine.
 *
 *   node --import tsx bench/ab.ts --a <dir>/bench/out/build/bench/lib/worker.js \
 *     --b bench/out/build/bench/lib/worker.js [--pairs 6] [--only flood,trickle,csv] [--trickle-files 50] \
 *     [--csv-rows 1000000]
 *
 * A build is the bench worker compiled by `npm run bench` (bench/out/build) in any checkout, e.g.
 * an older commit's (a clone in /tmp/base checked out at it, `npm ci`, then
 * `npx tsc -p bench/tsconfig.build.json --outDir bench/out/build` there). Each pair runs A then B,
 * the next B then A, so neither always goes first. Same files, same producer as `npm run bench`.
 * Prints every run, then per build the median and range, and the median of the per-pair ratios.
 */
import { cp, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { FAILED_DIR } from '../src/index.ts';
import { writeRows } from './lib/data.ts';
import { dropStaged, stageOne } from './lib/drop-one.ts';
import { percentile, summarize } from './lib/measure.ts';
import { countRows, createDatabase, dropTable, freshTable, startServer, withSession } from './lib/server.ts';
import { dropFlood, dropTrickle, writeFlood } from './lib/small-files.ts';
import { runWatcher } from './lib/watch-run.ts';

const { values: args } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    pairs: { type: 'string', default: '6' },
    only: { type: 'string', default: 'flood,trickle' },
    'flood-files': { type: 'string', default: '1000' },
    'trickle-files': { type: 'string', default: '50' },
    'csv-rows': { type: 'string', default: '1000000' },
    watch: { type: 'string' },
    'hyperd-log': { type: 'string' },
  },
});
if (!args.a || !args.b) throw new Error('--a and --b: the two compiled bench workers (…/bench/out/build/bench/lib/worker.js)');
const builds = { A: args.a, B: args.b } as const;
type Build = keyof typeof builds;
const pairs = Number(args.pairs);
const only = new Set(args.only!.split(','));
const floodFiles = Number(args['flood-files']);
const trickleFiles = Number(args['trickle-files']);
const csvRows = Number(args['csv-rows']);
const watch = args.watch ? (JSON.parse(args.watch) as Record<string, unknown>) : undefined;
const PER = 100;
const EVERY_MS = 200;

const log = (message: string) => process.stderr.write(`[ab ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

interface Sample {
  readonly build: Build;
  readonly pair: number;
  readonly values: Record<string, number>;
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(os.tmpdir(), 'hyperwatch-ab-'));
  const server = await startServer();
  const database = join(work, 'ab.hyper');
  const outside = join(work, 'outside');
  await mkdir(outside);
  const samples: Record<string, Sample[]> = {};
  let tables = 0;
  log(
    `load average at start ${os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')}`,
  );
  try {
    await createDatabase(server, database);
    const job = (dir: string, table: string, expectFiles: number, timeoutMs: number) => ({
      dir,
      table,
      database,
      endpoint: server.endpoint,
      expectFiles,
      timeoutMs,
      ...(watch ? { watch } : {}),
    });
    const verify = (table: string, rows: number) =>
      withSession(server, database, async (sql) => {
        const n = await countRows(sql, table);
        await dropTable(sql, table);
        return n === rows;
      });

    async function flood(build: Build): Promise<Record<string, number>> {
      const table = `ab_flood_${++tables}`;
      await withSession(server, database, (sql) => freshTable(sql, table));
      const inbox = await mkdtemp(join(work, 'inbox-'));
      const batch = await mkdtemp(join(outside, 'flood-'));
      const names = await writeFlood(batch, floodFiles, PER);
      const run = await runWatcher(builds[build], job(inbox, table, names.length, 600_000), server.pid, async () => [
        await dropFlood(batch, inbox, names),
      ]);
      const failed = await readdir(join(inbox, FAILED_DIR)).catch(() => [] as string[]);
      const ok =
        !run.done.timedOut && run.done.filesFailed === 1 && failed.includes('flood-bad.csv') && (await verify(table, floodFiles * PER));
      await rm(inbox, { recursive: true, force: true });
      await rm(batch, { recursive: true, force: true });
      if (!ok) throw new Error(`flood on ${build} was WRONG`);
      const s = (run.done.settledAt.at(-1)! - run.dropped[0]!) / 1000;
      return { 'files/s': names.length / s, 'watcher CPU s': run.done.cpuSeconds, 'hyperd CPU s': run.hyperdCpuSeconds };
    }

    async function trickle(build: Build): Promise<Record<string, number>> {
      const table = `ab_trickle_${++tables}`;
      await withSession(server, database, (sql) => freshTable(sql, table));
      const inbox = await mkdtemp(join(work, 'inbox-'));
      const run = await runWatcher(builds[build], job(inbox, table, trickleFiles, 120_000 + trickleFiles * EVERY_MS), server.pid, () =>
        dropTrickle(outside, inbox, trickleFiles, PER, EVERY_MS),
      );
      const ok = !run.done.timedOut && run.done.filesIngested === trickleFiles && (await verify(table, trickleFiles * PER));
      await rm(inbox, { recursive: true, force: true });
      if (!ok) throw new Error(`trickle on ${build} was WRONG`);
      const latencies = run.dropped.map((d, i) => (run.done.settledAt[i] ?? Number.NaN) - d);
      return { 'p50 ms': percentile(latencies, 50), 'p95 ms': percentile(latencies, 95), 'watcher CPU s': run.done.cpuSeconds };
    }

    // The same rows as `npm run bench`'s "CSV 1 file" (a TIMESTAMP column among six), written once.
    const bulk = only.has('csv') ? await writeRows(join(outside, 'bulk.csv'), 'csv', { rows: csvRows }, 42) : undefined;

    async function csv(build: Build): Promise<Record<string, number>> {
      const table = `ab_csv_${++tables}`;
      await withSession(server, database, (sql) => freshTable(sql, table));
      const inbox = await mkdtemp(join(work, 'inbox-'));
      await stageOne(bulk!.path, outside, 'run.csv');
      const run = await runWatcher(builds[build], job(inbox, table, 1, 600_000), server.pid, async () => [
        await dropStaged(outside, inbox, 'run.csv'),
      ]);
      const ok = !run.done.timedOut && run.done.filesIngested === 1 && (await verify(table, bulk!.rows));
      await rm(inbox, { recursive: true, force: true });
      if (!ok) throw new Error(`csv on ${build} was WRONG`);
      return {
        seconds: (run.done.settledAt[0]! - run.dropped[0]!) / 1000,
        'watcher CPU s': run.done.cpuSeconds,
        'hyperd CPU s': run.hyperdCpuSeconds,
        'peak RSS MB': run.done.peakRssMb,
      };
    }

    const workloads = { flood, trickle, csv } as const;
    for (let pair = 0; pair < pairs; pair++) {
      const order: Build[] = pair % 2 === 0 ? ['A', 'B'] : ['B', 'A'];
      for (const [name, fn] of Object.entries(workloads)) {
        if (!only.has(name)) continue;
        for (const build of order) {
          const values = await fn(build);
          (samples[name] ??= []).push({ build, pair, values });
          log(
            `${name} pair ${pair + 1} ${build}: ${Object.entries(values)
              .map(([k, v]) => `${k} ${v.toFixed(k.endsWith('ms') ? 2 : 3)}`)
              .join(', ')}`,
          );
        }
      }
    }
  } finally {
    // hyperd's own log (every statement with its compile and run time) is removed with the server.
    if (args['hyperd-log']) await copyHyperdLog(args['hyperd-log']);
    await server.stop();
    await rm(work, { recursive: true, force: true });
  }
  log(
    `load average at end ${os
      .loadavg()
      .map((v) => v.toFixed(2))
      .join(' ')}`,
  );
  for (const [name, list] of Object.entries(samples)) {
    for (const key of Object.keys(list[0]!.values)) {
      const of = (b: Build) => list.filter((s) => s.build === b).map((s) => s.values[key]!);
      const [a, b] = [summarize(of('A')), summarize(of('B'))];
      const ratios = Array.from(
        { length: pairs },
        (_, p) =>
          list.find((s) => s.pair === p && s.build === 'B')!.values[key]! / list.find((s) => s.pair === p && s.build === 'A')!.values[key]!,
      );
      const r = summarize(ratios);
      const f = (x: number) => x.toFixed(key.endsWith('ms') ? 2 : 3);
      console.log(
        `${name} ${key}: A ${f(a.median)} (${f(a.min)}–${f(a.max)})  B ${f(b.median)} (${f(b.min)}–${f(b.max)})  B/A per ` +
          `pair median ${r.median.toFixed(3)} (${r.min.toFixed(3)}–${r.max.toFixed(3)})`,
      );
    }
  }
}

/** Copies the bench hyperd's log folder (named after this process) to `to`. */
async function copyHyperdLog(to: string): Promise<void> {
  const own = (await readdir(os.tmpdir())).filter((n) => n.startsWith(`hyperwatch-hyperd-${process.pid}-`));
  await mkdir(to, { recursive: true });
  for (const dir of own) await cp(join(os.tmpdir(), dir), to, { recursive: true });
}

await main();
