/**
 * `upsert` and `replace-keys`: the file's rows, in the staging table (modes.ts), applied to the
 * table in the same transaction, with `DELETE ... WHERE EXISTS` and `INSERT ... SELECT` (Hyper
 * has neither `MERGE` nor `ON CONFLICT`). Every statement's row count is checked against what the
 * file brought: hyperd 9.1 does not always read back in full what its own transaction has just
 * copied (a single COPY of 200,000 rows read back as 68,928; modes.ts loads apart there for that),
 * so a short read fails the file rather than applying part of it.
 */
import { ingestError, IngestFailure } from '../errors.ts';
import { DEFAULT_SCHEMA, qualifiedName, quoteIdent, quoteLiteral } from '../columns/sql.ts';
import type { DbConnection, IngestError, TableColumn, TableName } from '../types.ts';
import type { WatchEnv } from './env.ts';

/** The session's staging table (one per connection, under a fixed name, emptied after use). */
export const STAGE: TableName = { schema: 'pg_temp', name: 'hyperwatch_stage' };
/** For an upsert of a file that lacks some of the table's columns: the rows to insert, old values carried over. */
export const MERGED: TableName = { schema: 'pg_temp', name: 'hyperwatch_merged' };

/** What the load into the staging table left to know. */
export interface StagedLoad {
  /** The table's columns (the staging table's); null when the table does not exist. */
  columns: TableColumn[] | null;
  /** The columns each load statement filled (`'all'`: it named none, so it filled every one). */
  brought: (readonly string[] | 'all')[];
}

/**
 * A staging table of these columns, all nullable, empty: made again each time (hyperd keeps DDL
 * across a rollback). Temporary, or a real table for a file staged apart (modes.ts).
 */
export async function createStage(
  conn: DbConnection,
  table: TableName,
  columns: readonly TableColumn[],
  temporary: boolean,
): Promise<void> {
  const defs = columns.map((c) => `${quoteIdent(c.name)} ${c.sqlType}`).join(', ');
  await conn.query(`DROP TABLE IF EXISTS ${qualifiedName(table)}`);
  await conn.query(
    temporary ? `CREATE TEMPORARY TABLE ${quoteIdent(table.name)} (${defs})` : `CREATE TABLE ${qualifiedName(table)} (${defs})`,
  );
}

/** Applies the staged rows; resolves with the rows the file brought. */
export async function applyStaged(
  env: WatchEnv,
  conn: DbConnection,
  state: StagedLoad,
  rows: number,
  file: string,
  stageTable: TableName,
): Promise<number> {
  const { columns } = state;
  if (rows === 0) return rows;
  // Rows the plugin counted, but no staging table made for them: never report them as applied.
  // Retried: the next attempt finds the table as it is then.
  if (columns === null)
    throw new IngestFailure(
      ingestError(
        'transient',
        'STAGE_MISSING',
        `${file}: the ${rows} rows this file's load counted were not staged (the table was not there when its staging table was made)`,
        'Retried on its own; nothing of the file was applied.',
        { file },
      ),
    );
  const brought = broughtColumns(state, columns);
  const key = keyColumns(env, columns, brought, file);
  const stage = qualifiedName(stageTable);
  const table = qualifiedName(env.table);
  const fail = (code: string, message: string, fix: string): never => {
    throw new IngestFailure(failure(code, `${file}: ${message}`, fix, file));
  };

  const staged = await count(conn, `SELECT count(*) AS n FROM ${stage}`);
  if (staged !== rows)
    fail(
      'SHORT_READ',
      `the database read back ${staged} of the ${rows} rows this file's transaction loaded, so its rows cannot be applied by key`,
      'Replay the file; if this goes on, split it into smaller files and drop them in order.',
    );
  await nullKeys(conn, env, stage, key, file);
  let apply = rows;
  if (env.options.mode === 'upsert') apply -= await duplicateKeys(conn, env, stage, key, rows, file);

  const match = key.map((k) => `s.${quoteIdent(k)} = t.${quoteIdent(k)}`).join(' AND ');
  const lacking = columns.filter((c) => !brought.includes(c.name)).map((c) => c.name);
  const list = (names: readonly string[]) => names.map(quoteIdent).join(', ');
  if (env.options.mode === 'upsert' && ordered(env) && (await uniqueOn(conn, env, key))) {
    // PostgreSQL, the key under a unique index: one INSERT ... ON CONFLICT, which updates only
    // the columns the file has (the others keep their values).
    const update = brought.filter((c) => !key.includes(c));
    const set = (update.length > 0 ? update : key).map((c) => `${quoteIdent(c)} = EXCLUDED.${quoteIdent(c)}`).join(', ');
    env.log.debug('upsert by INSERT ... ON CONFLICT', { file, key });
    await checkedInsert(
      conn,
      `INSERT INTO ${table} (${list(brought)}) SELECT ${list(brought)} FROM ${stage} ON CONFLICT (${list(key)}) DO UPDATE SET ${set}`,
      apply,
      fail,
    );
  } else if (env.options.mode === 'upsert' && lacking.length > 0) {
    // The columns the file lacks keep their values: carried over from the row it replaces. (DDL
    // after the load: PostgreSQL allows it; on Hyper the load was a transaction of its own.)
    await createStage(conn, MERGED, columns, true);
    const merged = qualifiedName(MERGED);
    const on = key.map((k) => `o.${quoteIdent(k)} = s.${quoteIdent(k)}`).join(' AND ');
    const select = [...brought.map((c) => `s.${quoteIdent(c)}`), ...lacking.map((c) => `o.${quoteIdent(c)}`)].join(', ');
    const carried = await conn.execute(
      `INSERT INTO ${merged} (${list([...brought, ...lacking])}) SELECT ${select} FROM ${stage} s LEFT JOIN ${table} o ON ${on}`,
    );
    if (carried !== apply)
      fail(
        'KEY_NOT_UNIQUE',
        `the table has several rows for some key (${key.join(', ')}) of this file (${carried} rows matched ${apply}), so the values ` +
          'of the columns the file lacks are ambiguous',
        `Remove the table's duplicate rows for the key (${key.join(', ')}), or give the file every column, then replay it.`,
      );
    await conn.execute(`DELETE FROM ${table} t WHERE EXISTS (SELECT 1 FROM ${stage} s WHERE ${match})`);
    await checkedInsert(
      conn,
      `INSERT INTO ${table} (${list([...brought, ...lacking])}) SELECT ${list([...brought, ...lacking])} FROM ${merged}`,
      apply,
      fail,
    );
    await conn.query(`TRUNCATE ${merged}`);
  } else {
    await conn.execute(`DELETE FROM ${table} t WHERE EXISTS (SELECT 1 FROM ${stage} s WHERE ${match})`);
    await checkedInsert(conn, `INSERT INTO ${table} (${list(brought)}) SELECT ${list(brought)} FROM ${stage}`, apply, fail);
  }
  if (stageTable.schema === STAGE.schema) await conn.query(`TRUNCATE ${stage}`);
  return rows;
}

async function checkedInsert(
  conn: DbConnection,
  sql: string,
  expected: number,
  fail: (code: string, message: string, fix: string) => never,
): Promise<void> {
  const inserted = await conn.execute(sql);
  if (inserted !== expected)
    fail(
      'SHORT_READ',
      `the database moved ${inserted} of the ${expected} staged rows into the table`,
      'Replay the file; if this goes on, split it into smaller files and drop them in order.',
    );
}

/** The table's columns the file filled, in the table's order. */
function broughtColumns(state: StagedLoad, columns: readonly TableColumn[]): string[] {
  if (state.brought.length === 0 || state.brought.includes('all')) return columns.map((c) => c.name);
  const named = new Set(state.brought.flatMap((b) => (b === 'all' ? [] : b)));
  return columns.filter((c) => named.has(c.name)).map((c) => c.name);
}

/** The key as the table spells its columns; a key that is no column, or that the file lacks, fails the file. */
function keyColumns(env: WatchEnv, columns: readonly TableColumn[], brought: readonly string[], file: string): string[] {
  return env.options.key.map((k) => {
    const column = columns.find((c) => c.name === k) ?? columns.find((c) => c.name.toLowerCase() === k.toLowerCase());
    if (!column)
      throw new IngestFailure(
        failure(
          'KEY_NOT_A_COLUMN',
          `${file}: key column "${k}" is not a column of ${env.target} (its columns: ${columns.map((c) => c.name).join(', ')})`,
          'Correct key (--key) to name columns of the table, then replay the file.',
          file,
        ),
      );
    if (!brought.includes(column.name))
      throw new IngestFailure(
        failure(
          'KEY_COLUMN_MISSING',
          `${file}: the file has no column "${column.name}", which is part of the key (${env.options.key.join(', ')})`,
          `Add column "${column.name}" to the file (every row needs its key), then replay it.`,
          file,
        ),
      );
    return column.name;
  });
}

/** A NULL in a key column fails the file, naming the column (and on PostgreSQL the row). */
async function nullKeys(conn: DbConnection, env: WatchEnv, stage: string, key: readonly string[], file: string): Promise<void> {
  for (const k of key) {
    const nulls = await count(conn, `SELECT count(*) AS n FROM ${stage} WHERE ${quoteIdent(k)} IS NULL`);
    if (nulls === 0) continue;
    const row = ordered(env) ? await firstNullRow(conn, stage, k) : undefined;
    throw new IngestFailure(
      failure(
        'NULL_KEY',
        `${file}: ${nulls} row(s) have no value (NULL) in key column "${k}"` +
          (row ? `, the first is row ${row} of the file (line ${row + 1} of a CSV with a header)` : ''),
        `Give every row a value in "${k}" (the key identifies the row), then replay the file.`,
        file,
        { column: k, ...(row ? { line: row } : {}) },
      ),
    );
  }
}

/**
 * Rows with a key another row of the file also has: `fail` fails the file; `last` keeps the
 * later one. PostgreSQL knows the order the rows were loaded in (`ctid`, the staging table being
 * new and only appended to); hyperd keeps none a query can see, so there duplicates fail the
 * file whatever `duplicateKeys` says. Resolves with the rows removed.
 */
async function duplicateKeys(
  conn: DbConnection,
  env: WatchEnv,
  stage: string,
  key: readonly string[],
  rows: number,
  file: string,
): Promise<number> {
  const keys = key.map(quoteIdent).join(', ');
  const distinct = await count(conn, `SELECT count(*) AS n FROM (SELECT DISTINCT ${keys} FROM ${stage}) d`);
  if (distinct === rows) return 0;
  if (env.options.duplicateKeys === 'last' && ordered(env)) {
    const same = key.map((k) => `a.${quoteIdent(k)} = b.${quoteIdent(k)}`).join(' AND ');
    return conn.execute(`DELETE FROM ${stage} a USING ${stage} b WHERE ${same} AND a.ctid < b.ctid`);
  }
  const [example] = await conn.query(`SELECT ${keys}, count(*) AS n FROM ${stage} GROUP BY ${keys} HAVING count(*) > 1 LIMIT 1`);
  const shown = key.map((k) => `${k} = ${example?.[k] === undefined ? '?' : quoteLiteral(String(example[k]))}`).join(', ');
  const why =
    env.options.duplicateKeys === 'fail'
      ? 'and duplicateKeys is fail'
      : 'and the database (hyperd) keeps no order of the rows to tell which is the last';
  throw new IngestFailure(
    failure(
      'DUPLICATE_KEY',
      `${file}: ${rows - distinct} row(s) repeat a key of an earlier row of the file ` +
        `(e.g. ${shown}, ${String(example?.n ?? 2)} rows), ${why}`,
      'Keep one row per key in the file, then replay it.',
      file,
    ),
  );
}

/** PostgreSQL: a unique index (or a primary key or unique constraint) on exactly the key's columns, and no others. */
async function uniqueOn(conn: DbConnection, env: WatchEnv, key: readonly string[]): Promise<boolean> {
  const rows = await conn.query(
    `SELECT 1 FROM pg_catalog.pg_index i
       JOIN pg_catalog.pg_class c ON c.oid = i.indrelid
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2 AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
        AND (SELECT array_agg(a.attname::text ORDER BY a.attname::text COLLATE "C") FROM pg_catalog.pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum = ANY (i.indkey))
            = ARRAY[${[...key].sort().map(quoteLiteral).join(', ')}]::text[]
      LIMIT 1`,
    [env.table.schema ?? DEFAULT_SCHEMA, env.table.name],
  );
  return rows.length > 0;
}

/** The staging table's rows come back in the order they were loaded (PostgreSQL's `ctid`). */
function ordered(env: WatchEnv): boolean {
  return env.db.capabilities.rowsInLoadOrder === true;
}

async function firstNullRow(conn: DbConnection, stage: string, k: string): Promise<number | undefined> {
  const [r] = await conn.query(
    `SELECT n FROM (SELECT row_number() OVER (ORDER BY ctid) AS n, ${quoteIdent(k)} AS k FROM ${stage}) r ` +
      'WHERE k IS NULL ORDER BY n LIMIT 1',
  );
  return r ? Number(r.n) : undefined;
}

async function count(conn: DbConnection, sql: string): Promise<number> {
  const [r] = await conn.query(sql);
  return Number(r?.n ?? 0);
}

function failure(code: string, message: string, fix: string, file: string, where: { column?: string; line?: number } = {}): IngestError {
  return ingestError('data', code, message, fix, { file, ...where });
}
