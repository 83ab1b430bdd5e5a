/**
 * `node --import tsx bench/export.ts [--rows 1000000] [--runs 3]`: times `exportExtract` of one
 * table of that many rows (BIGINT, NUMERIC(18,2), TEXT, DATE, TIMESTAMP, TIMESTAMPTZ, BOOLEAN,
 * DOUBLE), from a file of Tableau's role and from one of the old role `hyperwatch`, start to
 * end: both hyperds started, the rows streamed, the new file written out and renamed into place.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createHyperAdapter, LEGACY_ROLE, TABLEAU_ROLE } from '../adapters/db/hyper/index.ts';
import { exportExtract } from '../src/export/extract.ts';
import { lineLogger } from '../src/log.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '3' } } });
const rows = Number(values.rows);
const runs = Number(values.runs);
const root = await mkdtemp(join(tmpdir(), 'hyperwatch-bench-export-'));

async function source(role: string): Promise<string> {
  const database = join(root, `${role}.hyper`);
  const db = createHyperAdapter({ database, user: role, announce: false, logger: lineLogger((l) => console.error(l), { level: 'warn' }) });
  try {
    const pool = await db.openPool({ maxConnections: 1 });
    await pool.query(
      'CREATE TABLE t (id BIGINT NOT NULL, amount NUMERIC(18,2), name TEXT, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ, ok ' +
        'BOOLEAN, x DOUBLE PRECISION)',
    );
    await pool.query(
      `INSERT INTO t SELECT g, g * 0.01, 'name-' || g::text, DATE '2000-01-01' + (g % 9000)::int, TIMESTAMP '2000-01-01 ` +
        `00:00:00' + g * INTERVAL '1 second',
              TIMESTAMPTZ '2000-01-01 00:00:00+00' + g * INTERVAL '1 second', g % 2 = 0, g / 7.0 FROM generate_series(1, ${rows}) g`,
    );
    await pool.close();
  } finally {
    await db.close();
  }
  return database;
}

try {
  for (const role of [TABLEAU_ROLE, LEGACY_ROLE]) {
    const database = await source(role);
    const times: number[] = [];
    for (let run = 0; run < runs; run++) {
      const to = join(root, `out-${role}.hyper`);
      const result = await exportExtract({ database, table: 't', to, force: true });
      if (result.rows !== rows) throw new Error(`exported ${result.rows} rows, not ${rows}`);
      times.push(result.seconds);
    }
    const size = (await stat(database)).size;
    console.log(`${role.padEnd(21)} ${rows} rows (${(size / 2 ** 20).toFixed(0)} MiB): ${times.map((t) => t.toFixed(2)).join(' s, ')} s`);
  }
} finally {
  await rm(root, { recursive: true, force: true });
}
