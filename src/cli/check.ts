/** `hyperwatch check`: what a file would do, without dropping it (see src/check/check-file.ts). */
import process from 'node:process';
import { type CheckResult, CHECK_ROWS, checkFile } from '../check/check-file.ts';
import { dbChoiceFromFlags, flagsHelp, WATCH_FLAG_ENTRIES, WATCH_FLAGS, watchOptionsFromFlags } from '../options/flags.ts';
import { DB_FLAGS, DB_HELP, dbFromFlags, parse, printRows, toJson, UsageError } from './util.ts';

export const CHECK_HELP = `Usage: hyperwatch check <file> [--table <name>] [options]

What the file would do if dropped into a watched directory with these options: the table it
would create (or how it fits the existing table: the columns it fills, those it leaves empty,
those it would add), the first rows as they would land, and the .error report it would get.
The file is copied, never moved; it is ingested by the watcher itself into a scratch .hyper
file that is thrown away (on PostgreSQL: in a transaction that is rolled back), so nothing is
written to your database. Exit 0 when the file would land, 1 when it
would fail, 2 for a usage error.

Options:
  --table <name>          the table the file would go to (default: the file's name up to its
                          first dot); when it exists in the database, the file meets its columns
  --dir <folder>          the watched directory the file is in: the file is named by its path
                          below it, and with --partition-columns each folder between is a
                          key=value column (default: the folder above the key=value folders
                          the file is in; with --ready marker, above its job folder too)
  --rows <n>              how many rows to show (default ${CHECK_ROWS})
  --json                  print the result as one JSON object on stdout
${DB_HELP}
${flagsHelp(WATCH_FLAG_ENTRIES)}
  -h, --help`;

function rowsFlag(value: string | undefined): number {
  if (value === undefined) return CHECK_ROWS;
  if (!/^\d+$/.test(value)) throw new UsageError(`--rows is a count of rows (0 or more), got ${JSON.stringify(value)}`);
  return Number(value);
}

/** A flag's word as a shell takes it: quoted when it holds anything but plain characters. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_.,%/:=+-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** What the head of the file shows of its dialect beyond the flags given (`hyperwatch check` suggests it). */
function sniffLines(result: CheckResult, applied: boolean): string[] {
  const sniffed = result.sniffed;
  if (!sniffed) return [];
  const lines: string[] = [];
  const how = applied ? '(applied by --sniff)' : '(pass them, or --sniff)';
  if (sniffed.flags.length > 0) lines.push(`${result.file} reads as written with: ${sniffed.flags.map(shellWord).join(' ')} ${how}`);
  for (const u of sniffed.undecided)
    lines.push(`${result.file} reads more than one way: ${u.setting} could be ${u.candidates.join(' or ')} (${u.why})`);
  return lines;
}

function describe(result: CheckResult, sniffing: boolean): string {
  const { table } = result;
  const lines: string[] = [];
  const columns = (names: readonly string[]) => (names.length > 0 ? names.join(', ') : '(none)');
  if (result.lands && table.created) lines.push(`${result.file} would create table ${table.name}:`);
  else if (result.lands && table.fits) {
    lines.push(`${result.file} fits table ${table.name}:`);
    lines.push(`  columns it fills: ${columns(table.fits.matching)}`);
    if (table.fits.empty.length > 0) lines.push(`  left NULL in every row: ${columns(table.fits.empty)}`);
    if (table.fits.added.length > 0) lines.push(`  columns it would add: ${columns(table.fits.added)}`);
    lines.push(`table ${table.name} would then be:`);
  } else if (result.lands) lines.push(`${result.file} would land no row and create no table ${table.name}`);
  else {
    lines.push(`${result.file} would fail (${String(result.error?.code ?? 'error')}) and land nothing in ${table.name}`);
    if (table.columns.length > 0) lines.push(`table ${table.name} has:`);
  }
  if (table.columns.length > 0) {
    const width = Math.max(...table.columns.map((c) => c.name.length));
    for (const c of table.columns) lines.push(`  ${c.name.padEnd(width)}  ${c.type}`);
  }
  lines.push(...sniffLines(result, sniffing));
  if (result.lands) {
    lines.push(`${result.rowCount} row${result.rowCount === 1 ? '' : 's'} would land`);
    if (result.rejected > 0)
      lines.push(`${result.rejected} rejected row${result.rejected === 1 ? '' : 's'} would go to failed/ (*.rejected.*)`);
    if (result.rows.length > 0) lines.push(result.rows.length < result.rowCount ? `the first ${result.rows.length}:` : 'they are:');
  } else {
    lines.push(`${result.file} would go to failed/ with this .error:`);
    lines.push(JSON.stringify(result.error, null, 2));
  }
  return lines.join('\n');
}

export async function checkCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    table: { type: 'string' },
    dir: { type: 'string' },
    rows: { type: 'string' },
    json: { type: 'boolean' },
    ...DB_FLAGS,
    ...WATCH_FLAGS,
  });
  if (values.help) {
    process.stdout.write(`${CHECK_HELP}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('check expects exactly one file');
  const rows = rowsFlag(values.rows);
  const options = watchOptionsFromFlags(values);
  if ('problem' in options) throw new UsageError(options.problem);
  const choice = dbChoiceFromFlags(values);
  if ('problem' in choice) throw new UsageError(choice.problem);
  const postgres = choice.value.adapter === 'postgres';
  // Checked as for watch (a wrong mixture of database flags is a usage error); opened only to read.
  const db = postgres ? dbFromFlags(values) : undefined;
  try {
    const result = await checkFile(positionals[0]!, {
      ...options.value,
      rows,
      ...(values.table !== undefined ? { table: values.table } : {}),
      ...(values.dir !== undefined ? { dir: values.dir } : {}),
      ...(db ? { db } : {}),
      ...(choice.value.database !== undefined ? { database: choice.value.database } : {}),
      ...(choice.value.endpoint !== undefined ? { endpoint: choice.value.endpoint } : {}),
      ...(choice.value.databaseVersion !== undefined ? { databaseVersion: choice.value.databaseVersion } : {}),
    });
    if (values.json) process.stdout.write(`${toJson(result)}\n`);
    else {
      process.stdout.write(`${describe(result, (values as { sniff?: unknown }).sniff === true)}\n`);
      if (result.lands && result.rows.length > 0) printRows(result.rows, false);
    }
    return result.lands ? 0 : 1;
  } finally {
    await db?.close();
  }
}
