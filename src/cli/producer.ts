/** `hyperwatch drop`, `hyperwatch replay` and `hyperwatch history`. */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import process from 'node:process';
import { DB_FLAGS, DB_HELP, parse, printRows, readerDbFromFlags, toJson, UsageError } from './util.ts';
import { dropFile } from '../producer/drop.ts';
import { parseSince, readHistory } from '../store/history.ts';
import { replayFailed } from '../producer/replay.ts';
import { parseTableName, tableLabel } from '../columns/sql.ts';
import type { DbPool } from '../types.ts';

export const DROP_HELP = `Usage: hyperwatch drop <file> <dir> [--name <name>]

Copies <file> into the watched directory <dir> the safe way: to a temporary dot-name, flushed to
disk, renamed to its name (--name, default the file's own), the directory flushed, then the
<name>.ready sentinel created. Refuses when <name> is already waiting in <dir>.`;

export const REPLAY_HELP = `Usage: hyperwatch replay <dir>/failed/<file>

After fixing a failed file in place, moves it back into <dir> under the name it was dropped as,
removes its old .ready and .error, and creates a new sentinel. Refuses when that name is
already waiting in <dir>.`;

export const HISTORY_HELP = `Usage: hyperwatch history [--since <time>] [--table <name>] [--json] [options]

Prints the ledger: each file committed, when, into which table, with its rows and bytes.
  --since <time>          an ISO date or time (2024-06-01, 2024-06-01T12:00:00Z) or a
                          duration back from now (90s, 15m, 2h, 7d, 1w)
  --table <name>          only files appended to this table
  --json                  a JSON array
${DB_HELP}`;

export async function dropCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, { name: { type: 'string' } });
  if (values.help) {
    process.stdout.write(`${DROP_HELP}\n`);
    return 0;
  }
  if (positionals.length !== 2) throw new UsageError('drop expects a file and a directory: hyperwatch drop <file> <dir>');
  const [file, dir] = positionals as [string, string];
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw new UsageError(`${file} is not a readable file`);
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) throw new UsageError(`${dir} is not a directory`);
  const result = await dropFile(dir, values.name ?? basename(file), createReadStream(file));
  process.stdout.write(`dropped ${result.path} (${result.bytes} bytes) and ${basename(result.readyPath)}\n`);
  return 0;
}

export async function replayCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {});
  if (values.help) {
    process.stdout.write(`${REPLAY_HELP}\n`);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('replay expects one failed file: hyperwatch replay <dir>/failed/<file>');
  const result = await replayFailed(positionals[0]!);
  process.stdout.write(`replayed ${result.failedAs} as ${result.path}, with ${basename(result.readyPath)}\n`);
  return 0;
}

export async function historyCommand(args: string[]): Promise<number> {
  const { values, positionals } = parse(args, {
    ...DB_FLAGS,
    since: { type: 'string' },
    table: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (values.help) {
    process.stdout.write(`${HISTORY_HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError('history takes no arguments besides its options');
  const since = values.since === undefined ? undefined : parseSince(values.since);
  if (values.since !== undefined && !since)
    throw new UsageError(
      `--since expects an ISO date or time (2024-06-01T12:00:00Z) or a duration (15m, 2h, 7d), got ${JSON.stringify(values.since)}`,
    );
  // The ledger spells the table as the watcher's logs do: `"Order Items"` and `Order Items` are one.
  const table = values.table === undefined ? undefined : parseTableName(values.table);
  if (table?.isErr()) throw new UsageError(table.error);
  const reader = readerDbFromFlags(values);
  let pool: DbPool | undefined;
  try {
    pool = await reader.db.openPool({ maxConnections: 1 });
    const entries = await readHistory(pool, { ...(since ? { since } : {}), ...(table?.isOk() ? { table: tableLabel(table.value) } : {}) });
    if (values.json) {
      process.stdout.write(`${toJson(entries)}\n`);
      return 0;
    }
    printRows(
      entries.map((e) => ({
        committed_at: e.committedAt,
        file: e.file,
        table: e.table,
        rows: e.rows,
        rejected: e.rowsRejected,
        bytes: e.bytes,
        directory: e.directory,
        checksum: e.checksum,
        process: e.owner,
      })),
      false,
    );
    return 0;
  } finally {
    await reader.close(pool);
  }
}
