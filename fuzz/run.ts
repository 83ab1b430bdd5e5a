/**
 * A fuzz run: seed files made by other writers, mutated deterministically from one seed number,
 * dropped in batches (one inbox and table per batch, the table made by the unmutated seed first)
 * through a real watcher on a real hyperd, every invariant of check.ts checked, memory sampled
 * throughout. Every failure is written out (the mutant's bytes, and a `.json` saying what broke)
 * so that it reproduces, and can become a regression test (test/fixtures/fuzz/).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import process from 'node:process';
import { createHyperAdapter } from '../adapters/db/hyper/index.ts';
import { silentLogger } from '../src/log.ts';
import { WatcherRegistry } from '../src/registry.ts';
import { type Candidate, checkBatch, type CheckEnv, type Failure, type Invariant } from './check.ts';
import { arrowRsJudge, duckdbJudge } from './judges.ts';
import { mutate, type Seed } from './mutate.ts';
import { Rng } from './rng.ts';
import { makeSeeds } from './seeds.ts';

export interface FuzzOptions {
  /** The run's seed: the same seed, the same mutants. */
  readonly seed: number;
  readonly count: number;
  /** Where the database, the inboxes and the failures go. */
  readonly out: string;
  /** Mutants per batch (one watcher run). */
  readonly batch?: number;
  /** A file that takes longer than this (times the files of its batch) is a hang. */
  readonly perFileMs?: number;
  /** Growth of this process's resident memory during one watcher run beyond which the run fails. */
  readonly maxGrowthMiB?: number;
  /** Mutate only the seeds whose name contains one of these (e.g. `zstd`): a long run aimed at one codec or writer. */
  readonly only?: readonly string[];
  readonly log?: (line: string) => void;
}

export interface FuzzReport {
  readonly seed: number;
  readonly mutants: number;
  readonly landed: number;
  readonly refused: number;
  /** Refusals by code. */
  readonly codes: Readonly<Record<string, number>>;
  /** Failures by invariant. */
  readonly broken: Readonly<Partial<Record<Invariant, number>>>;
  readonly failures: readonly Failure[];
  readonly maxRssMiB: number;
  /** The most resident memory grew during one watcher run (what `maxGrowthMiB` bounds). */
  readonly maxGrowthMiB: number;
  readonly ms: number;
}

const extensionOf = (seed: Seed) => extname(seed.name);

/** Mutants of one seed; `inbox` names the inbox (and table) they go to, which `pristine` made first. */
interface Batch {
  readonly inbox: string;
  readonly pristine: Candidate;
  readonly candidates: Candidate[];
}

/** Saves a failure's file and what broke, for reproducing it; returns the file's path. */
async function saveFailure(dir: string, failure: Failure, runSeed: number, n: number): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${failure.invariant}-${runSeed}-${n}${extname(failure.candidate.name)}`);
  await writeFile(path, failure.candidate.bytes);
  const { invariant, detail } = failure;
  const saved = { invariant, detail, how: failure.candidate.how, format: failure.candidate.format, runSeed };
  await writeFile(`${path}.json`, `${JSON.stringify(saved, null, 2)}\n`);
  return path;
}

/** Runs the given batches of candidates (each batch with its pristine file, if any) and gathers the report. */
export async function runBatches(
  out: string,
  batches: Iterable<Batch>,
  options: Pick<FuzzOptions, 'perFileMs' | 'maxGrowthMiB' | 'log'> & { readonly seed: number; readonly db?: FuzzEnv },
): Promise<FuzzReport> {
  const started = performance.now();
  const env = options.db ?? (await openEnv(out, options.perFileMs ?? 60_000));
  const codes: Record<string, number> = {};
  const broken: Partial<Record<Invariant, number>> = {};
  const failures: Failure[] = [];
  let mutants = 0;
  let landed = 0;
  let refused = 0;
  let maxRss = 0;
  let maxGrowth = 0;
  const sample = () => (maxRss = Math.max(maxRss, process.memoryUsage().rss / (1 << 20)));
  const sampler = setInterval(sample, 100);
  const crashes: unknown[] = [];
  const onCrash = (error: unknown) => void crashes.push(error);
  process.on('uncaughtException', onCrash);
  process.on('unhandledRejection', onCrash);
  const record = async (failure: Failure) => {
    failures.push(failure);
    broken[failure.invariant] = (broken[failure.invariant] ?? 0) + 1;
    const path = await saveFailure(join(out, 'failures'), failure, options.seed, failures.length);
    options.log?.(`FAILURE ${failure.invariant}: ${failure.candidate.how}: ${failure.detail} (${path})`);
  };
  let n = 0;
  // One inbox and table per seed, made by the unmutated seed the first time: later batches of the
  // same seed go where the earlier ones went, as a directory fed by one producer would.
  const opened = new Set<string>();
  try {
    for (const { inbox, pristine, candidates } of batches) {
      n++;
      const first = !opened.has(inbox);
      opened.add(inbox);
      const target = await env.forInbox(inbox);
      const result = await checkBatch(
        target.check,
        join(out, 'inbox', inbox),
        `fuzz_${inbox}`,
        candidates,
        first ? pristine : undefined,
      ).finally(() => target.close());
      mutants += candidates.length;
      for (const o of result.outcomes) {
        if (o.code !== undefined) {
          refused++;
          codes[o.code] = (codes[o.code] ?? 0) + 1;
        } else landed++;
      }
      for (const f of result.failures) await record(f);
      for (const error of crashes.splice(0))
        await record({
          invariant: 'crash',
          candidate: candidates[0]!,
          detail: error instanceof Error ? (error.stack ?? error.message) : String(error),
        });
      sample();
      maxGrowth = Math.max(maxGrowth, result.growthMiB);
      if (result.growthMiB > (options.maxGrowthMiB ?? 768))
        await record({
          invariant: 'memory',
          candidate: candidates[0]!,
          detail: `resident memory grew by ${result.growthMiB.toFixed(0)} MiB during the watcher run of this batch`,
        });
      if (result.failures.some((f) => f.invariant === 'hang')) break;
      if (n % 5 === 0)
        options.log?.(
          `${mutants} mutants: ${landed} landed, ${refused} refused, ${failures.length} failures, ` +
            `max RSS ${maxRss.toFixed(0)} MiB, max growth in a watcher run ${maxGrowth.toFixed(0)} MiB`,
        );
    }
  } finally {
    clearInterval(sampler);
    process.off('uncaughtException', onCrash);
    process.off('unhandledRejection', onCrash);
    if (!options.db) await env.close();
  }
  return {
    seed: options.seed,
    mutants,
    landed,
    refused,
    codes,
    broken,
    failures,
    maxRssMiB: Math.round(maxRss),
    maxGrowthMiB: Math.round(maxGrowth),
    ms: Math.round(performance.now() - started),
  };
}

/** What a run checks with: the judges and the registry, and a database for each inbox. */
export interface FuzzEnv {
  /** On the run's own database (the seeds Hyper writes are made there; replays check there). */
  readonly check: CheckEnv;
  /**
   * The same, on a database of the inbox's own: hyperd generates code for every table of a
   * database each time it loads it, and every file's checkpoint unloads it, so one database
   * holding every seed's table spent most of the run reloading the other seeds' tables.
   */
  forInbox(inbox: string): Promise<{ check: CheckEnv; close(): Promise<void> }>;
  close(): Promise<void>;
}

/** The database, the registry and the judges a run uses. */
export async function openEnv(out: string, perFileMs: number): Promise<FuzzEnv> {
  await mkdir(join(out, 'scratch'), { recursive: true });
  const open = async (file: string) => {
    const db = createHyperAdapter({ database: join(out, file), logger: silentLogger });
    const pool = await db.openPool({ maxConnections: 2 });
    const close = async () => {
      await pool.close();
      await db.close();
    };
    return { db, pool, close };
  };
  const own = await open('fuzz.hyper');
  const duck = await duckdbJudge();
  const registry = new WatcherRegistry();
  const checkOn = (target: Awaited<ReturnType<typeof open>>): CheckEnv => ({
    db: target.db,
    pool: target.pool,
    registry,
    judges: [duck, arrowRsJudge],
    scratch: join(out, 'scratch'),
    perFileMs,
  });
  return {
    check: checkOn(own),
    async forInbox(inbox) {
      // The run's own adapter stays open meanwhile, so the embedded hyperd is not stopped between inboxes.
      const target = await open(`${inbox}.hyper`);
      return { check: checkOn(target), close: target.close };
    },
    async close() {
      await registry.stopAll();
      duck.close();
      await own.close();
    },
  };
}

/** Mutants in batches, round-robin over the seeds, each batch of one seed. */
function* batchesOf(seeds: readonly Seed[], rng: Rng, count: number, size: number): Iterable<Batch> {
  let made = 0;
  for (let k = 0; made < count; k++) {
    const seed = seeds[k % seeds.length]!;
    const candidates: Candidate[] = [];
    for (let i = 0; i < size && made < count; i++, made++) {
      const mutant = mutate(rng, seed, seeds);
      candidates.push({
        name: `m${made}${extensionOf(seed)}`,
        format: seed.format,
        bytes: mutant.bytes,
        how: `${seed.name}: ${mutant.how}`,
      });
    }
    yield {
      inbox: `s${k % seeds.length}`,
      pristine: { name: `seed${extensionOf(seed)}`, format: seed.format, bytes: seed.bytes, how: `${seed.name} (unmutated)` },
      candidates,
    };
  }
}

/** A whole run: seeds made, mutated from `options.seed`, checked. */
export async function fuzz(options: FuzzOptions): Promise<FuzzReport> {
  const env = await openEnv(options.out, options.perFileMs ?? 60_000);
  try {
    const made = await makeSeeds(join(options.out, 'scratch'), env.check.pool);
    const { only } = options;
    const seeds = only && only.length > 0 ? made.filter((s) => only.some((o) => s.name.includes(o))) : made;
    if (seeds.length === 0)
      throw new Error(`no seed's name contains ${only!.join(' or ')}; the seeds: ${made.map((s) => s.name).join(', ')}`);
    options.log?.(`${seeds.length} seeds: ${seeds.map((s) => `${s.name} (${s.bytes.length} B)`).join(', ')}`);
    const rng = new Rng(options.seed);
    return await runBatches(options.out, batchesOf(seeds, rng, options.count, options.batch ?? 24), { ...options, db: env });
  } finally {
    await env.close();
  }
}
