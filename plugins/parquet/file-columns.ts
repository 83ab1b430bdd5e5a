/**
 * The Parquet file's columns, read from its footer and checked (types this reader maps, distinct
 * names, encodings it decodes exactly), and the table columns they fill: the existing table's,
 * fitted, or a new table's. Both load paths start from what this module returns.
 */
import { type FileMetaData, parquetSchema, type SchemaElement } from 'hyparquet';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import { createTableFor, fitTable } from '../../src/columns/table-fit.ts';
import { describeLogicalType, tableLabel } from '../../src/columns/sql.ts';
import { parseSqlType } from '../../src/columns/sql-types.ts';
import { fitsColumn } from '../../src/columns/type-policy.ts';
import type { ClaimedFile, DbConnection, IngestContext, TableName } from '../../src/types.ts';
import { schemaError } from './failures.ts';
import type { ParquetColumn } from './column.ts';
import { mapParquetColumn } from './types.ts';

/** A file column and the table column it fills. */
export interface Target {
  readonly column: ParquetColumn;
  readonly name: string;
  readonly sqlType: string;
}

/** The file's top-level columns with their types; unsupported types and ambiguous names are errors. */
export function fileColumns(
  file: ClaimedFile,
  metadata: FileMetaData,
): { columns: ParquetColumn[]; decimals: Set<SchemaElement>; asInt64: Set<SchemaElement>; int96: Set<SchemaElement> } {
  const columns: ParquetColumn[] = [];
  const decimals = new Set<SchemaElement>();
  const asInt64 = new Set<SchemaElement>();
  const int96 = new Set<SchemaElement>();
  const seen = new Set<string>();
  const root = parquetSchema(metadata);
  if (root.children.length === 0) {
    throw new IngestFailure(
      ingestError(
        'data',
        'PARQUET_NO_COLUMNS',
        `${file.name}: the Parquet file has no columns`,
        'Write the file with at least one column, then replay it.',
        { file: file.name },
      ),
    );
  }
  for (const node of root.children) {
    const name = node.element.name;
    if (name.trim() === '' || seen.has(name)) {
      throw new IngestFailure(
        ingestError(
          'data',
          name.trim() === '' ? 'EMPTY_COLUMN_NAME' : 'DUPLICATE_COLUMN',
          `${file.name}: ${name.trim() === '' ? 'a column has no name' : `column "${name}" appears twice`}`,
          'Give every column of the file a distinct, non-empty name, then replay it.',
          {
            file: file.name,
            column: name,
          },
        ),
      );
    }
    seen.add(name);
    const mapped = mapParquetColumn(node);
    if (!mapped.ok) {
      throw schemaError(
        file,
        'PARQUET_UNSUPPORTED_TYPE',
        `column "${name}" has Parquet type ${mapped.parquetType}, which cannot be loaded: ${mapped.reason}`,
        `Convert column "${name}" to a supported type (integers, floats, decimals, strings, binary, dates, times, ` +
          `timestamps, lists, maps, structs) or drop it, then replay the file.`,
        name,
      );
    }
    columns.push(mapped.column);
    if (mapped.column.decimal) decimals.add(node.element);
    if (mapped.column.codec.kind === 'int96') int96.add(node.element);
    if (mapped.column.codec.kind === 'uint32' && deltaOnly(file, metadata, mapped.column)) asInt64.add(node.element);
    for (const path of mapped.column.nestedUint32 ?? []) refuseNestedDelta(file, metadata, mapped.column, path);
  }
  return { columns, decimals, asInt64, int96 };
}

/** Encodings of an INT32 column chunk stored with DELTA_BINARY_PACKED alone (RLE, BIT_PACKED: its levels). */
const DELTA_ONLY = new Set(['DELTA_BINARY_PACKED', 'RLE', 'BIT_PACKED']);

/**
 * Whether an unsigned 32-bit column is delta-encoded throughout, to be read as INT64 (see
 * `readableFooter`). Delta pages beside pages of other encodings cannot be read either way.
 */
function deltaOnly(file: ClaimedFile, metadata: FileMetaData, column: ParquetColumn): boolean {
  const chunks = metadata.row_groups.flatMap((g) => g.columns.filter((c) => c.meta_data?.path_in_schema[0] === column.name));
  const delta = chunks.filter((c) => c.meta_data!.encodings.includes('DELTA_BINARY_PACKED'));
  if (delta.length === 0) return false;
  if (delta.length === chunks.length && chunks.every((c) => c.meta_data!.encodings.every((e) => DELTA_ONLY.has(e)))) return true;
  throw schemaError(
    file,
    'PARQUET_UNSUPPORTED_ENCODING',
    `column "${column.name}" (Parquet ${column.parquetType}) mixes DELTA_BINARY_PACKED with other encodings, which this ` +
      `reader cannot decode exactly for unsigned 32-bit values`,
    `Write column "${column.name}" with one encoding (or as INT64), then replay the file.`,
    column.name,
  );
}

/** An unsigned 32-bit field inside a list, map or struct cannot be read exactly from delta-encoded pages. */
function refuseNestedDelta(file: ClaimedFile, metadata: FileMetaData, column: ParquetColumn, path: string): void {
  const delta = metadata.row_groups.some((g) =>
    g.columns.some((c) => c.meta_data!.path_in_schema.join('.') === path && c.meta_data!.encodings.includes('DELTA_BINARY_PACKED')),
  );
  if (!delta) return;
  throw schemaError(
    file,
    'PARQUET_UNSUPPORTED_ENCODING',
    `column "${column.name}" (Parquet ${column.parquetType}) has an unsigned 32-bit field "${path}" stored with ` +
      `DELTA_BINARY_PACKED, which this reader cannot decode exactly inside a list, map or struct`,
    `Write column "${column.name}" with version 1 data pages (or its field as INT64), then replay the file.`,
    column.name,
  );
}

export async function targetsOf(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  columns: readonly ParquetColumn[],
  ctx: IngestContext,
): Promise<Target[]> {
  const existing = await conn.describeTable(table);
  if (existing) {
    const { matched } = await fitTable(
      conn,
      table,
      existing,
      columns.map((c) => c.name),
      (names) => columns.filter((c) => names.includes(c.name)),
      file,
      ctx,
    );
    return columns.map((column, i) => {
      const target = matched[i]!;
      if (!fitsColumn(column.type, parseSqlType(target.sqlType))) {
        throw schemaError(
          file,
          'PARQUET_TYPE_MISMATCH',
          `column "${column.name}" is ${describeLogicalType(column.type)} in the file (Parquet ${column.parquetType}) ` +
            `but ${target.sqlType} in table ${tableLabel(table)}`,
          `Write column "${column.name}" with a type that fits ${target.sqlType} (or change the table's column type), then ` +
            `replay the file.`,
          column.name,
        );
      }
      return { column, name: target.name, sqlType: target.sqlType };
    });
  }
  if (!ctx.schema.createTable) {
    throw schemaError(
      file,
      'TABLE_MISSING',
      `table ${tableLabel(table)} does not exist and creating tables is disabled`,
      'Create the table, or enable table creation, then replay the file.',
    );
  }
  // Unlike CSV, a Parquet file carries its types, so even a file without rows defines the table.
  await createTableFor(conn, table, columns, file, ctx);
  return columns.map((column) => ({ column, name: column.name, sqlType: ctx.sqlType(column.type) }));
}
