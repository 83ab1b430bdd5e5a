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
import { countRows, createDatabase, dropTable, freshTable, startServer, withSession } from './lib/server.ts';

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
const ms: Record<string, number[]> = Object.fromEntries(ways.map((w) => [w, []]));
const load = avg();
try {
  await createDatabase(server, database);
  for (let round = 0; round < rounds; round++) {
    // Every other round in reverse order, so no way always runs first (on a cold cache) or last.
    for (const way of round % 2 ? [...ways].reverse() : ways) {
      const { source, sql: statement } = WAYS[way]!;
      const table = `ways_${way.replaceAll('-', '_')}_${round}`;
      const took = await withSession(server, database, async (sql) => {
        await freshTable(sql, table);
        if (source) await sql.unsafe(`ALTER TABLE ${quoteIdent(table)} ADD COLUMN "_source_file" TEXT`);
        const start = performance.now();
        await sql.unsafe(statement(quoteIdent(table)));
        const took = performance.now() - start;
        const n = await countRows(sql, table);
        await dropTable(sql, table);
        if (n !== rows) throw new Error(`${way}: ${n} rows, expected ${rows}`);
        return took;
      });
      ms[way]!.push(Math.round(took));
    }
  }
} finally {
  await server.stop();
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
function avg(): string {
  return execSync('uptime')
    .toString()
    .trim()
    .replace(/^.*load average: /, '');
}
console.log(`${rows} rows, ${rounds} rounds; load average at the start ${load}, at the end ${avg()}`);
for (const way of ways)
  console.log(
    `${way.padEnd(20)} median ${median(ms[way]!)} ms (min ${Math.min(...ms[way]!)}, max ${Math.max(...ms[way]!)}): ${ms[way]!.join(' ')}`,
  );
for (const way of ways.filter((w) => w !== 'copy' && ways.includes('copy'))) {
  const ratios = ms[way]!.map((t, i) => ms.copy![i]! / t);
  console.log(
    `copy / ${way.padEnd(13)} per round: median ${median(ratios).toFixed(2)} (min ${Math.min(...ratios).toFixed(2)}, ` +
      `max ${Math.max(...ratios).toFixed(2)})`,
  );
}
