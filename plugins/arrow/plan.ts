/**
 * A file's columns against the table's: the table's columns for the file (the existing table's,
 * or one made from the schema), each file column paired with its table column by name, its type
 * checked to fit, and how each goes in when it needs a cast.
 */
import type { Field, Schema } from 'apache-arrow';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import { matchColumns } from '../../src/columns/schema.ts';
import { isSourceColumn } from '../../src/columns/source-columns.ts';
import { createTableFor, fitTable } from '../../src/columns/table-fit.ts';
import { describeLogicalType, quoteIdent, standardSqlType, tableLabel } from '../../src/columns/sql.ts';
import { parseSqlType, type SqlType } from '../../src/columns/sql-types.ts';
import { fitsColumn } from '../../src/columns/type-policy.ts';
import type { ClaimedFile, ColumnSpec, DbConnection, IngestContext, TableColumn, TableName } from '../../src/types.ts';
import { describeField, isSameType, mapArrowType, type FieldMapping } from './types.ts';

/** One file column, what it maps to, and the table column it fills. */
export interface ColumnPlan {
  readonly field: Field;
  readonly mapping: FieldMapping;
  readonly column: TableColumn;
  readonly columnType: SqlType;
}

export function fileError(
  kind: 'data' | 'schema',
  code: string,
  file: ClaimedFile,
  message: string,
  hint: string,
  column?: string,
): IngestFailure {
  return new IngestFailure(
    ingestError(kind, code, `${file.name}: ${message}`, hint, { file: file.name, ...(column === undefined ? {} : { column }) }),
  );
}

/** Names are the only link between a file column and a table column: they must be distinct. */
export function checkFieldNames(schema: Schema, file: ClaimedFile): void {
  if (schema.fields.length === 0) {
    throw fileError(
      'data',
      'ARROW_NO_COLUMNS',
      file,
      'the Arrow schema has no columns',
      'Write at least one column, then replay the file.',
    );
  }
  const seen = new Set<string>();
  for (const [index, field] of schema.fields.entries()) {
    // A field's name is optional in the format's FlatBuffers: apache-arrow then has none (null).
    if ((field.name ?? '').trim() === '') {
      throw fileError(
        'data',
        'EMPTY_COLUMN_NAME',
        file,
        `column ${index + 1} of the Arrow schema has no name`,
        'Give every column a name, then replay the file.',
      );
    }
    if (seen.has(field.name)) {
      throw fileError(
        'data',
        'DUPLICATE_COLUMN',
        file,
        `column "${field.name}" appears twice in the Arrow schema`,
        'Give every column a distinct name, then replay the file.',
        field.name,
      );
    }
    seen.add(field.name);
  }
}

export function mapFields(schema: Schema, file: ClaimedFile): FieldMapping[] {
  return schema.fields.map((field) => {
    const mapped = mapArrowType(field.type);
    if ('unsupported' in mapped) {
      throw fileError(
        'schema',
        'ARROW_UNSUPPORTED_TYPE',
        file,
        `column "${field.name}" has Arrow type ${mapped.unsupported}, which has no column type here`,
        `Convert column "${field.name}" in the producer (e.g. a union to one of its types), or drop it; then replay the file.`,
        field.name,
      );
    }
    return mapped;
  });
}

/** The table's columns for this file: the existing table's, or a new table made from the schema. */
export async function tableColumns(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  schema: Schema,
  mappings: readonly FieldMapping[],
  ctx: IngestContext,
): Promise<TableColumn[]> {
  const existing = await conn.describeTable(table);
  const specs: ColumnSpec[] = schema.fields.map((field, k) => ({ name: field.name, type: mappings[k]!.type }));
  if (existing) {
    const names = specs.map((s) => s.name);
    return (await fitTable(conn, table, existing, names, (added) => specs.filter((s) => added.includes(s.name)), file, ctx)).columns;
  }
  if (!ctx.schema.createTable) {
    throw new IngestFailure(
      ingestError(
        'schema',
        'TABLE_MISSING',
        `table ${tableLabel(table)} does not exist and creating tables is disabled`,
        'Create the table, or enable table creation, then replay the file.',
        {
          file: file.name,
        },
      ),
    );
  }
  await createTableFor(conn, table, specs, file, ctx);
  // Read back the database's own spelling of the types, so both cases are planned the same way.
  const created = (await conn.describeTable(table))?.filter((c) => !isSourceColumn(ctx, c.name));
  return created ?? specs.map((s) => ({ name: s.name, sqlType: ctx.sqlType(s.type), nullable: true }));
}

/** `nulls`: each field's NULLs, from the file's metadata (a Null-typed field's rows are all NULL). */
export function plan(
  file: ClaimedFile,
  table: TableName,
  schema: Schema,
  mappings: readonly FieldMapping[],
  columns: readonly TableColumn[],
  nulls: readonly number[],
): ColumnPlan[] {
  const matched = matchColumns(
    schema.fields.map((f) => f.name),
    columns,
    file.name,
    table,
  );
  if (matched.isErr()) throw new IngestFailure(matched.error);
  return schema.fields.map((field, k) => {
    const column = matched.value[k]!;
    const mapping = mappings[k]!;
    const columnType = parseSqlType(column.sqlType);
    if (!fitsColumn(mapping.type, columnType)) {
      throw fileError(
        'schema',
        'TYPE_MISMATCH',
        file,
        `column "${field.name}" is ${describeField(field)} (${describeLogicalType(mapping.type)}) in the file, ` +
          `but ${column.sqlType} in table ${tableLabel(table)}`,
        `Write column "${field.name}" with a type that fits ${column.sqlType} (or change the table's column type), then replay the file.`,
        field.name,
      );
    }
    if (!column.nullable && nulls[k]! > 0) {
      throw fileError(
        'data',
        'NULL_IN_NOT_NULL',
        file,
        `column "${field.name}" holds ${nulls[k]} NULL value(s) (as the file's metadata counts them), but column ` +
          `"${column.name}" of table ${tableLabel(table)} is NOT NULL`,
        `Write a value in every row of column "${field.name}" (or let the table's column take NULL), then replay the file.`,
        field.name,
      );
    }
    return { field, mapping, column, columnType };
  });
}

/**
 * What a column becomes in `INSERT ... SELECT` from the temporary table: the value as it is when
 * the types agree, else a cast to the table's type. Text with a length limit is cast to TEXT
 * only, so the database still checks the limit instead of cutting the value.
 */
export function selectExpression(p: ColumnPlan): string {
  const ref = quoteIdent(p.field.name);
  if (isSameType(p.mapping.type, p.columnType)) return ref;
  if (p.columnType.family === 'text' && p.columnType.length !== undefined)
    return p.mapping.type.kind === 'text' || p.mapping.type.kind === 'json' ? ref : `CAST(${ref} AS TEXT)`;
  return `CAST(${ref} AS ${p.column.sqlType})`;
}

/** Each file column with the SQL type of its exact Arrow type (what ARROWSTREAM requires). */
export function fieldTypes(plans: readonly ColumnPlan[]): string {
  return plans.map((p) => `${quoteIdent(p.field.name)} ${standardSqlType(p.mapping.type)}`).join(', ');
}
