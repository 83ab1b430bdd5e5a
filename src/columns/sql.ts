/** Identifier quoting, table names and the logical → SQL type mapping shared by adapters. */
import { err, ok, type Result } from 'neverthrow';
import type { LogicalType, TableName } from '../types.ts';

/** Quotes an identifier for SQL: `a"b` → `"a""b"`. Case is preserved. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * The table in SQL, always with its schema: a name without one is in `public`, where
 * `describeTable` looks for it. Unqualified, it would resolve by the search path, whose default
 * `"$user", public` puts a schema named like the role first: the table would be created there
 * and then never be found.
 */
export function qualifiedName(table: TableName): string {
  return `${quoteIdent(table.schema ?? DEFAULT_SCHEMA)}.${quoteIdent(table.name)}`;
}

/** The schema of a table named without one. */
export const DEFAULT_SCHEMA = 'public';

/**
 * The table as a user writes it, and as `parseTableName` reads it back: each part as it is, or in
 * double quotes when it holds a dot or a quote (`sales."a.b"`). Logs, errors and the ledger use it.
 */
export function tableLabel(table: TableName): string {
  const part = (p: string) => (/[".]/.test(p) || p === '' ? quoteIdent(p) : p);
  return table.schema ? `${part(table.schema)}.${part(table.name)}` : part(table.name);
}

/** PostgreSQL keeps identifiers to 63 bytes and silently cuts longer ones; Hyper takes more. */
export const MAX_IDENTIFIER_BYTES = 63;

const TABLE_NAME_RULE =
  'write "name" or "schema.name"; any characters but control characters, each part at most 63 bytes; ' +
  'put a part that holds a dot in double quotes, doubling any quote inside ("a.b", sales."a.b")';

/** Splits on dots outside double quotes; a quoted part loses its quotes (`""` is one `"`). */
function splitParts(input: string): Result<string[], string> {
  const parts: string[] = [];
  let i = 0;
  for (;;) {
    let part = '';
    if (input[i] === '"') {
      i++;
      for (;;) {
        if (i >= input.length) return err('a double quote is not closed');
        if (input[i] === '"') {
          if (input[i + 1] !== '"') break;
          i++;
        }
        part += input[i++];
      }
      i++;
      if (i < input.length && input[i] !== '.') return err(`text follows a closing double quote at character ${i + 1}`);
    } else {
      while (i < input.length && input[i] !== '.') part += input[i++];
      if (part.includes('"')) return err('a part holds a double quote: put that part in double quotes and double the quote inside');
    }
    parts.push(part);
    if (i >= input.length) return ok(parts);
    i++; // the dot
  }
}

/**
 * Parses `name` or `schema.name`, as the user writes it in `--table`, a config or the API. Each
 * part is taken as written (case, spaces and any letters kept; it is always quoted in SQL); a part
 * that holds a dot is written in double quotes. Refused: empty parts, control characters (NUL is
 * refused by every database, the others would break log lines), more than 63 bytes per part.
 */
export function parseTableName(input: string): Result<TableName, string> {
  const fail = (why: string) => err(`invalid table name ${JSON.stringify(input)}: ${why}; ${TABLE_NAME_RULE}`);
  const split = splitParts(input);
  if (split.isErr()) return fail(split.error);
  const parts = split.value;
  if (parts.length > 2)
    return fail(`it has ${parts.length - 1} dots outside double quotes, and a table name has at most one (schema.name)`);
  for (const part of parts) {
    if (part === '') return fail(parts.length === 1 ? 'it is empty' : 'a part is empty');
    if (/[\u0000-\u001f\u007f]/.test(part)) return fail('it holds a control character');
    if (new TextEncoder().encode(part).length > MAX_IDENTIFIER_BYTES)
      return fail(`${JSON.stringify(part.slice(0, 20))}... is longer than ${MAX_IDENTIFIER_BYTES} bytes`);
  }
  return ok(parts.length === 2 ? { schema: parts[0]!, name: parts[1]! } : { name: parts[0]! });
}

/** The SQL spelling of each logical type, valid on both Hyper and PostgreSQL. */
export function standardSqlType(type: LogicalType): string {
  switch (type.kind) {
    case 'boolean':
      return 'BOOLEAN';
    case 'smallint':
      return 'SMALLINT';
    case 'integer':
      return 'INTEGER';
    case 'bigint':
      return 'BIGINT';
    case 'real':
      return 'REAL';
    case 'double':
      return 'DOUBLE PRECISION';
    case 'decimal':
      return `NUMERIC(${type.precision},${type.scale})`;
    case 'text':
    case 'json':
      return 'TEXT';
    case 'bytes':
      return 'BYTEA';
    case 'date':
      return 'DATE';
    case 'time':
      return 'TIME';
    case 'timestamp':
      return 'TIMESTAMP';
    case 'timestamptz':
      return 'TIMESTAMPTZ';
    case 'interval':
      return 'INTERVAL';
  }
}

/** A logical type as error messages name it: `bigint`, `decimal(18,3)`. */
export function describeLogicalType(type: LogicalType): string {
  return type.kind === 'decimal' ? `decimal(${type.precision},${type.scale})` : type.kind;
}
