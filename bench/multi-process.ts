/**
 * Flood throughput of 1, 2, 4... `hyperwatch watch` processes on one inbox: the processes start
 * on an empty directory, then `--files` small CSV files (`--rows` rows each) are dropped as fast
 * as possible, and the clock runs from the first drop until the table holds every row.
 *
 *   node --import tsx bench/multi-process.ts --side-by-side [--processes 1,2,4] [--files 2000] [--rows 100] [--rounds 3]
 *   node --import tsx bench/multi-process.ts --adapter postgres --url postgres://... [--processes 1,2,4]
 *   node --import tsx bench/multi-process.ts --endpoint 127.0.0.1:7483 --database /abs/bench.hyper [...]
 *
 * `--side-by-side` starts a throwaway PostgreSQL and one standalone hyperd itself and runs every
 * process count on both, interleaved (round 1: 1 process on PostgreSQL, 1 on hyperd, 2 on
 * PostgreSQL, ...), so that both see the same machine load. Each run uses a fresh directory and
 * a fresh table. Besides files/s it reports the CPU seconds the watchers and the database server
 * used during the run, and the whole machine's busy share (Linux /proc): what the run was
 * short of. Prints a Markdown table, and JSON lines with `--json`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { createDbAdapter } from '../src/compose.ts';
import type { DbAdapter, DbPool } from '../src/types.ts';
import { startPostgres } from '../test/helpers/postgres.ts';
import { startStandaloneHyperd } from '../test/helpers/standalone-hyperd.ts';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const counts = (arg('processes') ?? '1,2,4').split(',').map(Number);
const files = Number(arg('files') ?? 2000);
const rows = Number(arg('rows') ?? 100);
const rounds = Number(arg('rounds') ?? 1);
const root = await mkdtemp(join(tmpdir(), 'hyperwatch-bench-multi-'));
const bin = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..', 'src', 'bin.ts');

/** One database the processes write to: the flags they get, a pool to count rows, and the server's pid (for its CPU). */
interface Target {
  readonly label: string;
  readonly flags: readonly string[];
  readonly db: DbAdapter;
  readonly pool: DbPool;
  /** The server process; its children (PostgreSQL's backends) count too. */
  readonly serverPid: number | undefined;
  readonly stop: () => Promise<void>;
}

async function target(label: string, flags: string[], serverPid: number | undefined, stop: () => Promise<void>): Promise<Target> {
  const db = createDbAdapter({
    adapter: arg2(flags, 'adapter'),
    url: arg2(flags, 'url'),
    endpoint: arg2(flags, 'endpoint'),
    database: arg2(flags, 'database'),
  });
  const pool = await db.openPool({ maxConnections: 1 });
  return { label, flags, db, pool, serverPid, stop };
}

function arg2(flags: readonly string[], name: string): string | undefined {
  const i = flags.indexOf(`--${name}`);
  return i >= 0 ? flags[i + 1] : undefined;
}

async function targets(): Promise<Target[]> {
  if (!process.argv.includes('--side-by-side')) {
    const flags = ['adapter', 'url', 'endpoint', 'database'].flatMap((k) => (arg(k) !== undefined ? [`--${k}`, arg(k)!] : []));
    return [await target('database', flags, arg('server-pid') ? Number(arg('server-pid')) : undefined, async () => {})];
  }
  const pg = await startPostgres();
  const pgPid = Number(readFileSync(join(pg.root, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const logDir = join(root, 'hyperd-log');
  await mkdir(logDir);
  const hyperd = await startStandaloneHyperd({ user: 'hyperwatch', logDir });
  return [
    await target('PostgreSQL', ['--adapter', 'postgres', '--url', pg.url], pgPid, () => pg.stop()),
    await target(
      'shared hyperd',
      ['--endpoint', `127.0.0.1:${hyperd.port}`, '--database', join(root, 'bench.hyper')],
      hyperd.child.pid,
      () => hyperd.stop(),
    ),
  ];
}

/** utime + stime of a process, in seconds (Linux); 0 when it is gone or /proc is missing. */
function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds of `pid` and of its children (PostgreSQL's backends). */
function serverCpu(pid: number | undefined): number {
  if (pid === undefined) return 0;
  let total = cpuOf(pid);
  for (const name of safeList('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(
        readFileSync(`/proc/${name}/stat`, 'utf8')
          .replace(/^.*\) /, '')
          .split(' ')[1],
      );
      if (ppid === pid) total += cpuOf(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Busy and total jiffies of the whole machine (all cores), from /proc/stat. */
function machine(): { busy: number; total: number } {
  try {
    const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
    const total = values.reduce((a, b) => a + b, 0);
    return { busy: total - values[3]! - values[4]!, total };
  } catch {
    return { busy: 0, total: 0 };
  }
}

async function rowsIn(pool: DbPool, table: string): Promise<number> {
  try {
    const [r] = await pool.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${table}`);
    return Number(r?.n ?? 0);
  } catch {
    return 0;
  }
}

interface Result {
  readonly database: string;
  readonly round: number;
  readonly processes: number;
  readonly seconds: number;
  readonly filesPerSecond: number;
  readonly rowsPerSecond: number;
  /** CPU seconds of all watcher processes together, and of the database server, during the run. */
  readonly watcherCpu: number;
  readonly serverCpu: number;
  /** Share of the machine's CPU (all cores) that was busy during the run, any process. */
  readonly machineBusy: number;
}

async function run(t: Target, n: number, round: number): Promise<Result> {
  const dir = join(root, `${t.label.replace(/\W/g, '')}-p${n}-r${round}`);
  await mkdir(dir);
  const table = `bench_multi_${n}_${Date.now()}`;
  const children: ChildProcess[] = Array.from({ length: n }, () =>
    spawn(process.execPath, ['--import', 'tsx', bin, 'watch', dir, '--table', table, '--quiet', ...t.flags], {
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  // Started: each has its lease (a row in hyperwatch_internal.leases for this directory).
  const deadline = Date.now() + 60_000;
  while (
    Number(
      (
        await t.pool
          .query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM hyperwatch_internal.leases WHERE directory = '${dir}'`)
          .catch(() => [{ n: 0 }])
      )[0]!.n,
    ) !== n
  ) {
    if (Date.now() > deadline) throw new Error(`the ${n} processes did not start within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const body = `id,payload\n${Array.from({ length: rows }, (_, i) => `${i},row-${i}`).join('\n')}\n`;
  const cpu0 = children.reduce((s, c) => s + cpuOf(c.pid!), 0);
  const server0 = serverCpu(t.serverPid);
  const machine0 = machine();
  const started = performance.now();
  for (let f = 0; f < files; f++) {
    const name = `f${f}.csv`;
    await writeFile(join(dir, `.${name}.tmp`), body);
    await rename(join(dir, `.${name}.tmp`), join(dir, name));
    await writeFile(join(dir, `${name}.ready`), '');
  }
  while ((await rowsIn(t.pool, table)) < files * rows) await new Promise((r) => setTimeout(r, 50));
  const seconds = (performance.now() - started) / 1000;
  const watcherCpu = children.reduce((s, c) => s + cpuOf(c.pid!), 0) - cpu0;
  const server = serverCpu(t.serverPid) - server0;
  const machine1 = machine();
  for (const c of children) c.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(undefined) : c.once('exit', r)))));
  await rm(dir, { recursive: true, force: true });
  const machineBusy = machine1.total > machine0.total ? (machine1.busy - machine0.busy) / (machine1.total - machine0.total) : 0;
  return {
    database: t.label,
    round,
    processes: n,
    seconds,
    filesPerSecond: files / seconds,
    rowsPerSecond: (files * rows) / seconds,
    watcherCpu,
    serverCpu: server,
    machineBusy,
  };
}

const all = await targets();
const results: Result[] = [];
try {
  for (let round = 1; round <= rounds; round++) {
    for (const n of counts) {
      for (const t of all) {
        const r = await run(t, n, round);
        results.push(r);
        if (process.argv.includes('--json')) console.log(JSON.stringify({ files, rows, ...r }));
        else console.error(`# round ${round}: ${t.label}, ${n} processes: ${Math.round(r.filesPerSecond)} files/s`);
      }
    }
  }
} finally {
  for (const t of all) {
    await t.pool.close();
    await t.db.close();
    await t.stop();
  }
  await rm(root, { recursive: true, force: true });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
if (!process.argv.includes('--json')) {
  console.log(`${files} files x ${rows} rows, ${rounds} round(s), median [min-max] of the rounds\n`);
  console.log('| database | processes | files/s | rows/s | watchers CPU s | server CPU s | machine busy |\n|---|---|---|---|---|---|---|');
  for (const t of all) {
    for (const n of counts) {
      const rs = results.filter((r) => r.database === t.label && r.processes === n);
      const fps = rs.map((r) => r.filesPerSecond);
      console.log(
        `| ${t.label} | ${n} | ${Math.round(median(fps))} [${Math.round(Math.min(...fps))}-${Math.round(Math.max(...fps))}] ` +
          `| ${Math.round(median(rs.map((r) => r.rowsPerSecond)))} | ${median(rs.map((r) => r.watcherCpu)).toFixed(1)} ` +
          `| ${median(rs.map((r) => r.serverCpu)).toFixed(1)} | ${Math.round(100 * median(rs.map((r) => r.machineBusy)))}% |`,
      );
    }
  }
}
