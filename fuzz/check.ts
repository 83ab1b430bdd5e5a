/**
 * One batch of candidate files dropped through a real watcher on a real hyperd, and the
 * invariants checked for each: it finished within the limit, it either landed (a ledger row) or
 * was refused (a `.error` with a code other than UNEXPECTED, naming the file, in words rather than
 * JavaScript's), nothing of it is left in the inbox or staging, and it landed no row when an
 * independent reader refuses it (nor, for Parquet, another number of rows than that reader reads).
 */
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import process from 'node:process';
import { extname, join } from 'node:path';
import { startWatching, stopWatching } from '../src/api.ts';
import { FAILED_DIR, LEDGER_TABLE, READY_SUFFIX, STAGING_DIR } from '../src/constants.ts';
import { silentLogger } from '../src/log.ts';
import type { WatcherRegistry } from '../src/registry.ts';
import { qualifiedName } from '../src/columns/sql.ts';
import type { DbAdapter, DbPool } from '../src/types.ts';
import type { Judge } from './judges.ts';
import type { Format } from './mutate.ts';

/** JavaScript's own words, which no refusal may be made of. */
export const BARE_JS = new RegExp(
  [
    'Invalid array length',
    'Invalid typed array length',
    'ERR_STRING_TOO_LONG',
    'not safe to convert',
    'Cannot read properties',
    'Cannot mix BigInt',
    'is not a function',
    'is not iterable',
    'Maximum call stack',
    'out of memory',
    'RangeError',
    'TypeError',
    'undefined',
  ].join('|'),
);

export interface Candidate {
  /** The name it is dropped with (its extension picks the ingester). */
  readonly name: string;
  readonly format: Format;
  readonly bytes: Uint8Array;
  /** Where it comes from: `duckdb-gzip.parquet: bitflip@123 x1`. */
  readonly how: string;
}

export type Invariant =
  | 'seed-refused'
  | 'hang'
  | 'crash'
  | 'unaccounted'
  | 'leftover'
  | 'no-code'
  | 'unexpected'
  | 'bare-error'
  | 'unnamed'
  | 'judge-refuses'
  | 'rows-differ'
  | 'memory';

export interface Failure {
  readonly invariant: Invariant;
  readonly candidate: Candidate;
  readonly detail: string;
}

export interface Outcome {
  readonly candidate: Candidate;
  /** Rows landed, or the refusal's code. */
  readonly landed?: number;
  readonly code?: string;
}

export interface CheckEnv {
  readonly db: DbAdapter;
  readonly pool: DbPool;
  readonly registry: WatcherRegistry;
  readonly judges: readonly Judge[];
  /** Where judges read files from. */
  readonly scratch: string;
  readonly perFileMs: number;
}

const within = <T>(ms: number, work: Promise<T>): Promise<T | 'timeout'> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve('timeout'), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });

async function drop(dir: string, name: string, bytes: Uint8Array): Promise<void> {
  await writeFile(join(dir, name), bytes);
  await writeFile(join(dir, name + READY_SUFFIX), '');
}

/**
 * The most this process's resident memory grew during a watcher run of the batch (the judges,
 * which keep their own memory, run outside it).
 */
let peakGrowth = 0;

/** One watcher run over what is in `dir`: started (its first sweep ingests it all) and stopped. */
async function sweep(env: CheckEnv, dir: string, table: string, files: number): Promise<'timeout' | undefined> {
  const baseline = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakGrowth = Math.max(peakGrowth, process.memoryUsage().rss - baseline)), 50);
  try {
    return await sweepOnce(env, dir, table, files);
  } finally {
    clearInterval(sampler);
    peakGrowth = Math.max(peakGrowth, process.memoryUsage().rss - baseline);
  }
}

async function sweepOnce(env: CheckEnv, dir: string, table: string, files: number): Promise<'timeout' | undefined> {
  const limit = env.perFileMs * (files + 1);
  const run = (async () => {
    const t0 = performance.now();
    await startWatching(dir, table, {
      db: env.db,
      registry: env.registry,
      logger: silentLogger,
      maxConcurrent: 2,
      rescanIntervalMs: 60_000,
      checkpointDelayMs: 0,
    });
    const t1 = performance.now();
    await stopWatching(dir, { registry: env.registry });
    if (process.env.FUZZ_TIMING) console.log(`start ${(t1 - t0).toFixed(0)} ms, stop ${(performance.now() - t1).toFixed(0)} ms`);
  })();
  const result = await within(limit, run);
  if (result === 'timeout') {
    // Let it go on in the background: the run reports the hang and ends.
    run.catch(() => undefined);
    return 'timeout';
  }
  return undefined;
}

async function ledgerRows(pool: DbPool, dir: string): Promise<Map<string, number>> {
  const rows = await pool.query<{ file_name: string; row_count: string | number; directory: string }>(
    `SELECT file_name, row_count, directory FROM ${qualifiedName(LEDGER_TABLE)}`,
  );
  const out = new Map<string, number>();
  for (const row of rows) if (row.directory === dir || row.directory.endsWith(dir)) out.set(row.file_name, Number(row.row_count));
  return out;
}

async function listed(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

/**
 * Drops `candidates` into a fresh inbox `dir` whose table `table` the `pristine` file (when given)
 * has made first, and checks every invariant. Returns each candidate's outcome and the failures.
 */
export async function checkBatch(
  env: CheckEnv,
  dir: string,
  table: string,
  candidates: readonly Candidate[],
  pristine?: Candidate,
): Promise<{ outcomes: Outcome[]; failures: Failure[]; growthMiB: number }> {
  peakGrowth = 0;
  const result = await checkBatchOnce(env, dir, table, candidates, pristine);
  return { ...result, growthMiB: peakGrowth / (1 << 20) };
}

async function checkBatchOnce(
  env: CheckEnv,
  dir: string,
  table: string,
  candidates: readonly Candidate[],
  pristine?: Candidate,
): Promise<{ outcomes: Outcome[]; failures: Failure[] }> {
  await mkdir(dir, { recursive: true });
  const failures: Failure[] = [];
  const fail = (invariant: Invariant, candidate: Candidate, detail: string) => failures.push({ invariant, candidate, detail });
  if (pristine) {
    await drop(dir, pristine.name, pristine.bytes);
    if ((await sweep(env, dir, table, 1)) === 'timeout') {
      fail('hang', pristine, `the unmutated seed did not finish within ${env.perFileMs * 2} ms`);
      return { outcomes: [], failures };
    }
    // The run means nothing if the file it mutates does not land in the first place.
    const refusal = await readFile(join(dir, FAILED_DIR, `${pristine.name}.error`), 'utf8').catch(() => undefined);
    if (refusal !== undefined) fail('seed-refused', pristine, refusal);
  }
  for (const c of candidates) await drop(dir, c.name, c.bytes);
  if ((await sweep(env, dir, table, candidates.length)) === 'timeout') {
    const staged = await listed(join(dir, STAGING_DIR));
    const stuck = candidates.filter((c) => staged.some((s) => s.includes(c.name)));
    for (const c of stuck.length > 0 ? stuck : candidates)
      fail('hang', c, `the watcher had not finished ${candidates.length} files after ${env.perFileMs * (candidates.length + 1)} ms`);
    return { outcomes: [], failures };
  }
  const landed = await ledgerRows(env.pool, dir);
  const failedDir = join(dir, FAILED_DIR);
  const failedFiles = new Set(await listed(failedDir));
  const outcomes: Outcome[] = [];
  for (const c of candidates) {
    const errorName = `${c.name}.error`;
    if (failedFiles.has(errorName)) {
      const report = JSON.parse(await readFile(join(failedDir, errorName), 'utf8')) as { code?: string; message?: string };
      const code = report.code;
      const message = report.message ?? '';
      if (!code) fail('no-code', c, message);
      else if (code === 'UNEXPECTED') fail('unexpected', c, message);
      if (BARE_JS.test(message)) fail('bare-error', c, `${code}: ${message}`);
      if (!message.includes(c.name)) fail('unnamed', c, `${code}: ${message}`);
      outcomes.push({ candidate: c, code: code ?? 'none' });
      continue;
    }
    const rows = landed.get(c.name);
    if (rows === undefined) {
      fail('unaccounted', c, 'neither landed (no ledger row) nor refused (no .error)');
      continue;
    }
    outcomes.push({ candidate: c, landed: rows });
    await judge(env, c, rows, fail);
  }
  const left = (await listed(dir)).filter((name) => name !== FAILED_DIR && !name.startsWith('.'));
  const staged = await listed(join(dir, STAGING_DIR));
  for (const name of [...left, ...staged]) {
    const owner = candidates.find((c) => name.includes(c.name)) ?? pristine ?? candidates[0]!;
    fail('leftover', owner, `${name} is still in ${left.includes(name) ? 'the inbox' : 'staging'}`);
  }
  return { outcomes, failures };
}

async function judge(
  env: CheckEnv,
  c: Candidate,
  rows: number,
  fail: (invariant: Invariant, candidate: Candidate, detail: string) => void,
): Promise<void> {
  const judges = env.judges.filter((j) => j.formats.includes(c.format));
  if (judges.length === 0) return;
  // A new name each time: DuckDB keeps a Parquet file's footer cached by its path.
  const path = join(env.scratch, `judge-${++judged}${extname(c.name)}`);
  await writeFile(path, c.bytes);
  for (const j of judges) {
    const verdict = await j.read(path, c.format, c.bytes);
    // A reader that crashes says nothing about the file (counted, not judged).
    if (!verdict.ok && verdict.crashed) judgeCrashes++;
    else if (!verdict.ok) fail('judge-refuses', c, `landed ${rows} rows; ${j.name} refuses it: ${verdict.why}`);
    else if (c.format === 'parquet' && verdict.rows !== rows)
      fail('rows-differ', c, `landed ${rows} rows; ${j.name} reads ${verdict.rows}`);
  }
  await rm(path, { force: true });
}

let judged = 0;
/** Times a judge crashed on a landed file (no verdict): reported with the run. */
export let judgeCrashes = 0;
