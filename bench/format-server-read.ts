/**
 * One large file of each format, hyperwatch against hyperd's own load of the very same file:
 * CSV, Parquet (written by Hyper, DuckDB, parquet-wasm), Arrow IPC file and stream (apache-arrow,
 * one batch) and Hyper's own `COPY TO (FORMAT arrowstream)`; embedded hyperd and a same-host
 * endpoint; hyperwatch into a fresh table (it creates it) and into an existing one.
 *
 * hyperwatch is timed from the claim to the commit, as the watcher does it: claim the file into
 * staging, `BEGIN`, the format's ingester, `COMMIT`. hyperd's own load is its one statement into
 * a pre-created table on an open session. The loads of a round are interleaved (own, fresh,
 * existing), and the rounds repeated; median (min–max) in ms, and the ratio of the medians.
 *
 *   node --import tsx bench/format-server-read.ts [rows=1000000] [rounds=5] [formats=csv,parquet-hyper,...] [modes=embedded,endpoint]
 *   HYPERWATCH_BENCH_TRACE=1 also prints each hyperwatch load's steps (open, table, load, commit).
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { RecordBatchFileWriter, RecordBatchStreamWriter } from 'apache-arrow';
import * as parquetWasm from 'parquet-wasm';
import { createHyperAdapter, type HyperAdapter } from '../adapters/db/hyper/index.ts';
import { arrowIngester } from '../plugins/arrow/index.ts';
import { csvIngester } from '../plugins/csv/index.ts';
import { parquetIngester } from '../plugins/parquet/index.ts';
import { IngestFailure } from '../src/errors.ts';
import { claimFile } from '../src/protocol/files.ts';
import { silentLogger } from '../src/log.ts';
import type { DbConnection, DbPool, IngestContext, IngesterPlugin, Logger } from '../src/types.ts';
import { arrowRows } from './lib/arrow-rows.ts';
import { startServer } from './lib/server.ts';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const ONLY = process.argv[4] ? new Set(process.argv[4].split(',')) : undefined;
const MODES = (process.argv[5] ?? 'embedded,endpoint').split(',');
const TRACE = Boolean(process.env.HYPERWATCH_BENCH_TRACE);
const DDL = '(id BIGINT, ts TIMESTAMP, name TEXT, amount DOUBLE PRECISION)';

interface Case {
  readonly name: string;
  readonly ext: string;
  readonly ingester: IngesterPlugin;
  /** hyperd's own load of `path` into `table`. */
  readonly own: (table: string, path: string) => string;
}

const copyAs = (format: string) => (table: string, path: string) => `COPY ${table} FROM '${path}' WITH (FORMAT ${format})`;
const CASES: readonly Case[] = [
  { name: 'csv', ext: '.csv', ingester: csvIngester, own: (t, p) => `COPY ${t} FROM '${p}' WITH (FORMAT csv, HEADER true)` },
  { name: 'parquet-hyper', ext: '.parquet', ingester: parquetIngester, own: copyAs('parquet') },
  { name: 'parquet-duckdb', ext: '.parquet', ingester: parquetIngester, own: copyAs('parquet') },
  { name: 'parquet-wasm', ext: '.parquet', ingester: parquetIngester, own: copyAs('parquet') },
  { name: 'arrow-file', ext: '.arrow', ingester: arrowIngester, own: copyAs('arrowfile') },
  { name: 'arrow-stream', ext: '.arrows', ingester: arrowIngester, own: copyAs('arrowstream') },
  { name: 'arrow-stream-hyper', ext: '.arrows', ingester: arrowIngester, own: copyAs('arrowstream') },
];

function csvText(rows: number): string {
  const lines = ['id,ts,name,amount'];
  for (let i = 0; i < rows; i++)
    lines.push(
      `${i},${new Date(1_700_000_000_000 + i * 1000).toISOString().replace('T', ' ').replace('Z', '')},name-${i % 1000},${i * 0.25}`,
    );
  return `${lines.join('\n')}\n`;
}

/** Makes every case's file in `dir`, with the writers named in its case. */
async function makeFiles(dir: string, pool: DbPool): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const path = (name: string, ext: string) => join(dir, `${name}${ext}`);
  const table = arrowRows(ROWS);
  await writeFile(path('csv', '.csv'), csvText(ROWS));
  files.set('csv', path('csv', '.csv'));
  await writeFile(path('arrow-file', '.arrow'), await new RecordBatchFileWriter().writeAll(table).toUint8Array());
  files.set('arrow-file', path('arrow-file', '.arrow'));
  await writeFile(path('arrow-stream', '.arrows'), await new RecordBatchStreamWriter().writeAll(table).toUint8Array());
  files.set('arrow-stream', path('arrow-stream', '.arrows'));
  await pool.query(`CREATE TABLE source_rows ${DDL}`);
  await pool.query(`COPY source_rows FROM '${path('csv', '.csv')}' WITH (FORMAT csv, HEADER true)`);
  await pool.query(`COPY (SELECT * FROM source_rows) TO '${path('parquet-hyper', '.parquet')}' WITH (FORMAT parquet)`);
  files.set('parquet-hyper', path('parquet-hyper', '.parquet'));
  await pool.query(`COPY (SELECT * FROM source_rows) TO '${path('arrow-stream-hyper', '.arrows')}' WITH (FORMAT arrowstream)`);
  files.set('arrow-stream-hyper', path('arrow-stream-hyper', '.arrows'));
  await pool.query('DROP TABLE source_rows');
  const duck = await DuckDBInstance.create(':memory:');
  const conn = await duck.connect();
  await conn.run(
    `COPY (SELECT id::BIGINT AS id, ts::TIMESTAMP AS ts, name, amount::DOUBLE AS amount FROM ` +
      `read_csv('${path('csv', '.csv')}', header = true)) TO '${path('parquet-duckdb', '.parquet')}' (FORMAT parquet)`,
  );
  conn.closeSync();
  files.set('parquet-duckdb', path('parquet-duckdb', '.parquet'));
  const ipc = await new RecordBatchStreamWriter().writeAll(table).toUint8Array();
  await writeFile(path('parquet-wasm', '.parquet'), parquetWasm.writeParquet(parquetWasm.Table.fromIPCStream(ipc)));
  files.set('parquet-wasm', path('parquet-wasm', '.parquet'));
  return files;
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: readonly number[]) => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;

/** A logger that prints the ingester's debug lines with their time since `t0`, when tracing. */
function traceLogger(t0: () => number): Logger {
  if (!TRACE) return silentLogger;
  const line = (level: string) => (message: string) => console.log(`    ${(performance.now() - t0()).toFixed(1)} ms ${level} ${message}`);
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}

/** When tracing, the connection with each of its calls printed: its time since `t0`, how long it took, its statement. */
function traced(conn: DbConnection, t0: number): DbConnection {
  if (!TRACE) return conn;
  const timed =
    <A extends unknown[], R>(what: string, fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const start = performance.now();
      try {
        return await fn(...args);
      } finally {
        const sql = typeof args[0] === 'string' ? args[0] : JSON.stringify(args[0]);
        console.log(`    ${(start - t0).toFixed(1)} ms +${(performance.now() - start).toFixed(1)} ms ${what} ${sql.slice(0, 90)}`);
      }
    };
  const query = timed('query', (sql: string, params?: readonly unknown[]) => conn.query(sql, params));
  return {
    query: query as DbConnection['query'],
    execute: timed('execute', conn.execute.bind(conn)),
    copyFrom: timed('copyFrom', conn.copyFrom.bind(conn)),
    describeTable: timed('describeTable', conn.describeTable.bind(conn)),
  };
}

/** hyperwatch: claim, BEGIN, ingester, COMMIT; ms. */
async function hyperwatchLoad(db: HyperAdapter, pool: DbPool, root: string, source: string, c: Case, table: string): Promise<number> {
  const inbox = join(root, 'inbox');
  const staging = join(root, 'staging');
  await mkdir(staging, { recursive: true });
  await mkdir(inbox, { recursive: true });
  const name = `f${c.ext}`;
  await copyFile(source, join(inbox, name));
  const id = randomUUID();
  let started = 0;
  const logger = traceLogger(() => started);
  started = performance.now();
  const claimed = claimFile(inbox, name, join(staging, `${id}-${name}`), { claimId: id, extension: c.ext });
  if (claimed.status !== 'claimed') throw new Error(`claim: ${claimed.status}`);
  const file = claimed.file;
  const ctx: IngestContext = {
    capabilities: db.capabilities,
    attempt: 1,
    fileState: new Map(),
    sqlType: (ty) => db.sqlType(ty),
    schema: { createTable: true },
    logger,
  };
  let rows = 0;
  try {
    rows = await pool.transaction(async (conn) => {
      if (TRACE) logger.debug('BEGIN returned');
      const r = await c.ingester.append(traced(conn, started), file, { name: table }, ctx);
      if (r.isErr()) throw new IngestFailure(r.error);
      if (TRACE) logger.debug('appended, committing');
      return r.value.rows;
    });
  } finally {
    file.close();
  }
  const ms = performance.now() - started;
  if (TRACE) logger.debug('committed');
  if (rows !== ROWS) throw new Error(`${c.name}: loaded ${rows} rows`);
  await rm(file.stagedPath, { force: true });
  return ms;
}

/** hyperd's log folder, from its command line. */
async function logDirOf(pid: number | undefined): Promise<string | undefined> {
  if (pid === undefined) return undefined;
  const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
  return args.find((a) => a.startsWith('--log-dir='))?.slice('--log-dir='.length);
}

/**
 * From hyperd's query log, per table: `load`, the server-side time (ms) of each load statement
 * (COPY/INSERT) into it; `commit`, the time its commit took: for hyperd's own load (autocommit)
 * the commit inside that statement, for hyperwatch the `COMMIT` that followed in its session.
 */
async function serverTimes(logDir: string | undefined): Promise<{ load: Map<string, number>; commit: Map<string, number> }> {
  const load = new Map<string, number>();
  const commit = new Map<string, number>();
  if (!logDir) return { load, commit };
  const lastTable = new Map<string, string>();
  for (const name of (await readdir(logDir)).sort()) {
    if (!name.endsWith('.log')) continue;
    for (const line of (await readFile(join(logDir, name), 'utf8')).split('\n')) {
      if (!line.includes('"k":"query-end"')) continue;
      const entry = JSON.parse(line) as { sess?: string; v: { elapsed: number; 'commit-time'?: number; 'query-trunc'?: string } };
      const sql = entry.v['query-trunc'] ?? '';
      const match = /^\s*(?:COPY|INSERT INTO)\s+(?:"[^"]*"\.)?"?((?:own|hw)_\d+)"?/i.exec(sql);
      if (match) {
        const table = match[1]!;
        load.set(table, (load.get(table) ?? 0) + entry.v.elapsed * 1000);
        if (table.startsWith('own_')) commit.set(table, (entry.v['commit-time'] ?? 0) * 1000);
        if (entry.sess) lastTable.set(entry.sess, table);
      } else if (/^\s*COMMIT/i.test(sql) && entry.sess && lastTable.has(entry.sess)) {
        commit.set(lastTable.get(entry.sess)!, entry.v.elapsed * 1000);
        lastTable.delete(entry.sess);
      }
    }
  }
  return { load, commit };
}

const root = await mkdtemp(join(tmpdir(), 'hw-format-bench-'));
const server = MODES.includes('endpoint') ? await startServer() : undefined;
try {
  const setups: [string, HyperAdapter][] = [];
  for (const mode of MODES) {
    const database = join(root, `${mode}.hyper`);
    setups.push([
      mode,
      mode === 'embedded'
        ? createHyperAdapter({ database, logger: silentLogger })
        : createHyperAdapter({ endpoint: server!.endpoint, database, endpointReadsFiles: 'yes', logger: silentLogger }),
    ]);
  }
  const dataDir = join(root, 'data');
  await mkdir(dataDir);
  let files: Map<string, string> | undefined;
  console.log(`${ROWS} rows, ${ROUNDS} rounds; ms, median (min–max); own / hyperwatch by the medians`);
  console.log('| file | MB | mode | hyperd own load | hyperwatch, fresh table | own/fresh | hyperwatch, existing table | own/existing |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const [mode, db] of setups) {
    const pool = await db.openPool({ maxConnections: 1 });
    try {
      files ??= await makeFiles(dataDir, pool);
      const logDir = await logDirOf(mode === 'embedded' ? db.hyperdPid : server!.pid);
      let n = 0;
      for (const c of CASES) {
        if (ONLY && !ONLY.has(c.name)) continue;
        const path = files.get(c.name)!;
        const own: number[] = [];
        const fresh: number[] = [];
        const existing: number[] = [];
        const tables = { own: [] as string[], fresh: [] as string[], existing: [] as string[] };
        for (let round = 0; round < ROUNDS; round++) {
          const a = `own_${n++}`;
          tables.own.push(a);
          await pool.query(`CREATE TABLE ${a} ${DDL}`);
          const t0 = performance.now();
          await pool.query(c.own(a, path));
          own.push(performance.now() - t0);
          const loaded = Number((await pool.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${a}`))[0]!.n);
          if (loaded !== ROWS) throw new Error(`${c.name}: own load of ${loaded} rows`);
          await pool.query(`DROP TABLE ${a}`);
          if (TRACE) console.log(`  ${mode} ${c.name} round ${round}: fresh`);
          const b = `hw_${n++}`;
          tables.fresh.push(b);
          fresh.push(await hyperwatchLoad(db, pool, root, path, c, b));
          await pool.query(`DROP TABLE ${b}`);
          if (TRACE) console.log(`  ${mode} ${c.name} round ${round}: existing`);
          const e = `hw_${n++}`;
          tables.existing.push(e);
          await pool.query(`CREATE TABLE ${e} ${DDL}`);
          existing.push(await hyperwatchLoad(db, pool, root, path, c, e));
          await pool.query(`DROP TABLE ${e}`);
        }
        const mb = (await stat(path)).size / 1e6;
        console.log(
          `| ${c.name} | ${mb.toFixed(1)} | ${mode} | ${spread(own)} | ${spread(fresh)} ` +
            `| ${(median(own) / median(fresh)).toFixed(2)}× | ${spread(existing)} ` +
            `| ${(median(own) / median(existing)).toFixed(2)}× |`,
        );
        const { load: times, commit } = await serverTimes(logDir);
        const inServer = (names: readonly string[]) => spread(names.map((t) => times.get(t) ?? NaN));
        const commits = (names: readonly string[]) => spread(names.map((t) => commit.get(t) ?? NaN));
        console.log(
          `|  | | ${mode}, in hyperd (query log: the load statement) | ${inServer(tables.own)} | ${inServer(tables.fresh)} ` +
            `| | ${inServer(tables.existing)} | |`,
        );
        // What hyperwatch adds around hyperd's statement, run by run: less moved by the machine's load than the totals.
        const outside = (runs: readonly number[], names: readonly string[]) =>
          spread(runs.map((ms, k) => ms - (times.get(names[k]!) ?? NaN)));
        console.log(
          `|  | | ${mode}, outside the load statement | ${outside(own, tables.own)} | ${outside(fresh, tables.fresh)} | ` +
            `| ${outside(existing, tables.existing)} | |`,
        );
        console.log(
          `|  | | ${mode}, commit in hyperd (own: inside its statement; hyperwatch: its COMMIT) | ${commits(tables.own)} ` +
            `| ${commits(tables.fresh)} | | ${commits(tables.existing)} | |`,
        );
        if (TRACE)
          console.log(
            `  runs: own ${own.map((x) => x.toFixed(0)).join(' ')}; fresh ${fresh.map((x) => x.toFixed(0)).join(' ')}; ` +
              `existing ${existing.map((x) => x.toFixed(0)).join(' ')}`,
          );
      }
    } finally {
      await pool.close();
      await db.close();
    }
  }
} finally {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
}
