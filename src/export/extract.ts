/**
 * `hyperwatch export`: one table of a `.hyper` file, alone, in a new `.hyper` file that Tableau's
 * tools open, as a consistent snapshot, also while a watcher writes to the source.
 *
 * A `.hyper` file opens only for the role that created it, and `CREATE DATABASE ... FROM` copies
 * keep that role, so a copy cannot carry the table over. Instead the new file is made by a hyperd
 * running as `tableau_internal_user` (the role of Tableau's tools), the table is created there
 * with the source's exact column types, collations and NOT NULLs, and the rows are streamed from
 * the source's hyperd (`COPY (SELECT ...) TO STDOUT` as an Arrow stream) straight into it (`COPY
 * ... FROM STDIN`), inside one read transaction on the source: every row committed before it began,
 * none committed after. The file is written under a temporary name beside the target and renamed
 * into place once complete; an existing target is replaced only with `force`.
 */
import { closeSync, existsSync, fsyncSync, linkSync, lstatSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import process from 'node:process';
import {
  createHyperAdapter,
  databaseVersionProblem,
  DEFAULT_DATABASE,
  type HyperAdapter,
  readHolder,
  SERVER_DEFAULT_DATABASE_VERSION,
  TABLEAU_ROLE,
} from '../../adapters/db/hyper/index.ts';
import { columnsBeyond, createTableStatement, readTableDefinition, userTables } from '../../adapters/db/hyper/table-definition.ts';
import { fsyncDirectory } from '../producer/drop.ts';
import { exportSource } from './source.ts';
import { silentLogger } from '../log.ts';
import { parseTableName, qualifiedName, quoteIdent, tableLabel } from '../columns/sql.ts';
import type { DbConnection, DbPool, Logger, TableName } from '../types.ts';

export interface ExportOptions {
  /** The `.hyper` file to read. Default `./hyperwatch.hyper`. */
  readonly database?: string;
  /** The table to export, as `--table` takes it: `name` or `schema.name`. */
  readonly table: string;
  /** The new `.hyper` file. */
  readonly to: string;
  /** The table's name in the new file (default: the source's); `Extract.Extract` for a Tableau-style extract. */
  readonly as?: string;
  /**
   * File format version of the new file, 0–4 (which Tableau releases open which: README). Default:
   * the source file's version, so that every column type it holds exists there too; the server's
   * default (2) when hyperd does not say.
   */
  readonly databaseVersion?: number;
  /** Replace an existing `to` (atomically, by rename). Default false: an existing file is refused. */
  readonly force?: boolean;
  /** `[user@]host:port` of a running hyperd to read the database on (default: see export-source.ts). */
  readonly endpoint?: string;
  readonly logger?: Logger;
}

export interface ExportResult {
  /** Absolute path of the new file. */
  readonly to: string;
  /** The table in the new file, as written (`Extract.Extract`). */
  readonly table: string;
  readonly rows: number;
  readonly columns: number;
  readonly databaseVersion: number;
  /** The role the new file belongs to (`tableau_internal_user`). */
  readonly role: string;
  /** Which hyperd the table was read on. */
  readonly via: string;
  readonly seconds: number;
}

/** Why an export was refused before anything was written; `hyperwatch export` exits 2 on it. */
export class ExportRefused extends Error {
  readonly code = 'EXPORT_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'ExportRefused';
  }
}

function tableName(input: string, option: string): TableName {
  const parsed = parseTableName(input);
  if (parsed.isErr()) throw new ExportRefused(`${option}: ${parsed.error}`);
  return parsed.value;
}

interface Checked {
  readonly database: string;
  readonly to: string;
  readonly source: TableName;
  readonly target: TableName;
}

/** Everything that can be refused before a hyperd starts. */
function check(options: ExportOptions): Checked {
  const database = resolve(options.database ?? DEFAULT_DATABASE);
  const to = resolve(options.to);
  const source = tableName(options.table, 'table');
  const target = options.as === undefined ? source : tableName(options.as, 'as');
  if (options.databaseVersion !== undefined) {
    const problem = databaseVersionProblem(options.databaseVersion);
    if (problem) throw new ExportRefused(`databaseVersion ${problem}`);
  }
  if (to === database) throw new ExportRefused(`the copy cannot replace its source (${to}): give another path as to`);
  if (!isDirectory(dirname(to))) throw new ExportRefused(`${dirname(to)} is not a directory: create it, or give another path as to`);
  if (!options.force && exists(to)) throw new ExportRefused(`${to} exists: give another path, or force (--force) to replace it`);
  const holder = readHolder(to);
  if (holder) throw new ExportRefused(`${to} is the database of hyperwatch process ${holder.pid}: give another path`);
  if (options.endpoint === undefined && !existsSync(database)) throw new ExportRefused(`${database} does not exist: check --database`);
  return { database, to, source, target };
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Copies one table of a `.hyper` file, alone, into a new `.hyper` file that Tableau opens.
 *
 * @example
 * const result = await exportExtract({ database: './sales.hyper', table: 'orders', to: './orders.hyper', as: 'Extract.Extract' });
 * console.log(`${result.rows} rows in ${result.to} (version ${result.databaseVersion})`);
 */
export async function exportExtract(options: ExportOptions): Promise<ExportResult> {
  const started = performance.now();
  const logger = options.logger ?? silentLogger;
  const { database, to, source, target } = check(options);
  const temp = join(dirname(to), `${basename(to)}.export-${process.pid}.tmp`);
  removeStaleTemps(to);
  const from = exportSource(database, options.endpoint, logger);
  let fromPool: DbPool | undefined;
  let sourceOpen = true;
  let out: HyperAdapter | undefined;
  let done = false;
  try {
    const opened = await from.db.openPool({ maxConnections: 1 });
    fromPool = opened;
    const version = options.databaseVersion ?? from.db.databaseVersion() ?? SERVER_DEFAULT_DATABASE_VERSION;
    logger.info('exporting', { database, table: tableLabel(source), to, as: tableLabel(target), databaseVersion: version, via: from.via });
    // A hyperd of its own: a stream from a session of a hyperd into another of the same one stalls (options.ts, isolated).
    out = createHyperAdapter({ database: temp, user: TABLEAU_ROLE, databaseVersion: version, announce: false, isolated: true, logger });
    const outPool = await out.openPool({ maxConnections: 1 });
    let columns = 0;
    const rows = await opened.transaction((read) =>
      outPool.transaction(async (write) => {
        const copied = await copyTable(read, write, source, target, version);
        columns = copied.columns;
        return copied.rows;
      }),
    );
    // Let go of the source first: the holder's checkpoints wait for no one meanwhile.
    sourceOpen = false;
    await from.close(opened);
    await out.checkpoint();
    await out.close();
    out = undefined;
    place(temp, to, options.force === true);
    await fsyncDirectory(dirname(to));
    done = true;
    const result = {
      to,
      table: tableLabel(target),
      rows,
      columns,
      databaseVersion: version,
      role: TABLEAU_ROLE,
      via: from.via,
      seconds: (performance.now() - started) / 1000,
    };
    logger.info('exported', { ...result });
    return result;
  } catch (error) {
    if (error instanceof ExportRefused) throw error;
    // hyperd going away mid-way says "the connection closed during the transaction": say what it means here.
    const code = (error as { code?: unknown }).code;
    throw Object.assign(
      new Error(
        `exporting ${tableLabel(source)} from ${database} failed, ${to} left as it was: ${(error as Error).message ?? String(error)}`,
        { cause: error },
      ),
      typeof code === 'string' ? { code } : {},
    );
  } finally {
    // A COPY cut short leaves its session mid-stream: the detach then fails at once, and the close ends it.
    if (sourceOpen) await from.close(fromPool).catch(() => {});
    await out?.close().catch(() => {});
    if (!done) rmSync(temp, { force: true });
  }
}

/** Creates the table in `write` as `source` is in `read`, and streams every row over. */
async function copyTable(
  read: DbConnection,
  write: DbConnection,
  source: TableName,
  target: TableName,
  version: number,
): Promise<{ rows: number; columns: number }> {
  const columns = await readTableDefinition(read, source);
  if (!columns) {
    const tables = await userTables(read);
    throw new ExportRefused(
      `no table ${tableLabel(source)} in the database; its tables: ${tables.length > 0 ? tables.join(', ') : '(none)'}`,
    );
  }
  const beyond = columnsBeyond(version, columns);
  if (beyond.length > 0) {
    const needed = Math.max(...beyond.map((b) => b.needs));
    const which = beyond.map((b) => `${b.column.name} (${b.column.sqlType}, version ${b.needs})`).join(', ');
    throw new ExportRefused(
      `a database of version ${version} cannot hold the column${beyond.length > 1 ? 's' : ''} ${which}: use ` +
        `--database-version ${needed} (or leave it out to keep the source's version)`,
    );
  }
  if (target.schema !== undefined && target.schema !== 'public') await write.execute(`CREATE SCHEMA ${quoteIdent(target.schema)}`);
  await write.execute(createTableStatement(target, columns));
  const list = columns.map((c) => quoteIdent(c.name)).join(', ');
  if (!read.copyTo) throw new Error('the source connection cannot run COPY ... TO STDOUT');
  const copyTo: (sql: string) => AsyncGenerator<Uint8Array, number> = read.copyTo.bind(read);
  let sent: number | undefined;
  const stream = async function* () {
    sent = yield* copyTo(`COPY (SELECT ${list} FROM ${qualifiedName(source)}) TO STDOUT WITH (FORMAT arrowstream)`);
  };
  const rows = await write.copyFrom(`COPY ${qualifiedName(target)} (${list}) FROM STDIN WITH (FORMAT arrowstream)`, stream());
  // hyperd says how many rows each side saw: a difference would be rows lost on the way.
  if (sent !== undefined && sent !== rows)
    throw new Error(`the source sent ${sent} rows but the copy received ${rows}; nothing was written`);
  return { rows, columns: columns.length };
}

/** Removes the temporary files of exports to `to` whose process is gone (killed mid-way), and ours. */
function removeStaleTemps(to: string): void {
  const prefix = `${basename(to)}.export-`;
  let names: string[];
  try {
    names = readdirSync(dirname(to));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(/^(\d+)\.tmp$/.exec(name.startsWith(prefix) ? name.slice(prefix.length) : '')?.[1]);
    if (pid && (pid === process.pid || !isAlive(pid))) rmSync(join(dirname(to), name), { force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/**
 * Moves the finished file to `to`. Without `force`, a hard link makes it appear only if nothing
 * is there (an existing file, even one made meanwhile, is never replaced); where hard links are
 * not supported, a check then a rename. With `force`, a rename replaces it at once.
 */
function place(temp: string, to: string, force: boolean): void {
  const fd = openSync(temp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (force) {
    renameSync(temp, to);
    return;
  }
  try {
    linkSync(temp, to);
    rmSync(temp, { force: true });
    return;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'EEXIST') throw new ExportRefused(`${to} appeared during the export: give another path, or --force to replace it`);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EXDEV' && code !== 'ENOSYS') throw error;
  }
  if (exists(to)) throw new ExportRefused(`${to} appeared during the export: give another path, or --force to replace it`);
  renameSync(temp, to);
}
