/**
 * One postgres.js connection as the core sees it (`DbConnection`), and the statements a
 * transaction ends with.
 */
import type postgres from 'postgres';
import { quoteLiteral } from '../../../src/columns/sql.ts';
import type { DbConnection, Row, Statement, TableColumn, TableName } from '../../../src/types.ts';
import { copyFrom } from './copy-from.ts';
import { copyTo } from './copy-to.ts';
import type { AnySql } from './sql.ts';

interface AttributeRow {
  readonly name: string;
  readonly sql_type: string;
  readonly attnotnull: boolean;
  readonly atthasdef: boolean;
  /** PostgreSQL only (Hyper's pg_attribute has neither): 'a' or 'd' for an identity column, 's' for a generated one. */
  readonly attidentity?: string;
  readonly attgenerated?: string;
}

/**
 * Columns of `table`, or `null` when it does not exist. pg_catalog works on Hyper and PostgreSQL;
 * `a.*` because PostgreSQL's identity and generated columns are flagged in columns Hyper lacks.
 *
 * The names go in as literals, not parameters: hyperd compiles a statement with parameters twice
 * (its PREPARE, then its run), and this one runs at every start and for nearly every file: 4.9
 * against 2.4 ms of hyperd's CPU a call, measured. A name with a backslash still goes as a
 * parameter: a PostgreSQL with `standard_conforming_strings` off would read it as an escape.
 */
export async function describeTable(sql: AnySql, table: TableName): Promise<TableColumn[] | null> {
  const schema = table.schema ?? 'public';
  const asParameters = schema.includes('\\') || table.name.includes('\\');
  const [nspname, relname] = asParameters ? ['$1', '$2'] : [quoteLiteral(schema), quoteLiteral(table.name)];
  const rows = await sql.unsafe<AttributeRow[]>(
    `SELECT a.*, a.attname AS name, format_type(a.atttypid, a.atttypmod) AS sql_type
       FROM pg_catalog.pg_attribute a
       JOIN pg_catalog.pg_class c ON a.attrelid = c.oid
       JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
      WHERE n.nspname = ${nspname} AND c.relname = ${relname} AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY a.attnum`,
    asParameters ? [schema, table.name] : [],
  );
  if (rows.length === 0) return null;
  return rows.map((r) => ({
    name: r.name,
    sqlType: r.sql_type,
    nullable: !r.attnotnull,
    // Hyper's COPY leaves an omitted column NULL even when it has a DEFAULT (and refuses to omit a
    // NOT NULL one): there (its pg_attribute has no attidentity) no column is said to be filled.
    ...('attidentity' in r ? { filledByDatabase: r.atthasdef || r.attidentity !== '' || (r.attgenerated ?? '') !== '' } : {}),
  }));
}

/**
 * A COMMIT answered with anything but COMMIT: the server had aborted the transaction (both answer
 * ROLLBACK to the COMMIT of a transaction that failed), so nothing of it was committed. On a shared
 * hyperd a transaction also aborts when a cancel reaches it between two statements (another
 * process ending the sessions of one it took for dead, frozen past its lease): no statement of
 * ours failed then, and only this reply tells. 40000 (transaction_rollback): retried.
 */
function rolledBack(command: string): Error {
  return Object.assign(new Error(`the server ended the transaction with ${command} at COMMIT; nothing of it was committed`), {
    code: '40000',
  });
}

/** Sends COMMIT, and throws unless the server committed (see `rolledBack`). */
export async function commit(sql: AnySql): Promise<void> {
  const reply = await sql.unsafe('COMMIT');
  if (reply.command !== 'COMMIT') throw rolledBack(reply.command);
}

/**
 * Sends `last` and COMMIT back to back, without waiting in between: one round trip, not two, which
 * is a millisecond or so per file against hyperd. Both servers end a transaction whose statement
 * failed with ROLLBACK at its COMMIT (checked: the COMMIT's reply must say COMMIT).
 */
export async function lastWithCommit(sql: AnySql, last: Statement): Promise<void> {
  // `execute` sends at once, in this order (postgres.js would otherwise send on first `then`).
  const statement = sql.unsafe(last.text, (last.params ?? []) as postgres.ParameterOrJSON<never>[]).execute();
  const committing = sql.unsafe('COMMIT').execute();
  const [ran, committed] = await Promise.allSettled([statement, committing]);
  if (ran.status === 'rejected') throw ran.reason;
  if (committed.status === 'rejected') throw committed.reason;
  if (committed.value.command !== 'COMMIT') throw rolledBack(committed.value.command);
}

/** `check` runs before every statement: it throws when the transaction's session is gone. */
export function connectionOf(sql: AnySql, check: () => void = () => {}): DbConnection {
  return {
    query: <T extends Row = Row>(text: string, params: readonly unknown[] = []) => {
      check();
      return sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]) as unknown as Promise<T[]>;
    },
    execute: async (text: string, params: readonly unknown[] = []) => {
      check();
      const result = await sql.unsafe(text, params as postgres.ParameterOrJSON<never>[]);
      return Number(result.count ?? 0);
    },
    copyFrom: (statement, source) => {
      check();
      return copyFrom(sql, statement, source);
    },
    copyTo: (statement) => {
      check();
      return copyTo(sql, statement);
    },
    describeTable: (table) => {
      check();
      return describeTable(sql, table);
    },
  };
}
