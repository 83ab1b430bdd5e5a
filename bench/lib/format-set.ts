/**
 * The format set: every file format hyperwatch reads in bulk (CSV, Parquet, Arrow IPC file, Arrow
 * IPC stream), on the bench's own files and on files other tools wrote, each loaded by hyperwatch
 * and by hyperd itself (the very same file, in the same run, interleaved run by run), with
 * hyperwatch run two ways: embedded (its own hyperd on a `.hyper` file, the default) and through
 * a same-host endpoint (the bench's hyperd, given as `endpoint` the way the CLI's `--endpoint`
 * does, the probe deciding whether that hyperd reads the claimed files), into a fresh table and
 * into one that already holds the file's rows.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { readHolder } from '../../adapters/db/hyper/holder.ts';
import type { Sql } from '../../adapters/db/postgres-js/pool.ts';
import { quoteIdent, quoteLiteral } from '../../src/columns/sql.ts';
import { dropStaged, stageOne } from './drop-one.ts';
import { now, type Summary, summarize } from './measure.ts';
import { countRows, createDatabase, type Server, withSession } from './server.ts';
import { runWatcher } from './watch-run.ts';

export type FileFormat = 'csv' | 'parquet' | 'arrow-file' | 'arrow-stream';
export const FILE_FORMATS: readonly FileFormat[] = ['csv', 'parquet', 'arrow-file', 'arrow-stream'];
export type WatchMode = 'embedded' | 'endpoint';
export const WATCH_MODES: readonly WatchMode[] = ['embedded', 'endpoint'];
export type TableState = 'fresh' | 'existing';
export const TABLE_STATES: readonly TableState[] = ['fresh', 'existing'];

export const FORMAT_LABEL: Record<FileFormat, string> = {
  csv: 'CSV',
  parquet: 'Parquet',
  'arrow-file': 'Arrow IPC file',
  'arrow-stream': 'Arrow IPC stream',
};

/** One file of the set. */
export interface SetFile {
  readonly key: string;
  /** `own`: the bench's generator (and hyperd's COPY TO of its rows); `other`: other writers. */
  readonly set: 'own' | 'other';
  readonly format: FileFormat;
  readonly writer: string;
  readonly path: string;
  /** The extension hyperwatch picks its ingester by. */
  readonly ext: string;
  readonly rows: number;
  readonly bytes: number;
  /** Columns and Hyper types of the table the file loads into. */
  readonly columns: readonly (readonly [name: string, type: string])[];
}

/** One way hyperd loads a file by itself. */
interface Candidate {
  readonly name: string;
  readonly how: string;
  readonly sql: (table: string, path: string) => string;
}

const copyWith = (format: string, name: string): Candidate => ({
  name,
  how: `COPY t FROM 'path' WITH (${format})`,
  sql: (table, path) => `COPY ${quoteIdent(table)} FROM ${quoteLiteral(path)} WITH (${format})`,
});

/** hyperd's own loads of each format: every candidate runs in every run; the fastest median is the one compared. */
export const CANDIDATES: Record<FileFormat, readonly Candidate[]> = {
  csv: [copyWith('FORMAT csv, HEADER true', 'COPY FROM path')],
  parquet: [
    copyWith('FORMAT parquet', 'COPY FROM path'),
    {
      name: 'INSERT ... external()',
      how: `INSERT INTO t SELECT * FROM external('path', FORMAT => 'parquet')`,
      sql: (table, path) => `INSERT INTO ${quoteIdent(table)} SELECT * FROM external(${quoteLiteral(path)}, FORMAT => 'parquet')`,
    },
  ],
  'arrow-file': [copyWith('FORMAT arrowfile', 'COPY FROM path')],
  'arrow-stream': [copyWith('FORMAT arrowstream', 'COPY FROM path')],
};

export interface Timed {
  readonly name: string;
  readonly how: string;
  readonly runs: readonly number[];
  readonly seconds: Summary;
}

/** One case: a file, a mode, a table state; hyperwatch and hyperd's loads of that file. */
export interface FormatCase {
  readonly file: string;
  readonly set: 'own' | 'other';
  readonly format: FileFormat;
  readonly writer: string;
  readonly rows: number;
  readonly bytes: number;
  readonly mode: WatchMode;
  readonly table: TableState;
  readonly hyperwatch: Timed;
  readonly hyperd: readonly Timed[];
  /** The hyperd load with the lowest median, the one the ratio is taken against. */
  readonly fastest: string;
  /** hyperd's fastest median ÷ hyperwatch's median (rows/s of hyperwatch over hyperd's). */
  readonly ratio: number;
  /** The same from the fastest run of each. */
  readonly ratioOfMins: number;
  /** Every load left exactly the expected rows. */
  readonly verified: boolean;
  /** What the endpoint's probe found (endpoint mode). */
  readonly readsFiles: string | null;
  /** Where hyperwatch's time went, per run, in ms (see `phasesOf`). */
  readonly phases: Readonly<Record<Phase, readonly number[]>>;
}

export const PHASES = ['to claim', 'claim', 'checks', 'load + commit'] as const;
export type Phase = (typeof PHASES)[number];

/**
 * One run's time split at the watcher's log marks: `.ready` → a task starts claiming (the event,
 * the queue), → claimed (renames, open, stat), → the Arrow ingester's checks done (BEGIN's reply,
 * the table's columns, reading and checking the file; only Arrow logs this mark), → committed
 * (for CSV and Parquet everything after the claim: checks, the load statement, ledger row, COMMIT).
 */
function phasesOf(drop: number, marks: Readonly<Record<string, number>>): Record<Phase, number> {
  const claiming = marks.claiming ?? Number.NaN;
  const claimed = marks.claimed ?? Number.NaN;
  const checked = marks['server-read'];
  const ingested = marks.ingested ?? Number.NaN;
  return {
    'to claim': claiming - drop,
    claim: claimed - claiming,
    checks: checked === undefined ? Number.NaN : checked - claimed,
    'load + commit': ingested - (checked ?? claimed),
  };
}

export interface SetContext {
  readonly server: Server;
  /** The bench's database on `server` (endpoint mode and every hyperd load). */
  readonly database: string;
  readonly workerJs: string;
  /** Scratch folder of the run; `outside` is where files are staged before they are renamed in. */
  readonly work: string;
  readonly outside: string;
  readonly runs: number;
  readonly watch?: Readonly<Record<string, unknown>>;
  readonly tableName: (prefix: string) => string;
  readonly log: (message: string) => void;
}

const createTable = (sql: Sql, table: string, file: SetFile) =>
  sql.unsafe(`CREATE TABLE ${quoteIdent(table)} (${file.columns.map(([n, t]) => `${quoteIdent(n)} ${t}`).join(', ')})`);

/** A table for one load: created, and for `existing` already holding the file's rows (loaded untimed). */
async function prepareTable(sql: Sql, table: string, file: SetFile, state: TableState): Promise<void> {
  await sql.unsafe(`DROP TABLE IF EXISTS ${quoteIdent(table)}`);
  await createTable(sql, table, file);
  if (state === 'existing') await sql.unsafe(CANDIDATES[file.format][0]!.sql(table, file.path));
}

const expected = (file: SetFile, state: TableState) => file.rows * (state === 'existing' ? 2 : 1);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The embedded watcher's own hyperd, through the endpoint it publishes next to its database
 * (`<database>.hyperwatch-endpoint.json`): hyperd's own loads then run in the very process and
 * database hyperwatch loads into.
 */
async function watchersHyperd(database: string): Promise<Server> {
  for (let i = 0; i < 200; i++) {
    const holder = readHolder(database);
    if (holder) {
      const at = holder.endpoint.lastIndexOf(':');
      const host = holder.endpoint.slice(0, at);
      const port = Number(holder.endpoint.slice(at + 1));
      return { host, port, endpoint: holder.endpoint, pid: holder.pid, binary: '', stop: async () => {} };
    }
    await sleep(10);
  }
  throw new Error(`the watcher's hyperd published no endpoint next to ${database}`);
}

/** The name of a load run on the embedded watcher's own hyperd. */
const onWatchersHyperd = (name: string) => `${name}, watcher's hyperd`;

/** hyperd loading the file by itself, timed around the one statement on an open session. */
async function hyperdLoad(
  ctx: SetContext,
  file: SetFile,
  state: TableState,
  candidate: Candidate,
  on: { server: Server; database: string } = ctx,
): Promise<{ seconds: number; ok: boolean }> {
  const table = ctx.tableName('own');
  return withSession(on.server, on.database, async (sql) => {
    await prepareTable(sql, table, file, state);
    const start = now();
    await sql.unsafe(candidate.sql(table, file.path));
    const seconds = (now() - start) / 1000;
    const n = await countRows(sql, table);
    await sql.unsafe(`DROP TABLE ${quoteIdent(table)}`);
    return { seconds, ok: n === expected(file, state) };
  });
}

/**
 * hyperwatch loading the file: the file is copied next to the inbox, renamed in, then its `.ready`
 * renamed in; timed from the `.ready` to the watcher's `ingested`. Embedded: the database is a new
 * `.hyper` file made (with its table) by the bench's hyperd and then opened by the watcher's own.
 */
async function watchedLoad(ctx: SetContext, file: SetFile, state: TableState, mode: WatchMode, run: number) {
  const table = ctx.tableName('hw');
  const database = mode === 'embedded' ? join(ctx.work, `embedded-${table}.hyper`) : ctx.database;
  if (mode === 'embedded') await createDatabase(ctx.server, database);
  await withSession(ctx.server, database, (sql) => prepareTable(sql, table, file, state));
  const inbox = await mkdtemp(join(ctx.work, 'inbox-'));
  // Named after the source file, so that hyperd's log ties the staged copy to it (bench/hyperd-log.ts).
  const name = `${basename(file.path, file.ext)}-${run}${file.ext}`;
  await stageOne(file.path, ctx.outside, name);
  const job = {
    dir: inbox,
    table,
    database,
    endpoint: ctx.server.endpoint,
    connect: mode,
    expectFiles: 1,
    timeoutMs: 300_000,
    ...(ctx.watch ? { watch: ctx.watch } : {}),
  };
  const same: { seconds: number; ok: boolean }[] = [];
  const watched = await runWatcher(ctx.workerJs, job, ctx.server.pid, async () => {
    if (mode === 'embedded') {
      // The watcher is watching: hyperd's own loads of the file first, on its hyperd, then the drop.
      const server = await watchersHyperd(database);
      for (const candidate of CANDIDATES[file.format]) same.push(await hyperdLoad(ctx, file, state, candidate, { server, database }));
    }
    return [await dropStaged(ctx.outside, inbox, name)];
  });
  await rm(inbox, { recursive: true, force: true });
  const n = await withSession(ctx.server, database, async (sql) => {
    const count = await countRows(sql, table);
    await sql.unsafe(`DROP TABLE ${quoteIdent(table)}`);
    return count;
  });
  // No DROP DATABASE: hyperd 0.7.3 (Hyper 9.1.0) crashed (SIGSEGV) on it here, right after the
  // count's session let go of the file; the file is only removed, under a name never used again.
  if (mode === 'embedded') await rm(database, { force: true });
  const { done } = watched;
  const ok = !done.timedOut && done.filesIngested === 1 && n === expected(file, state);
  if (done.lastError) ctx.log(`watcher error: ${done.lastError}`);
  if (!ok)
    ctx.log(
      `WRONG: ${file.key} ${mode} ${state}: ${n} rows, expected ${expected(file, state)}; ingested ${done.filesIngested}, ` +
        `failed ${done.filesFailed}`,
    );
  return {
    seconds: ((done.settledAt[0] ?? Number.NaN) - watched.dropped[0]!) / 1000,
    ok,
    readsFiles: done.readsFilesNote,
    phases: phasesOf(watched.dropped[0]!, done.marks),
    same,
  };
}

const timed = (name: string, how: string, runs: number[]): Timed => ({ name, how, runs, seconds: summarize(runs) });

/** One case, `ctx.runs` times: each of hyperd's loads, then hyperwatch, run after run. */
export async function runCase(ctx: SetContext, file: SetFile, mode: WatchMode, state: TableState): Promise<FormatCase> {
  const candidates = CANDIDATES[file.format];
  const own = candidates.map(() => [] as number[]);
  const sameHyperd = candidates.map(() => [] as number[]);
  const hw: number[] = [];
  let verified = true;
  let readsFiles: string | null = null;
  const phases = Object.fromEntries(PHASES.map((p) => [p, [] as number[]])) as Record<Phase, number[]>;
  const label = `${file.key}, ${mode}, ${state} table`;
  for (let r = 0; r < ctx.runs; r++) {
    for (const [i, candidate] of candidates.entries()) {
      const load = await hyperdLoad(ctx, file, state, candidate);
      own[i]!.push(load.seconds);
      verified = load.ok && verified;
    }
    const one = await watchedLoad(ctx, file, state, mode, r);
    hw.push(one.seconds);
    verified = one.ok && verified;
    for (const [i, load] of one.same.entries()) {
      sameHyperd[i]!.push(load.seconds);
      verified = load.ok && verified;
    }
    readsFiles ??= one.readsFiles;
    for (const p of PHASES) phases[p].push(Math.round(one.phases[p] * 10) / 10);
    const sameLog = one.same.map((l, i) => `${onWatchersHyperd(candidates[i]!.name)} ${l.seconds.toFixed(3)} s`);
    ctx.log(
      `${label} run ${r + 1}: hyperwatch ${one.seconds.toFixed(3)} s, ` +
        `hyperd ${[...candidates.map((c, i) => `${c.name} ${own[i]!.at(-1)!.toFixed(3)} s`), ...sameLog].join(', ')}` +
        `${one.ok ? '' : ' WRONG'}`,
    );
  }
  const hyperd = [
    ...candidates.map((c, i) => timed(c.name, c.how, own[i]!)),
    ...(mode === 'embedded'
      ? candidates.map((c, i) => timed(onWatchersHyperd(c.name), `${c.how} on the watcher's own hyperd`, sameHyperd[i]!))
      : []),
  ];
  const fastest = hyperd.reduce((a, b) => (b.seconds.median < a.seconds.median ? b : a));
  const hyperwatch = timed(
    'hyperwatch',
    mode === 'embedded' ? 'openWatcher(dir, table, { database })' : 'openWatcher(dir, table, { database, endpoint })',
    hw,
  );
  return {
    file: file.key,
    set: file.set,
    format: file.format,
    writer: file.writer,
    rows: file.rows,
    bytes: file.bytes,
    mode,
    table: state,
    hyperwatch,
    hyperd,
    fastest: fastest.name,
    ratio: fastest.seconds.median / hyperwatch.seconds.median,
    ratioOfMins: Math.min(...hyperd.map((h) => h.seconds.min)) / hyperwatch.seconds.min,
    verified,
    readsFiles,
    phases,
  };
}

/** Every case of `files` × `modes` × `states`. */
export async function runFormatSet(
  ctx: SetContext,
  files: readonly SetFile[],
  modes: readonly WatchMode[],
  states: readonly TableState[],
): Promise<FormatCase[]> {
  const cases: FormatCase[] = [];
  for (const file of files) for (const mode of modes) for (const state of states) cases.push(await runCase(ctx, file, mode, state));
  return cases;
}
