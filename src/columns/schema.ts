/**
 * Matching a file's columns to a table by name, and creating a table from a file's columns.
 * Shared by every ingester, so all formats follow one rule: columns match by name (exactly, else
 * case-insensitively when that is unambiguous), a table column the file lacks gets NULL when it is
 * nullable, and a file column the table lacks is a schema error naming it.
 */
import { err, ok, type Result } from 'neverthrow';
import { ingestError } from '../errors.ts';
import { qualifiedName, quoteIdent, tableLabel } from './sql.ts';
import type { ColumnSpec, DbConnection, DbPool, IngestError, LogicalType, TableColumn, TableName } from '../types.ts';

/** For each file column (in file order), the table column it fills. */
export function matchColumns(
  fileColumns: readonly string[],
  tableColumns: readonly TableColumn[],
  fileName: string,
  table: TableName,
): Result<TableColumn[], IngestError> {
  const byName = new Map(tableColumns.map((c) => [c.name, c]));
  const byLower = new Map<string, TableColumn[]>();
  for (const c of tableColumns) byLower.set(c.name.toLowerCase(), [...(byLower.get(c.name.toLowerCase()) ?? []), c]);
  const matched: TableColumn[] = [];
  const used = new Set<string>();
  for (const name of fileColumns) {
    const candidates = byLower.get(name.toLowerCase()) ?? [];
    const column = byName.get(name) ?? (candidates.length === 1 ? candidates[0] : undefined);
    if (!column) {
      return err(
        ingestError(
          'schema',
          'UNKNOWN_COLUMN',
          `${fileName}: column "${name}" is not in table ${tableLabel(table)} (its columns: ${tableColumns.map((c) => c.name).join(', ')})`,
          `Rename or drop column "${name}" in the file, or add it to the table (ALTER TABLE ... ADD COLUMN, or ` +
            `schemaEvolution 'addColumns' / --schema-evolution add-columns), then replay the file.`,
          { file: fileName, column: name },
        ),
      );
    }
    if (used.has(column.name)) {
      return err(
        ingestError(
          'schema',
          'DUPLICATE_COLUMN',
          `${fileName}: column "${name}" appears twice in the file`,
          'Give every column of the file a distinct name, then replay the file.',
          {
            file: fileName,
            column: name,
          },
        ),
      );
    }
    used.add(column.name);
    matched.push(column);
  }
  const missingRequired = tableColumns.filter((c) => !used.has(c.name) && !c.nullable && c.filledByDatabase !== true);
  if (missingRequired.length > 0) {
    const names = missingRequired.map((c) => c.name).join(', ');
    return err(
      ingestError(
        'schema',
        'MISSING_COLUMN',
        `${fileName}: the file lacks column(s) ${names}, which table ${tableLabel(table)} requires (NOT NULL, no default)`,
        `Add column(s) ${names} to the file, then replay it.`,
        {
          file: fileName,
          column: missingRequired[0]!.name,
        },
      ),
    );
  }
  return ok(matched);
}

/** Duplicate or empty names in a header make the file ambiguous: report the first. */
export function checkHeaderNames(names: readonly string[], fileName: string): Result<void, IngestError> {
  const seen = new Set<string>();
  for (const [index, name] of names.entries()) {
    if (name.trim() === '') {
      return err(
        ingestError(
          'data',
          'EMPTY_COLUMN_NAME',
          `${fileName}: column ${index + 1} of the header has no name`,
          index === names.length - 1 && names.length > 1
            ? 'The header line ends with a delimiter (some tools end every line with one): remove it from every line, or name ' +
                'that column, then replay the file.'
            : 'Give every column a name in the header line, then replay the file.',
          { file: fileName, line: 1, column: index + 1 },
        ),
      );
    }
    if (seen.has(name)) {
      return err(
        ingestError(
          'data',
          'DUPLICATE_COLUMN',
          `${fileName}: column "${name}" appears twice in the header`,
          'Give every column a distinct name, then replay the file.',
          {
            file: fileName,
            line: 1,
            column: name,
          },
        ),
      );
    }
    seen.add(name);
  }
  return ok(undefined);
}

export function createTableSql(table: TableName, columns: readonly ColumnSpec[], sqlType: (t: LogicalType) => string): string {
  const defs = columns.map((c) => `${quoteIdent(c.name)} ${c.sql ?? sqlType(c.type)}`).join(', ');
  return `CREATE TABLE ${qualifiedName(table)} (${defs})`;
}

export async function createTable(
  conn: DbConnection,
  table: TableName,
  columns: readonly ColumnSpec[],
  sqlType: (t: LogicalType) => string,
): Promise<void> {
  if (table.schema) await conn.query(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(table.schema)}`);
  await conn.query(createTableSql(table, columns, sqlType));
}

export function columnList(columns: readonly { name: string }[]): string {
  return columns.map((c) => quoteIdent(c.name)).join(', ');
}

/**
 * Hyper commits CREATE TABLE even when the transaction around it rolls back. A file that failed
 * must not leave behind the table it created (with types inferred from bad data): drop it while
 * it is still empty. Callers hold the watcher's schema lock, so no other file is using it.
 */
export async function dropIfCreatedEmpty(pool: DbPool, table: TableName): Promise<void> {
  if ((await pool.transaction((conn) => conn.describeTable(table))) === null) return;
  const rows = await pool.query<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${qualifiedName(table)}`);
  if (Number(rows[0]?.n) === 0) await pool.query(`DROP TABLE ${qualifiedName(table)}`);
}
