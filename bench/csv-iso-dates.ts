/**
 * A CSV file with a TIMESTAMP column into hyperd, the ways the CSV plugin can load it, interleaved
 * round by round (every other round in reverse order) on one server and timed against hyperd's own
 * `COPY t FROM 'path'` alone:
 * - `copy+checks`: the COPY with the watcher's text check (UTF-8, quotes) and its ISO date check
 *   (plugins/csv/iso-date-check.ts) reading the file beside it, as the plugin loads a file whose
 *   dates are ISO;
 * - `case`: `INSERT BULK ... SELECT CASE ... FROM external()` with the text check beside it, the
 *   statement that reads dates in other forms (plugins/shared/date-sql.ts), as the plugin loads a
 *   file whose dates are not all ISO.
 * Also each check alone (no database), for its own cost.
 *
 *   node --import tsx bench/csv-iso-dates.ts [rows=1000000] [rounds=7]
 */
import { existsSync } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IsoDateCheck } from '../plugins/csv/iso-date-check.ts';
import { checkText } from '../plugins/csv/text-check.ts';
import { dateSql } from '../plugins/shared/date-sql.ts';
import { quoteIdent, quoteLiteral } from '../src/columns/sql.ts';
import type { ClaimedFile } from '../src/types.ts';
import { TABLE_COLUMNS, writeRows } from './lib/data.ts';
import { createDatabase, startServer } from './lib/server.ts';
import { printWays, timeWays, type Way } from './lib/ways.ts';

const rows = Number(process.argv[2] ?? 1_000_000);
const rounds = Number(process.argv[3] ?? 7);
const work = join(tmpdir(), 'hyperwatch-csv-iso-dates');
await mkdir(work, { recursive: true });
const path = join(work, `rows-${rows}.csv`);
if (!existsSync(path)) await writeRows(path, 'csv', { rows }, 42);

// The file as the plugin's checks read it (only what they use of a claimed file).
const handle = await open(path);
const size = (await handle.stat()).size;
const file = {
  name: 'rows.csv',
  size,
  read: async (position: number, length: number) => {
    const bytes = Buffer.alloc(length);
    const { bytesRead } = await handle.read(bytes, 0, length, position);
    return bytes.subarray(0, bytesRead);
  },
  readInto: async (buffer: Uint8Array, position: number) => {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    return buffer.subarray(0, bytesRead);
  },
} as unknown as ClaimedFile;
const text = { delimiter: ',', quote: '"', escape: '"', header: true, skipLines: 0 } as const;
const dateFields = TABLE_COLUMNS.flatMap(([, type], i) => (type.startsWith('TIMESTAMP') ? [i] : []));
const isoCheck = () => new IsoDateCheck(text, dateFields);

const copy = (t: string) => `COPY ${t} FROM ${quoteLiteral(path)} WITH (FORMAT csv, HEADER true)`;
const descriptor = TABLE_COLUMNS.map(([n, t], i) => `${quoteIdent(n)} ${dateFields.includes(i) ? 'text' : t}`).join(', ');
const select = TABLE_COLUMNS.map(([n, t], i) =>
  dateFields.includes(i) ? dateSql(quoteIdent(n), t, { withTime: true, order: 'DMY' })! : quoteIdent(n),
).join(', ');
const statement = (t: string) =>
  `INSERT BULK INTO ${t} SELECT ${select} FROM external(${quoteLiteral(path)}, COLUMNS => DESCRIPTOR(${descriptor}), ` +
  `FORMAT => 'csv', HEADER => true, DELIMITER => ',')`;

// Each way's load, with what the plugin reads beside it.
const beside =
  (sql: (t: string) => string, check?: () => Promise<void>): Way['load'] =>
  (db, table) =>
    Promise.all([db.unsafe(sql(quoteIdent(table))), check?.()]);
const WAYS: Record<string, Way> = {
  copy: { load: beside(copy) },
  'copy+checks': { load: beside(copy, () => checkText(file, { ...text }, undefined, isoCheck())) },
  case: { load: beside(statement, () => checkText(file, { ...text })) },
};

// Each check alone (no database), once per round.
const alone: Record<string, number[]> = { 'text check alone': [], 'text+ISO check alone': [] };
async function checksAlone(): Promise<void> {
  let start = performance.now();
  await checkText(file, { ...text });
  alone['text check alone']!.push(Math.round(performance.now() - start));
  start = performance.now();
  const check = isoCheck();
  await checkText(file, { ...text }, undefined, check);
  if (check.problem !== undefined) throw new Error(`the ISO check found a problem at byte ${check.problem}`);
  alone['text+ISO check alone']!.push(Math.round(performance.now() - start));
}

const server = await startServer();
const database = join(work, 'iso-dates.hyper');
let ms: Record<string, number[]>;
try {
  await createDatabase(server, database);
  ms = await timeWays(server, database, WAYS, { rounds, rows, prefix: 'iso', afterRound: checksAlone });
} finally {
  await server.stop();
  await handle.close();
}

console.log(`${rows} rows (${(size / 1e6).toFixed(1)} MB), ${rounds} rounds`);
printWays({ ...ms, ...alone }, 'copy', ['copy+checks', 'case']);
