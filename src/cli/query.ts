/** `hyperwatch query`: one SQL statement, its rows printed. */
import process from 'node:process';
import { DB_FLAGS, DB_HELP, parse, printRows, readerDbFromFlags, UsageError } from './util.ts';
import type { DbPool } from '../types.ts';

const HELP = `Usage: hyperwatch query [options] [--json] "<sql>"

Runs one SQL statement against the database and prints the rows (--json: a JSON array).
On Hyper, a .hyper file that a running hyperwatch holds is read through that process's hyperd.
Dates and times print as the database writes them, the same strings in --json: DATE 2018-01-28,
TIME 10:15:00, TIMESTAMP 2018-01-28 10:15:00.5 (no zone), TIMESTAMPTZ 2018-01-28 10:15:00+00.

Options:
${DB_HELP}`;

export async function queryCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { ...DB_FLAGS, json: { type: 'boolean' } });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('query expects one SQL statement (quote it)');
  // Dates as the database has them: 2018-01-28, not the instant 2018-01-28T00:00:00.000Z.
  const reader = readerDbFromFlags(values, { datesAsText: true });
  let pool: DbPool | undefined;
  try {
    pool = await reader.db.openPool({ maxConnections: 1 });
    printRows(await pool.query(positionals[0]!), values.json === true);
    return 0;
  } finally {
    await reader.close(pool);
  }
}
