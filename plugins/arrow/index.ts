/**
 * Arrow IPC ingester: `.arrow`, `.arrows` (the stream format's registered extension), `.ipc` and
 * `.feather` (Feather v2 is the Arrow IPC file format),
 * in the file or the stream format. Memory stays bounded by one record batch (see source.ts).
 *
 * On Hyper (`capabilities.arrowStream`) the data goes in as Arrow, through
 * `COPY ... FROM STDIN WITH (FORMAT ARROWSTREAM)`:
 * - when every column's Arrow type is one Hyper reads as it is and the table column has exactly
 *   that type and name, the file's bytes are passed through untouched (a file-format input is
 *   re-framed as a stream from its footer's blocks, without decoding);
 * - when some Arrow type needs a rewrite (dictionary, large strings, nested → JSON text, ...), the
 *   batches are decoded, rewritten and re-encoded one at a time;
 * - when a table column differs (wider type, text, NOT NULL, another letter case), the file goes
 *   into a temporary table of the exact Arrow types and is inserted from there with casts, because
 *   ARROWSTREAM refuses any type difference and matches names case-sensitively.
 *
 * When Hyper can read the claimed file itself and its bytes need no rewrite, Hyper reads it from
 * its path instead, with `COPY` or, for casts and other names or nullability, `INSERT ... SELECT
 * FROM external(...)` (server-read.ts).
 *
 * Elsewhere the batches become CSV text for `COPY ... FORMAT csv`, in ~1 MiB strings.
 */
import { ResultAsync } from 'neverthrow';
import { RecordBatchStreamWriter, type Field, type RecordBatch, type Schema } from 'apache-arrow';
import { fromDbError, ingestError, IngestFailure, isIngestFailure } from '../../src/errors.ts';
import { defineIngester } from '../../src/plugins.ts';
import { columnList, matchColumns } from '../../src/schema.ts';
import { hasSourceColumns, isSourceColumn, sourceValues, withSourceFields } from '../../src/source-columns.ts';
import { createTableFor, fitTable } from '../../src/table-fit.ts';
import { describeLogicalType, qualifiedName, quoteIdent, standardSqlType, tableLabel } from '../../src/sql.ts';
import { parseSqlType, type SqlType } from '../../src/sql-types.ts';
import type { AppendResult, ClaimedFile, ColumnSpec, DbConnection, IngestContext, IngestError, IngesterPlugin, TableColumn, TableName } from '../../src/types.ts';
import { BatchTooLarge } from './columns.ts';
import { csvField } from '../shared/csv-text.ts';
import { makeFormatter } from './format.ts';
import { IpcProblem, makeBreather } from './problem.ts';
import { ChunkCollector, openIpc, readError, type IpcSource } from './source.ts';
import { describeField, isSameType, mapArrowType, type FieldMapping } from './types.ts';
import { fitsColumn } from '../../src/type-policy.ts';
import { wireBatch, wireSchema, wireType } from './wire.ts';
import { loadOnServer, NO_SERVER_READ, serverMayRead } from './server-read.ts';

/** Batches longer than this are rewritten for Hyper in slices of this many rows. */
const SLICE_ROWS = 65_536;
/** CSV text is handed to COPY in strings of about this many characters. */
const CSV_CHUNK = 1 << 20;
/** `fileState` key: Hyper refused the Arrow data of an earlier attempt; load this file as CSV. */
const FORCE_CSV = 'arrow.csv';

/** One file column, what it maps to, and the table column it fills. */
interface ColumnPlan {
  readonly field: Field;
  readonly mapping: FieldMapping;
  readonly column: TableColumn;
  readonly columnType: SqlType;
}

/** The session's temporary table for loads that need casts (see `loadHyper`). */
const TEMP_NAME = 'hyperwatch_arrow_load';
const TEMP_TABLE = `pg_temp.${quoteIdent(TEMP_NAME)}`;

function fileError(kind: 'data' | 'schema', code: string, file: ClaimedFile, message: string, hint: string, column?: string): IngestFailure {
  return new IngestFailure(ingestError(kind, code, `${file.name}: ${message}`, hint, { file: file.name, ...(column === undefined ? {} : { column }) }));
}

/** Names are the only link between a file column and a table column: they must be distinct. */
function checkFieldNames(schema: Schema, file: ClaimedFile): void {
  if (schema.fields.length === 0) {
    throw fileError('data', 'ARROW_NO_COLUMNS', file, 'the Arrow schema has no columns', 'Write at least one column, then replay the file.');
  }
  const seen = new Set<string>();
  for (const [index, field] of schema.fields.entries()) {
    if (field.name.trim() === '') {
      throw fileError('data', 'EMPTY_COLUMN_NAME', file, `column ${index + 1} of the Arrow schema has no name`, 'Give every column a name, then replay the file.');
    }
    if (seen.has(field.name)) {
      throw fileError('data', 'DUPLICATE_COLUMN', file, `column "${field.name}" appears twice in the Arrow schema`, 'Give every column a distinct name, then replay the file.', field.name);
    }
    seen.add(field.name);
  }
}

function mapFields(schema: Schema, file: ClaimedFile): FieldMapping[] {
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
async function tableColumns(conn: DbConnection, file: ClaimedFile, table: TableName, schema: Schema, mappings: readonly FieldMapping[], ctx: IngestContext): Promise<TableColumn[]> {
  const existing = await conn.describeTable(table);
  const specs: ColumnSpec[] = schema.fields.map((field, k) => ({ name: field.name, type: mappings[k]!.type }));
  if (existing) {
    const names = specs.map((s) => s.name);
    return (await fitTable(conn, table, existing, names, (added) => specs.filter((s) => added.includes(s.name)), file, ctx)).columns;
  }
  if (!ctx.schema.createTable) {
    throw new IngestFailure(
      ingestError('schema', 'TABLE_MISSING', `table ${tableLabel(table)} does not exist and creating tables is disabled`, 'Create the table, or enable table creation, then replay the file.', {
        file: file.name,
      }),
    );
  }
  await createTableFor(conn, table, specs, file, ctx);
  // Read back the database's own spelling of the types, so both cases are planned the same way.
  const created = (await conn.describeTable(table))?.filter((c) => !isSourceColumn(ctx, c.name));
  return created ?? specs.map((s) => ({ name: s.name, sqlType: ctx.sqlType(s.type), nullable: true }));
}

/** `nulls`: each field's NULLs, from the file's metadata (a Null-typed field's rows are all NULL). */
function plan(file: ClaimedFile, table: TableName, schema: Schema, mappings: readonly FieldMapping[], columns: readonly TableColumn[], nulls: readonly number[]): ColumnPlan[] {
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
        `column "${field.name}" is ${describeField(field)} (${describeLogicalType(mapping.type)}) in the file, but ${column.sqlType} in table ${tableLabel(table)}`,
        `Write column "${field.name}" with a type that fits ${column.sqlType} (or change the table's column type), then replay the file.`,
        field.name,
      );
    }
    if (!column.nullable && nulls[k]! > 0) {
      throw fileError(
        'data',
        'NULL_IN_NOT_NULL',
        file,
        `column "${field.name}" holds ${nulls[k]} NULL value(s) (as the file's metadata counts them), but column "${column.name}" of table ${tableLabel(table)} is NOT NULL`,
        `Write a value in every row of column "${field.name}" (or let the table's column take NULL), then replay the file.`,
        field.name,
      );
    }
    return { field, mapping, column, columnType };
  });
}

// ---------------------------------------------------------------------------------------------
// Hyper: Arrow in, as Arrow
// ---------------------------------------------------------------------------------------------

function slices(batch: RecordBatch): RecordBatch[] {
  if (batch.numRows <= SLICE_ROWS) return [batch];
  const out: RecordBatch[] = [];
  for (let start = 0; start < batch.numRows; start += SLICE_ROWS) out.push(batch.slice(start, Math.min(batch.numRows, start + SLICE_ROWS)));
  return out;
}

/**
 * Decodes, rewrites for Hyper and re-encodes, one record batch at a time; a large batch in
 * slices, giving other work a turn between them (a rewrite to JSON text takes a while).
 */
async function* reencode(source: IpcSource, schema: Schema): AsyncIterable<Uint8Array> {
  const sink = new ChunkCollector();
  const writer = new RecordBatchStreamWriter();
  const breathe = makeBreather();
  writer.reset(sink, schema);
  for await (const batch of source.batches()) {
    for (const slice of slices(batch)) {
      writer.write(wireBatch(slice, schema));
      // One write per slice: the writer's many small buffers become one COPY message.
      if (sink.byteLength > 0) yield sink.take();
      await breathe();
    }
  }
  writer.close();
  if (sink.byteLength > 0) yield sink.take();
}

/**
 * What a column becomes in `INSERT ... SELECT` from the temporary table: the value as it is when
 * the types agree, else a cast to the table's type. Text with a length limit is cast to TEXT
 * only, so the database still checks the limit instead of cutting the value.
 */
function selectExpression(p: ColumnPlan): string {
  const ref = quoteIdent(p.field.name);
  if (isSameType(p.mapping.type, p.columnType)) return ref;
  if (p.columnType.family === 'text' && p.columnType.length !== undefined) return p.mapping.type.kind === 'text' || p.mapping.type.kind === 'json' ? ref : `CAST(${ref} AS TEXT)`;
  return `CAST(${ref} AS ${p.column.sqlType})`;
}

/** Each file column with the SQL type of its exact Arrow type (what ARROWSTREAM requires). */
function fieldTypes(plans: readonly ColumnPlan[]): string {
  return plans.map((p) => `${quoteIdent(p.field.name)} ${standardSqlType(p.mapping.type)}`).join(', ');
}

function isArrowCorruption(error: IngestError): boolean {
  return error.sqlState === 'XX001' && /corrupt|unexpected end/i.test(error.message);
}

async function loadHyper(conn: DbConnection, file: ClaimedFile, table: TableName, source: IpcSource, plans: readonly ColumnPlan[], ctx: IngestContext): Promise<number> {
  const rewrite = !source.passThrough || plans.some((p) => p.mapping.rewrite !== 'none');
  // ARROWSTREAM takes a column only under its exact name and type, and a NOT NULL column only
  // from a non-nullable field; anything else is loaded through a temporary table and cast.
  const direct = plans.every((p) => p.field.name === p.column.name && isSameType(p.mapping.type, p.columnType) && (p.column.nullable || !p.field.nullable));
  // A Null-typed field may be declared non-nullable (its values are all null all the same); as
  // Utf8 it must be nullable, or Hyper reports "non-zero null count for non-nullable column".
  const schema = wireSchema(plans.map((p) => ({ name: p.field.name, type: wireType(p.field.type), nullable: p.field.nullable || p.mapping.rewrite === 'null-to-utf8' })));
  const bytes = (): AsyncIterable<Uint8Array> => (rewrite ? reencode(source, schema) : source.streamBytes());
  const fields = columnList(plans.map((p) => ({ name: p.field.name })));
  if (serverMayRead(ctx, source, !rewrite)) {
    if (direct) return loadOnServer(conn, file, table, source, { kind: 'copy', fields }, ctx);
    // Into varchar(n)/char(n) hyperd's INSERT may cut a long value without a word; COPY refuses it.
    if (!plans.some((p) => p.columnType.family === 'text' && p.columnType.length !== undefined)) {
      return loadOnServer(conn, file, table, source, { kind: 'insert', columns: columnList(plans.map((p) => p.column)), select: plans.map(selectExpression).join(', '), descriptor: fieldTypes(plans) }, ctx);
    }
  }
  ctx.logger.debug('arrow: loading through ARROWSTREAM', { file: file.name, format: source.format, passThrough: !rewrite, viaTempTable: !direct, notes: source.notes });

  const copy = async (target: string): Promise<number> => {
    const sql = `COPY ${target} (${fields}) FROM STDIN WITH (FORMAT ARROWSTREAM)`;
    try {
      return await conn.copyFrom(sql, bytes());
    } catch (error) {
      throw hyperCopyError(error, file, sql, ctx);
    }
  };

  if (direct) return copy(qualifiedName(table));

  // Hyper keeps DDL even when the transaction rolls back, and refuses DDL after DML in one
  // transaction: so one temporary table per session, under a fixed name, replaced here (DDL
  // first) and emptied after use (TRUNCATE counts as DML). `pg_temp.` so a real table of that
  // name is never touched.
  await conn.query(`DROP TABLE IF EXISTS ${TEMP_TABLE}`);
  await conn.query(`CREATE TEMPORARY TABLE ${quoteIdent(TEMP_NAME)} (${fieldTypes(plans)})`);
  const copied = await copy(TEMP_TABLE);
  const targets = columnList(plans.map((p) => p.column));
  const rows = await conn.execute(`INSERT INTO ${qualifiedName(table)} (${targets}) SELECT ${plans.map(selectExpression).join(', ')} FROM ${TEMP_TABLE}`);
  if (rows !== copied) throw partialRead(file, copied, rows, ctx);
  await conn.query(`TRUNCATE ${TEMP_TABLE}`);
  return rows;
}

/**
 * hyperd (9.1) does not always read back in full what its own transaction has just copied: with
 * 1M rows COPYed into a table, `COUNT(*)` in the same transaction saw 82,496 (after COMMIT, all
 * 1,000,000), and `INSERT ... SELECT` from that table moved only as many. So the temporary-table
 * load is trusted only when the INSERT moved every row the COPY took; otherwise the transaction
 * is rolled back and the file is loaded again as CSV straight into its table.
 */
function partialRead(file: ClaimedFile, copied: number, inserted: number, ctx: IngestContext): IngestFailure {
  const reason = `Hyper moved ${inserted} of the ${copied} rows copied into the temporary table; retrying as CSV`;
  ctx.fileState.set(FORCE_CSV, reason);
  ctx.logger.warn(reason, { file: file.name });
  return new IngestFailure(ingestError('data', 'ARROW_PARTIAL_READ', `${file.name}: ${reason}`, 'Nothing to do: the file is loaded again as CSV.', { file: file.name, retry: { reason } }));
}

/**
 * A refused ARROWSTREAM COPY: corrupt input is the file's fault; a type or feature Hyper turned
 * down (which the plan did not foresee) is retried in a fresh transaction as CSV, which every
 * type here has a text form for.
 */
function hyperCopyError(error: unknown, file: ClaimedFile, sql: string, ctx: IngestContext): unknown {
  if (isIngestFailure(error) || error instanceof BatchTooLarge || error instanceof IpcProblem) return error;
  const failure = fromDbError(error, file.name, sql);
  if (isArrowCorruption(failure)) {
    return new IngestFailure(
      ingestError('data', 'ARROW_CORRUPT', `${file.name}: Hyper could not read the Arrow data: ${failure.message}`, 'Write the file again with an Arrow library, then replay it.', {
        file: file.name,
        sqlState: failure.sqlState,
        sql,
        cause: error,
      }),
    );
  }
  if (failure.sqlState === '0A000' || failure.sqlState === '42804' || failure.sqlState === 'XX001') {
    const reason = `Hyper refused the Arrow data (${failure.message.replace(/\s*\n\s*/g, '; ')}); retrying as CSV`;
    ctx.fileState.set(FORCE_CSV, reason);
    ctx.logger.warn(reason, { file: file.name });
    return new IngestFailure({ ...failure, retry: { reason } });
  }
  return error;
}

// ---------------------------------------------------------------------------------------------
// Elsewhere: Arrow in, as CSV text
// ---------------------------------------------------------------------------------------------

async function* csvChunks(source: IpcSource): AsyncIterable<string> {
  let lines: string[] = [];
  let size = 0;
  const breathe = makeBreather();
  for await (const batch of source.batches()) {
    const formatters = batch.data.children.map((child) => makeFormatter(child));
    const last = formatters.length - 1;
    for (let row = 0; row < batch.numRows; row++) {
      let line = '';
      for (let c = 0; c <= last; c++) line += csvField(formatters[c]!.text(row)) + (c === last ? '\n' : ',');
      lines.push(line);
      size += line.length;
      if (size >= CSV_CHUNK) {
        yield lines.join('');
        lines = [];
        size = 0;
        await breathe();
      }
    }
  }
  if (lines.length > 0) yield lines.join('');
}

async function loadCsv(conn: DbConnection, file: ClaimedFile, table: TableName, source: IpcSource, plans: readonly ColumnPlan[], ctx: IngestContext): Promise<number> {
  const sources = sourceValues(file, ctx);
  const sql = `COPY ${qualifiedName(table)} (${columnList([...plans.map((p) => p.column), ...sources])}) FROM STDIN WITH (FORMAT csv)`;
  return conn.copyFrom(sql, sources.length > 0 ? withSourceFields(csvChunks(source), sources) : csvChunks(source));
}

// ---------------------------------------------------------------------------------------------

async function append(conn: DbConnection, file: ClaimedFile, table: TableName, ctx: IngestContext): Promise<AppendResult> {
  // Where hyperd may read the file itself, its values are checked as it is opened (see server-read.ts).
  const source = await openIpc(file, { checkValues: ctx.capabilities.readsLocalFiles && ctx.capabilities.arrowStream && !ctx.fileState.has(NO_SERVER_READ) });
  const schema = source.schema;
  checkFieldNames(schema, file);
  const mappings = mapFields(schema, file);
  const columns = await tableColumns(conn, file, table, schema, mappings, ctx);
  const plans = plan(file, table, schema, mappings, columns, mappings.map((m, k) => (m.rewrite === 'null-to-utf8' ? source.rows : source.nulls[k]!)));
  // Source columns are constants ARROWSTREAM cannot add: such files go as CSV, the values appended.
  if (ctx.capabilities.arrowStream && !ctx.fileState.has(FORCE_CSV) && !hasSourceColumns(ctx)) {
    return { rows: await loadHyper(conn, file, table, source, plans, ctx) };
  }
  return { rows: await loadCsv(conn, file, table, source, plans, ctx) };
}

function toError(error: unknown, file: ClaimedFile): IngestError {
  if (isIngestFailure(error)) return error.error;
  if (error instanceof IpcProblem) return readError(file, error);
  if (error instanceof BatchTooLarge) {
    return ingestError('data', 'ARROW_BATCH_TOO_LARGE', `${file.name}: ${error.message}`, 'Write the file with smaller record batches (e.g. 64k rows each), then replay it.', {
      file: file.name,
      cause: error,
    });
  }
  return fromDbError(error, file.name);
}

/** Arrow IPC files and streams (`.arrow`, `.arrows`, `.ipc`, `.feather`). */
export const arrowIngester: IngesterPlugin = defineIngester({
  name: 'arrow',
  extensions: ['.arrow', '.arrows', '.ipc', '.feather'],
  append(conn, file, table, ctx) {
    return ResultAsync.fromPromise(append(conn, file, table, ctx), (error) => toError(error, file));
  },
});

export default arrowIngester;
