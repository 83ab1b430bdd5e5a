/**
 * `checkFile` (`hyperwatch check`): what one file would do, found by doing it where it does not
 * count. The file is copied (never moved) into an inbox of its own, with its `.ready`, and a
 * watcher with the caller's settings ingests it into a scratch `.hyper` file in a temporary
 * folder; the real ingest path, not a second reading of the file. An existing table of the user's
 * is read first (read-only) and made again in the scratch database, so the file meets the same
 * columns. The copy sits at the file's path below the watched directory (watched-name.ts), so
 * that its `key=value` folders are its partition columns as the watcher reads them. What landed,
 * or the `.error` the watcher wrote, is read back, and the folder removed.
 */
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createHyperAdapter } from '../../adapters/db/hyper/index.ts';
import { createTableStatement, readTableDefinition } from '../../adapters/db/hyper/table-definition.ts';
import { openWatcher, WatchConfigError } from '../api.ts';
import { parseTableName, qualifiedName, quoteIdent, tableLabel } from '../columns/sql.ts';
import { ERROR_SUFFIX, FAILED_DIR, READY_SUFFIX } from '../constants.ts';
import { silentLogger } from '../log.ts';
import { DEFAULT_MARKER, type ReadyWhen, type WatchOptions } from '../options.ts';
import { WatcherRegistry } from '../registry.ts';
import type { DbAdapter, DbPool, Row, TableName } from '../types.ts';
import { type ColumnDefinition, existingTable } from './existing-table.ts';
import { inRolledBackTransaction } from './rolled-back.ts';
import { type SniffSuggestion, suggestion } from './sniff-suggestion.ts';
import { type WatchedName, watchedName } from './watched-name.ts';

export type { SniffSuggestion } from './sniff-suggestion.ts';

/** How many rows a check shows by default. */
export const CHECK_ROWS = 10;

/**
 * The watcher's settings that say how the file is read and how it may change the table, as for
 * `openWatcher`; the settings of a running watcher (where files go, when they are taken, leases,
 * checkpoints) do not concern one file checked once and are left out.
 */
const RUNNING_ONLY = [
  'db',
  'registry',
  'fs',
  'signal',
  'stableMs',
  'include',
  'exclude',
  'onSuccess',
  'archiveDir',
  'archiveByDate',
  'skipDuplicateContent',
] as const;

export type CheckOptions = Omit<WatchOptions, (typeof RUNNING_ONLY)[number] | 'readyWhen'> & {
  /**
   * The watched directory the file is in, or would be dropped into: the file is named by its path
   * below it, as the watcher names it (every folder between is a partition folder with
   * `partitionColumns`, and the `file` source column holds that path). Default: the folder above
   * the `key=value` folders the file is in (with `readyWhen: 'marker'`, above its unit folder).
   */
  readonly dir?: string;
  /**
   * Only `'marker'` changes a check: the first folder below `dir` is then the file's unit folder
   * (not a partition), and the file is checked as that folder's one data file. A file is checked
   * once it is there in the other modes.
   */
  readonly readyWhen?: ReadyWhen;
  /** The table the file would go to, "name" or "schema.name". Default: the file's name up to its first dot. */
  readonly table?: string | TableName;
  /** Hyper: the format version of a database that does not exist yet (0–4, default 2); an existing file's own counts. */
  readonly databaseVersion?: number;
  /** How many of the rows that would land to return. Default 10. */
  readonly rows?: number;
  /**
   * The user's database, instead of the Hyper file `database` (on `endpoint`): its table's
   * definition is read from it. A PostgreSQL adapter also takes the file, in one transaction that
   * is rolled back; on Hyper, the file goes into a scratch `.hyper` file.
   */
  readonly db?: DbAdapter;
};

export interface CheckedColumn {
  readonly name: string;
  /** As the database spells it: `bigint`, `date`, `numeric(18,3)`, `text`. */
  readonly type: string;
}

/** How a file fits a table that exists. */
export interface TableFit {
  /** The table's columns that the rows would give a value in. */
  readonly matching: readonly string[];
  /** The table's columns NULL in every row that would land: the file lacks them, or leaves them empty. */
  readonly empty: readonly string[];
  /** Columns the file would add (`schemaEvolution: 'addColumns'`). */
  readonly added: readonly string[];
}

export interface CheckResult {
  readonly file: string;
  /** True when the file would land (with `onBadRows: 'skip'`, maybe without some rows: `rejected`). */
  readonly lands: boolean;
  readonly table: {
    readonly name: string;
    /** The table's columns after the file: those it would create, or the existing ones and those added. */
    readonly columns: readonly CheckedColumn[];
    /** Present when the table does not exist: true when the file would create it. */
    readonly created?: boolean;
    /** Present when the table exists and the file would land. */
    readonly fits?: TableFit;
  };
  /** The first rows as they would land (dates and times as the database writes them). */
  readonly rows: readonly Row[];
  /** How many rows would land in all. */
  readonly rowCount: number;
  /** Rows that would be set aside (`onBadRows: 'skip'`) into `failed/<name>.rejected.*`. */
  readonly rejected: number;
  /** The `.error` report the file would get in `failed/`, when it would fail. */
  readonly error?: Readonly<Record<string, unknown>>;
  /**
   * For a `.csv` or `.tsv` file: the dialect its head shows beyond the settings given, as the
   * flags to pass (or `--sniff`), and the settings it reads more than one way, with their candidates.
   */
  readonly sniffed?: SniffSuggestion;
}

function tableOf(table: string | TableName | undefined, file: string): TableName {
  if (typeof table === 'object') return table;
  const parsed = parseTableName(table ?? basename(file).split('.')[0]!);
  if (parsed.isErr()) throw new WatchConfigError(parsed.error);
  return parsed.value;
}

async function checkedFile(path: string): Promise<void> {
  const info = await stat(path).catch(() => undefined);
  if (!info) throw new WatchConfigError(`file ${JSON.stringify(path)} does not exist`);
  if (!info.isFile()) throw new WatchConfigError(`${JSON.stringify(path)} is not a file`);
}

/**
 * What `path` would do when dropped for `options.table`: the table it would create or how it fits
 * the existing one, the first rows as they would land, the `.error` it would get. Moves nothing
 * and writes nothing into the user's database.
 */
export async function checkFile(path: string, options: CheckOptions = {}): Promise<CheckResult> {
  await checkedFile(path);
  const sniffed = await suggestion(path, options);
  const result = await checkedResult(path, options);
  return sniffed ? { ...result, sniffed } : result;
}

async function checkedResult(path: string, options: CheckOptions): Promise<CheckResult> {
  const target = tableOf(options.table, path);
  const logger = options.logger ?? silentLogger;
  const user = options.db;
  const existing = await existingTable(
    user ? { kind: 'adapter', db: user } : { kind: 'hyper', database: options.database, endpoint: options.endpoint },
    target,
    logger,
  );
  const before = existing.columns;
  // The scratch file of the user's file's version: the types a file creates depend on it.
  const databaseVersion = existing.databaseVersion ?? options.databaseVersion;
  const scratch = await mkdtemp(join(tmpdir(), 'hyperwatch-check-'));
  try {
    const inbox = join(scratch, 'inbox');
    const where = watchedName(path, options.dir, options.readyWhen === 'marker');
    await copyInto(path, inbox, where, options.marker ?? DEFAULT_MARKER);
    if (user && user.name !== 'hyper') {
      // The existing table is made again in a schema of the transaction's own, so that the rows
      // read back are the file's alone; a new one is made under its own name, and undone with it.
      const landing = before ? { schema: `hyperwatch_check_${randomBytes(6).toString('hex')}`, name: target.name } : target;
      const found = await inRolledBackTransaction(user, async (db) => {
        if (before) await makeTable(db, landing, before);
        return ingestCopy(db, inbox, where, landing, options);
      });
      return resultOf(path, target, before, relabelled(found, landing, target));
    }
    const db = createHyperAdapter({
      database: join(scratch, 'check.hyper'),
      ...(databaseVersion !== undefined ? { databaseVersion } : {}),
      logger: silentLogger,
    });
    try {
      if (before) await makeTable(db, target, before);
      return resultOf(path, target, before, await ingestCopy(db, inbox, where, target, options));
    } finally {
      await db.close().catch(() => {});
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** What the watcher did with the copy in `inbox`, and the table it left. */
interface Found {
  readonly error: Record<string, unknown> | undefined;
  readonly ingested: number;
  readonly rejected: number;
  readonly after: ColumnDefinition[] | null;
  readonly rows: Row[];
  readonly filled: ReadonlySet<string>;
  readonly rowCount: number;
}

async function ingestCopy(db: DbAdapter, inbox: string, where: WatchedName, table: TableName, options: CheckOptions): Promise<Found> {
  const handle = await openWatcher(inbox, table, {
    ...readingSettings(options),
    ...takenAs(where, options),
    db,
    registry: new WatcherRegistry(),
    logger: silentLogger,
  });
  const { stats } = await handle.stop();
  const error = await errorReport(inbox, where);
  const pool = await db.openPool({ maxConnections: 1 });
  try {
    const after = await pool.transaction((conn) => readTableDefinition(conn, table));
    return {
      error,
      ingested: stats.filesIngested,
      rejected: stats.rowsRejected,
      after,
      rows: after ? await firstRows(pool, table, after, options.rows ?? CHECK_ROWS) : [],
      filled: after ? await filledColumns(pool, table, after) : new Set<string>(),
      rowCount: after ? await countRows(pool, table) : 0,
    };
  } finally {
    await pool.close();
  }
}

function resultOf(path: string, target: TableName, before: ColumnDefinition[] | null, found: Found): CheckResult {
  const { error, after } = found;
  const landed = error === undefined && found.ingested > 0;
  return {
    file: path,
    lands: error === undefined,
    table: {
      name: tableLabel(target),
      columns: (after ?? before ?? []).map((c) => ({ name: c.name, type: c.sqlType })),
      ...(before ? (landed ? { fits: fitOf(before, after ?? before, found.filled) } : {}) : { created: after !== null }),
    },
    rows: found.rows,
    rowCount: found.rowCount,
    rejected: found.rejected,
    ...(error ? { error } : {}),
  };
}

/** The `.error` report as it would name the user's table, not the scratch schema's copy of it. */
function relabelled(found: Found, landing: TableName, target: TableName): Found {
  if (!found.error || landing === target) return found;
  const text = JSON.stringify(found.error)
    .replaceAll(JSON.stringify(qualifiedName(landing)).slice(1, -1), JSON.stringify(qualifiedName(target)).slice(1, -1))
    .replaceAll(tableLabel(landing), tableLabel(target));
  return { ...found, error: JSON.parse(text) as Record<string, unknown> };
}

/** The settings that concern reading the file, also when a caller's object (from JavaScript, a config) has the others. */
function readingSettings(options: CheckOptions): WatchOptions {
  const drop = new Set<string>([
    ...RUNNING_ONLY,
    ...['table', 'rows', 'database', 'endpoint', 'databaseVersion', 'logger', 'dir', 'readyWhen', 'marker'],
  ]);
  return Object.fromEntries(Object.entries(options).filter(([key]) => !drop.has(key))) as WatchOptions;
}

/**
 * How the scratch watcher takes the copy: its unit folder with `readyWhen: 'marker'`; else by its
 * `.ready`, with `recursive` when it sits in a folder or has partition columns (for one file,
 * recursive takes nothing more, and `partitionColumns` needs it).
 */
function takenAs(where: WatchedName, options: CheckOptions): WatchOptions {
  if (where.unit !== undefined) return { readyWhen: 'marker', ...(options.marker !== undefined ? { marker: options.marker } : {}) };
  return where.name.includes('/') || options.partitionColumns === true ? { recursive: true } : {};
}

/** The file at its path in the inbox, with its `.ready`, or, in a unit folder, with the folder's marker. */
async function copyInto(path: string, inbox: string, where: WatchedName, marker: string): Promise<void> {
  const copy = join(inbox, ...where.name.split('/'));
  await mkdir(dirname(copy), { recursive: true });
  await copyFile(path, copy);
  await writeFile(where.unit !== undefined ? join(inbox, where.unit, marker) : copy + READY_SUFFIX, '');
}

/** The same table in the scratch database (its schema first, when it has one). */
async function makeTable(db: DbAdapter, table: TableName, columns: readonly ColumnDefinition[]): Promise<void> {
  const pool = await db.openPool({ maxConnections: 1 });
  try {
    if (table.schema) await pool.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(table.schema)}`);
    await pool.query(createTableStatement(table, columns));
  } finally {
    await pool.close();
  }
}

/**
 * The `.error` report in failed/, without the scratch folder it names: beside the file where its
 * path puts it (`failed/date=.../x.csv.error`), or beside its unit folder (`failed/job-7.error`).
 */
async function errorReport(inbox: string, where: WatchedName): Promise<Record<string, unknown> | undefined> {
  const failed = join(inbox, FAILED_DIR, ...(where.unit !== undefined ? [] : where.name.split('/').slice(0, -1)));
  const names = await readdir(failed).catch(() => [] as string[]);
  const report = names.find((n) => n.endsWith(ERROR_SUFFIX));
  if (!report) return undefined;
  const {
    directory: _d,
    failedAs: _f,
    claimId: _c,
    ...rest
  } = JSON.parse(await readFile(join(failed, report), 'utf8')) as Record<string, unknown>;
  return rest;
}

/** Dates and times cast to text: as the database writes them, not as instants in JavaScript. */
async function firstRows(pool: DbPool, table: TableName, columns: readonly ColumnDefinition[], limit: number): Promise<Row[]> {
  if (limit <= 0) return [];
  const list = columns
    .map((c) => (/date|time/i.test(c.sqlType) ? `CAST(${quoteIdent(c.name)} AS TEXT) AS ${quoteIdent(c.name)}` : quoteIdent(c.name)))
    .join(', ');
  const rows = await pool.query(`SELECT ${list} FROM ${qualifiedName(table)} LIMIT ${Math.floor(limit)}`);
  // Plain objects in a plain array, not the driver's result: the caller keeps them after the database is gone.
  return Array.from(rows, (r) => ({ ...r }));
}

async function countRows(pool: DbPool, table: TableName): Promise<number> {
  const [row] = await pool.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${qualifiedName(table)}`);
  return Number(row?.n ?? 0);
}

/** The columns with a value in at least one row. */
async function filledColumns(pool: DbPool, table: TableName, columns: readonly ColumnDefinition[]): Promise<Set<string>> {
  const counts = columns.map((c, i) => `COUNT(${quoteIdent(c.name)}) AS c${i}`).join(', ');
  const [row] = await pool.query(`SELECT ${counts} FROM ${qualifiedName(table)}`);
  return new Set(columns.filter((_c, i) => Number(row?.[`c${i}`] ?? 0) > 0).map((c) => c.name));
}

function fitOf(before: readonly ColumnDefinition[], after: readonly ColumnDefinition[], filled: ReadonlySet<string>): TableFit {
  const had = new Set(before.map((c) => c.name));
  return {
    matching: before.filter((c) => filled.has(c.name)).map((c) => c.name),
    empty: before.filter((c) => !filled.has(c.name)).map((c) => c.name),
    added: after.filter((c) => !had.has(c.name)).map((c) => c.name),
  };
}
