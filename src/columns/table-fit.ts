/**
 * Fitting the table to a file before it loads: with schema evolution (`addColumns`), the columns
 * of the file the table lacks are added, nullable, typed as for a new table; the configured source
 * columns are created with the table, and added to an existing table that lacks them (or the file
 * fails with the fix). Shared by every ingester at its column-matching and table-creation steps.
 *
 * Columns are added with `ADD COLUMN IF NOT EXISTS`: two files adding the same column at once
 * (two watchers, or two transactions of one) both succeed, whichever is first. Hyper keeps DDL
 * even when the transaction rolls back, so a file that fails after adding a column leaves it
 * behind; it is nullable, so every later file still loads, with or without it.
 */
import { ingestError, IngestFailure } from '../errors.ts';
import { createTable, matchColumns } from './schema.ts';
import { fileColumnSpecs, isSourceColumn } from './source-columns.ts';
import { qualifiedName, quoteIdent, tableLabel } from './sql.ts';
import type { ClaimedFile, ColumnSpec, DbConnection, IngestContext, TableColumn, TableName } from '../types.ts';

/** Types for the file's columns the table lacks, inferred as for a new table. */
export type InferColumns = (names: readonly string[]) => ColumnSpec[] | Promise<ColumnSpec[]>;

/** The column of `columns` that `name` fills: exactly, else case-insensitively when that is unambiguous. */
function find(columns: readonly { name: string }[], name: string): { name: string } | undefined {
  const exact = columns.find((c) => c.name === name);
  if (exact) return exact;
  const folded = columns.filter((c) => c.name.toLowerCase() === name.toLowerCase());
  return folded.length === 1 ? folded[0] : undefined;
}

/** A file column named like a source column would be overwritten: refuse the file instead. */
function checkNoClash(fileColumns: readonly string[], file: ClaimedFile, ctx: IngestContext): void {
  const clash = fileColumns.find((name) => isSourceColumn(ctx, name, file));
  if (clash === undefined) return;
  throw new IngestFailure(
    ingestError(
      'schema',
      'SOURCE_COLUMN_IN_FILE',
      `${file.name}: column "${clash}" of the file has the name of a source column, which the watcher fills itself`,
      `Rename column "${clash}" in the file, or give the source column another name (sourceColumns / --source-column), then ` +
        `replay the file.`,
      { file: file.name, column: clash },
    ),
  );
}

/** How a file fits the table, once fitted. */
export interface Fitted {
  /** The table column each file column fills, in file order. */
  readonly matched: TableColumn[];
  /** Every column of the table after fitting, but the source columns (which the watcher fills). */
  readonly columns: TableColumn[];
}

/**
 * The table columns `fileColumns` fill, after adding what the policy allows: with `addColumns`,
 * every file column the table lacks (types from `infer`) and every source column it lacks.
 * Throws `IngestFailure` for a file that does not fit.
 */
export async function fitTable(
  conn: DbConnection,
  table: TableName,
  existing: readonly TableColumn[],
  fileColumns: readonly string[],
  infer: InferColumns,
  file: ClaimedFile,
  ctx: IngestContext,
): Promise<Fitted> {
  checkNoClash(fileColumns, file, ctx);
  const unknown = fileColumns.filter((name) => !find(existing, name));
  const missingSources = fileColumnSpecs(file, ctx).filter((c) => !find(existing, c.name));
  let columns: readonly TableColumn[] = existing;
  if (ctx.schema.evolution === 'addColumns' && unknown.length + missingSources.length > 0) {
    const specs = [...(unknown.length > 0 ? await infer(unknown) : []), ...missingSources];
    await addColumns(conn, table, specs, ctx);
    columns = [...existing, ...specs.map((s) => ({ name: s.name, sqlType: s.sql ?? ctx.sqlType(s.type), nullable: true }))];
  } else if (missingSources.length > 0) {
    const names = missingSources.map((c) => c.name).join(', ');
    const alter = missingSources.map((c) => `ADD COLUMN ${quoteIdent(c.name)} ${ctx.sqlType(c.type)}`).join(', ');
    throw new IngestFailure(
      ingestError(
        'schema',
        'SOURCE_COLUMN_MISSING',
        `table ${tableLabel(table)} lacks source column(s) ${names}, which the watcher is set to fill`,
        `Add them (ALTER TABLE ${qualifiedName(table)} ${alter}), or let the watcher add them (schemaEvolution ` +
          `'addColumns', --schema-evolution add-columns), then replay the file.`,
        { file: file.name, column: missingSources[0]!.name },
      ),
    );
  }
  // Source columns are the watcher's to fill, so a NOT NULL one is not the file's to provide.
  const own = columns.filter((c) => !isSourceColumn(ctx, c.name, file));
  const matched = matchColumns(fileColumns, own, file.name, table);
  if (matched.isErr()) throw new IngestFailure(matched.error);
  return { matched: matched.value, columns: own };
}

async function addColumns(conn: DbConnection, table: TableName, specs: readonly ColumnSpec[], ctx: IngestContext): Promise<void> {
  for (const spec of specs) {
    await conn.query(
      `ALTER TABLE ${qualifiedName(table)} ADD COLUMN IF NOT EXISTS ${quoteIdent(spec.name)} ${spec.sql ?? ctx.sqlType(spec.type)}`,
    );
    ctx.columnAdded?.(spec);
  }
}

/** The file's table does not exist, and the configuration forbids creating it. */
export function tableMissing(file: ClaimedFile, table: TableName): IngestFailure {
  return new IngestFailure(
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

/** Creates the table for a file's columns, with the configured source columns after them. */
export async function createTableFor(
  conn: DbConnection,
  table: TableName,
  columns: readonly ColumnSpec[],
  file: ClaimedFile,
  ctx: IngestContext,
): Promise<void> {
  checkNoClash(
    columns.map((c) => c.name),
    file,
    ctx,
  );
  await createTable(conn, table, [...columns, ...fileColumnSpecs(file, ctx)], ctx.sqlType);
}
