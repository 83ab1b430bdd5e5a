/**
 * One CSV file appended with the database's own COPY parser: to an existing table fitted to its
 * header, or to a table created from its head, retried with a wider type when a later value does
 * not fit the inferred one.
 */
import { fromDbError, ingestError, IngestFailure } from '../../src/errors.ts';
import { checkHeaderNames, columnList } from '../../src/schema.ts';
import { hasSourceColumns } from '../../src/source-columns.ts';
import { qualifiedName, quoteLiteral, tableLabel } from '../../src/sql.ts';
import { createTableFor, fitTable, tableMissing } from '../../src/table-fit.ts';
import type { AppendResult, ClaimedFile, ColumnSpec, DbConnection, IngestContext, IngestError, LogicalType, TableName } from '../../src/types.ts';
import { widen } from '../shared/infer-text.ts';
import { loadSkipping, skipBadRows, skipping } from './bad-rows.ts';
import { type CsvDialect, delimiterOf, otherDelimiter, wrongDelimiter } from './dialect.ts';
import { addedTypes, inferColumns, readHead } from './head.ts';
import { loadWithSource } from './source.ts';

/** `fileState` key: column types widened after an earlier attempt failed on them. */
const WIDENED = 'csv.widened';

export function copyOptions(delimiter: string): string {
  return `(FORMAT csv, HEADER true, DELIMITER ${quoteLiteral(delimiter)})`;
}

async function load(conn: DbConnection, file: ClaimedFile, table: TableName, columns: readonly { name: string; sqlType: string }[], delimiter: string, ctx: IngestContext): Promise<number> {
  if (hasSourceColumns(ctx)) return loadWithSource(conn, file, table, columns, delimiter, ctx);
  const target = `${qualifiedName(table)} (${columnList(columns)})`;
  if (ctx.capabilities.readsLocalFiles) {
    // The server parses the claimed file itself: fastest, and the path is the watcher's own.
    return conn.execute(`COPY ${target} FROM ${quoteLiteral(file.stagedPath)} WITH ${copyOptions(delimiter)}`);
  }
  return conn.copyFrom(`COPY ${target} FROM STDIN WITH ${copyOptions(delimiter)}`, file.stream());
}

/** `header` receives the file's column names, for naming columns in errors. */
export async function append(conn: DbConnection, file: ClaimedFile, table: TableName, ctx: IngestContext, header: string[], dialect: CsvDialect): Promise<AppendResult> {
  if (file.size === 0) {
    throw new IngestFailure(
      ingestError('data', 'EMPTY_FILE', `${file.name} is empty (0 bytes)`, 'A CSV file needs at least a header line naming its columns; write the file completely before creating its .ready.', {
        file: file.name,
      }),
    );
  }
  const delimiter = delimiterOf(file, dialect);
  const existing = await conn.describeTable(table);
  const head = await readHead(file, delimiter, existing === null);
  const other = otherDelimiter(file, dialect, head.header, head.text);
  if (other !== undefined) throw wrongDelimiter(file, other);
  header.push(...head.header);
  const names = checkHeaderNames(head.header, file.name);
  if (names.isErr()) throw new IngestFailure(names.error);

  if (existing) {
    const { matched } = await fitTable(conn, table, existing, head.header, addedTypes(file, delimiter), file, ctx);
    if (skipping(ctx)) return { rows: await loadSkipping(conn, file, table, matched, delimiter, ctx) };
    return { rows: await load(conn, file, table, matched, delimiter, ctx).catch((error: unknown) => Promise.reject(skipBadRows(error, file, ctx))) };
  }

  if (!ctx.schema.createTable) {
    throw tableMissing(file, table);
  }
  if (head.complete && head.rows.length === 0) {
    // Creating the table from a header alone would make every column TEXT for good: wait for a
    // file with data to decide the types.
    ctx.logger.warn('header-only file: nothing to append, table not created yet', { file: file.name, table: tableLabel(table) });
    return { rows: 0 };
  }
  const widened = (ctx.fileState.get(WIDENED) as Map<string, LogicalType> | undefined) ?? new Map<string, LogicalType>();
  const columns = inferColumns(head, widened);
  await createTableFor(conn, table, columns, file, ctx);
  if (skipping(ctx)) {
    const typed = columns.map((c) => ({ name: c.name, sqlType: ctx.sqlType(c.type), nullable: true }));
    return { rows: await loadSkipping(conn, file, table, typed, delimiter, ctx, (error) => retryWidened(error, file, columns, widened, ctx)) };
  }
  try {
    return { rows: await load(conn, file, table, columns.map((c) => ({ name: c.name, sqlType: ctx.sqlType(c.type) })), delimiter, ctx) };
  } catch (error) {
    const wider = retryWidened(error, file, columns, widened, ctx);
    throw wider === error ? skipBadRows(error, file, ctx) : wider;
  }
}

/**
 * A value beyond the sample did not fit the type inferred for its column: remember a wider type
 * for that column and ask for a fresh transaction (the table is created again with it).
 */
function retryWidened(error: unknown, file: ClaimedFile, columns: readonly ColumnSpec[], widened: Map<string, LogicalType>, ctx: IngestContext): unknown {
  const failure = fromDbError(error, file.name);
  const column = typeof failure.column === 'number' ? columns[failure.column - 1] : undefined;
  if (!failure.sqlState?.startsWith('22') || !column || column.type.kind === 'text') return error;
  const wider = widen(column.type, failure.sqlState);
  widened.set(column.name, wider);
  ctx.fileState.set(WIDENED, widened);
  const reason = `column "${column.name}" was inferred as ${column.type.kind} from the first rows, but line ${failure.line ?? '?'} does not fit; retrying with ${wider.kind}`;
  ctx.logger.info(reason, { file: file.name });
  return new IngestFailure({ ...failure, retry: { reason } });
}

/** Adds the column's name from the header to a database error that gives only its number. */
export function nameColumn(error: IngestError, header: readonly string[]): IngestError {
  // The watcher's own errors name their columns already.
  if (typeof error.column !== 'number' || !error.code.startsWith('DB_')) return error;
  const name = header[error.column - 1];
  return name === undefined ? error : { ...error, message: `${error.message.replace(/\)$/, '')} "${name}")` };
}
