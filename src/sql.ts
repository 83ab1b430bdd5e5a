/** Identifier quoting, table names and the logical → SQL type mapping shared by adapters. */
import { err, ok, type Result } from 'neverthrow';
import type { LogicalType, TableName } from './types.ts';

/** Quotes an identifier for SQL: `a"b` → `"a""b"`. Case is preserved. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function quoteLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

export function qualifiedName(table: TableName): string {
  return table.schema ? `${quoteIdent(table.schema)}.${quoteIdent(table.name)}` : quoteIdent(table.name);
}

export function tableLabel(table: TableName): string {
  return table.schema ? `${table.schema}.${table.name}` : table.name;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/**
 * Parses `name` or `schema.name`. Each part is a plain identifier (letters, digits, `_`, `$`,
 * not starting with a digit, at most 63 characters); it is quoted as written, so case is kept.
 */
export function parseTableName(input: string): Result<TableName, string> {
  const parts = input.split('.');
  if (parts.length > 2 || !parts.every((p) => IDENT.test(p))) {
    return err(
      `invalid table name ${JSON.stringify(input)}: use "name" or "schema.name", each a letter or "_" followed by letters, digits, "_" or "$" (at most 63 characters)`,
    );
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
