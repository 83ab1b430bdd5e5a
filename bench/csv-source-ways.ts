/**
 * Ways of loading a CSV file with a constant source column on the embedded hyperd, timed against
 * hyperd's own `COPY t FROM 'path'` of the same file (no source column), interleaved round by
 * round (every other round in reverse order) on one server: `node --import tsx bench/csv-source-ways.ts [rows] [rounds] [ways]`
 * (default 1000000 rows, 9 rounds, every way). Each load runs on a fresh table in its own
 * statement (autocommit: the commit, where a plain INSERT writes its rows, is timed too) and is
 * checked by count. Prints each way's milliseconds, median and spread, and the per-round ratio
 * of COPY's time to each way's (1.0 = as fast as COPY; the rows/s ratio).
 */
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quoteIdent, quoteLiteral } from '../src/columns/sql.ts';
import { TABLE_COLUMNS, writeRows } from './lib/data.ts';
import { createDatabase, startServer } from './lib/server.ts';
import { printWays, timeWays, type Way } from './lib/ways.ts';

const rows = Number(process.argv[2] ?? 1_000_000);
const rounds = Number(process.argv[3] ?? 9);
const work = join(tmpdir(), 'hyperwatch-csv-source-ways');
await mkdir(work, { recursive: true });
const path = join(work, `rows-${rows}.csv`);
if (!existsSync(path)) await writeRows(path, 'csv', { rows }, 42);

const columns = TABLE_COLUMNS.map(([n]) => quoteIdent(n)).join(', ');
const descriptor = TABLE_COLUMNS.map(([n, t]) => `${quoteIdent(n)} ${t}`).join(', ');
const external = `external(${quoteLiteral(path)}, COLUMNS => DESCRIPTOR(${descriptor}), FORMAT => 'csv', HEADER => true, DELIMITER => ',')`;
const named = (t: string) => `${t} (${columns}, "_source_file")`;

/** What each way runs on table `t`, and whether its table has the source column. */
const WAYS: Record<string, { readonly source: boolean; readonly sql: (t: string) => string }> = {
  copy: { source: false, sql: (t) => `COPY ${t} FROM ${quoteLiteral(path)} WITH (FORMAT csv, HEADER true)` },
  'insert-bulk': { source: true, sql: (t) => `INSERT BULK INTO ${named(t)} SELECT ${columns}, 'rows.csv' FROM ${external}` },
  insert: { source: true, sql: (t) => `INSERT INTO ${named(t)} SELECT ${columns}, 'rows.csv' FROM ${external}` },
  'insert-no-constant': { source: false, sql: (t) => `INSERT INTO ${t} SELECT * FROM ${external}` },
  'copy-column-list': { source: true, sql: (t) => `COPY ${t} (${columns}) FROM ${quoteLiteral(path)} WITH (FORMAT csv, HEADER true)` },
};
const ways = (process.argv[4] ?? 'copy,insert-bulk,insert').split(',');
for (const w of ways) if (!WAYS[w]) throw new Error(`unknown way ${w}; one of ${Object.keys(WAYS).join(', ')}`);

const server = await startServer();
const database = join(work, 'ways.hyper');
const chosen: Record<string, Way> = Object.fromEntries(
  ways.map((w) => {
    const { source, sql: statement } = WAYS[w]!;
    const way: Way = {
      load: (sql, table) => sql.unsafe(statement(quoteIdent(table))),
      ...(source ? { prepare: (sql, table) => sql.unsafe(`ALTER TABLE ${quoteIdent(table)} ADD COLUMN "_source_file" TEXT`) } : {}),
    };
    return [w, way];
  }),
);
const load = avg();
let ms: Record<string, number[]>;
try {
  await createDatabase(server, database);
  ms = await timeWays(server, database, chosen, { rounds, rows, prefix: 'ways' });
} finally {
  await server.stop();
}

function avg(): string {
  return execSync('uptime')
    .toString()
    .trim()
    .replace(/^.*load average: /, '');
}
console.log(`${rows} rows, ${rounds} rounds; load average at the start ${load}, at the end ${avg()}`);
printWays(ms, 'copy', ways.includes('copy') ? ways.filter((w) => w !== 'copy') : []);
