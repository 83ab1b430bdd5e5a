/**
 * What every workload of `npm run bench` shares within one run: the bench's hyperd and database,
 * the compiled watcher, the working folders, the sizes, and the helpers that name tables, build a
 * watcher's job and check a table's rows.
 */
import type { Sizes } from './config.ts';
import { countRows, dropTable, type Server, withSession } from './server.ts';
import type { WorkerJob } from './job.ts';

export interface BenchContext {
  readonly server: Server;
  /** The `.hyper` file every load goes into. */
  readonly database: string;
  /** The compiled watcher worker (see watch-run.ts). */
  readonly workerJs: string;
  /** The run's temporary folder; inboxes are made in it. */
  readonly work: string;
  /** Next to the inboxes, on the same filesystem: where producers write before renaming in. */
  readonly outside: string;
  readonly sizes: Sizes;
  /** Extra WatchOptions for every watcher (`--watch`). */
  readonly watch: Record<string, unknown> | undefined;
  /** A table name no other load of the run uses: `${prefix}_${n}`. */
  readonly tableName: (prefix: string) => string;
  readonly log: (message: string) => void;
}

/** The worker's job: watch `dir` into `table` until `expectFiles` files settled. */
export function jobFor(
  ctx: BenchContext,
  dir: string,
  table: string,
  expectFiles: number,
  timeoutMs: number,
  extra?: Record<string, unknown>,
): WorkerJob {
  return {
    dir,
    table,
    database: ctx.database,
    endpoint: ctx.server.endpoint,
    expectFiles,
    timeoutMs,
    ...(ctx.watch || extra ? { watch: { ...ctx.watch, ...extra } } : {}),
  };
}

/** Whether `table` holds `rows` rows (said in the log when not); the table is dropped either way. */
export function verifyCount(ctx: BenchContext, table: string, rows: number): Promise<boolean> {
  return withSession(ctx.server, ctx.database, async (sql) => {
    const n = await countRows(sql, table);
    await dropTable(sql, table);
    if (n !== rows) ctx.log(`WRONG: ${table} has ${n} rows, expected ${rows}`);
    return n === rows;
  });
}

/** At most `n` evenly spaced values of a series, for the JSON. */
export function thin(series: readonly number[], n = 120): number[] {
  if (series.length <= n) return [...series];
  return Array.from({ length: n }, (_, i) => series[Math.round((i * (series.length - 1)) / (n - 1))]!);
}
