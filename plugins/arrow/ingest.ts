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
 *   ARROWSTREAM refuses any type difference and matches names case-sensitively (hyperd 9.1 then
 *   moves only part of a large load out of that table: such a file is retried as CSV).
 *
 * When Hyper can read the claimed file itself and its bytes need no rewrite, Hyper reads it from
 * its path instead, with `COPY` or, for casts and other names or nullability, `INSERT ... SELECT
 * FROM external(...)` (server-read.ts): no temporary table then, and no STDIN.
 *
 * Elsewhere the batches become CSV text for `COPY ... FORMAT csv`, in ~1 MiB strings.
 */
import { ResultAsync } from 'neverthrow';
import { RecordBatchStreamWriter, type RecordBatch, type Schema } from 'apache-arrow';
import { fromDbError, ingestError, IngestFailure, isIngestFailure } from '../../src/errors.ts';
import { columnList } from '../../src/columns/schema.ts';
import { hasSourceColumns, sourceValues, withSourceFields } from '../../src/columns/source-columns.ts';
import { qualifiedName, quoteIdent } from '../../src/columns/sql.ts';
import type { AppendResult, ClaimedFile, DbConnection, IngestContext, IngestError, TableName } from '../../src/types.ts';
import { BatchTooLarge } from './columns.ts';
import { csvField } from '../shared/csv-text.ts';
import { makeFormatter } from './format.ts';
import { IpcProblem, makeBreather } from './problem.ts';
import { ChunkCollector } from './chunk-collector.ts';
import { readError } from './read-errors.ts';
import { openIpc, type IpcSource } from './source.ts';
import { isSameType } from './types.ts';
import { wireBatch, wireSchema, wireType } from './wire.ts';
import { checkFieldNames, type ColumnPlan, fieldTypes, mapFields, plan, selectExpression, tableColumns } from './plan.ts';
import { loadOnServer, NO_SERVER_READ, serverMayRead } from './server-read.ts';

/** Batches longer than this are rewritten for Hyper in slices of this many rows. */
const SLICE_ROWS = 65_536;
/** CSV text is handed to COPY in strings of about this many characters. */
const CSV_CHUNK = 1 << 20;
/** `fileState` key: Hyper refused the Arrow data of an earlier attempt; load this file as CSV. */
const FORCE_CSV = 'arrow.csv';

/** The session's temporary table for loads that need casts (see `loadHyper`). */
const TEMP_NAME = 'hyperwatch_arrow_load';
const TEMP_TABLE = `pg_temp.${quoteIdent(TEMP_NAME)}`;

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
      try {
        writer.write(wireBatch(slice, schema));
      } catch (error) {
        throw unreadableValue(error);
      }
      // One write per slice: the writer's many small buffers become one COPY message.
      if (sink.byteLength > 0) yield sink.take();
      await breathe();
    }
  }
  writer.close();
  if (sink.byteLength > 0) yield sink.take();
}

function isArrowCorruption(error: IngestError): boolean {
  return error.sqlState === 'XX001' && /corrupt|unexpected end/i.test(error.message);
}

async function loadHyper(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  source: IpcSource,
  plans: readonly ColumnPlan[],
  ctx: IngestContext,
): Promise<number> {
  const rewrite = !source.passThrough || plans.some((p) => p.mapping.rewrite !== 'none');
  // ARROWSTREAM takes a column only under its exact name and type, and a NOT NULL column only
  // from a non-nullable field; anything else is loaded through a temporary table and cast.
  const direct = plans.every(
    (p) => p.field.name === p.column.name && isSameType(p.mapping.type, p.columnType) && (p.column.nullable || !p.field.nullable),
  );
  // A Null-typed field may be declared non-nullable (its values are all null all the same); as
  // Utf8 it must be nullable, or Hyper reports "non-zero null count for non-nullable column".
  const schema = wireSchema(
    plans.map((p) => ({
      name: p.field.name,
      type: wireType(p.field.type),
      nullable: p.field.nullable || p.mapping.rewrite === 'null-to-utf8',
    })),
  );
  const bytes = (): AsyncIterable<Uint8Array> => (rewrite ? reencode(source, schema) : source.streamBytes());
  const fields = columnList(plans.map((p) => ({ name: p.field.name })));
  if (serverMayRead(ctx, source, !rewrite)) {
    if (direct) return loadOnServer(conn, file, table, source, { kind: 'copy', fields }, ctx);
    // Into varchar(n)/char(n) hyperd's INSERT may cut a long value without a word; COPY refuses it.
    if (!plans.some((p) => p.columnType.family === 'text' && p.columnType.length !== undefined)) {
      return loadOnServer(
        conn,
        file,
        table,
        source,
        {
          kind: 'insert',
          columns: columnList(plans.map((p) => p.column)),
          select: plans.map(selectExpression).join(', '),
          descriptor: fieldTypes(plans),
        },
        ctx,
      );
    }
  }
  ctx.logger.debug('arrow: loading through ARROWSTREAM', {
    file: file.name,
    format: source.format,
    passThrough: !rewrite,
    viaTempTable: !direct,
    notes: source.notes,
  });

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
  const rows = await conn.execute(
    `INSERT INTO ${qualifiedName(table)} (${targets}) SELECT ${plans.map(selectExpression).join(', ')} FROM ${TEMP_TABLE}`,
  );
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
  return new IngestFailure(
    ingestError('data', 'ARROW_PARTIAL_READ', `${file.name}: ${reason}`, 'Nothing to do: the file is loaded again as CSV.', {
      file: file.name,
      retry: { reason },
    }),
  );
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
      ingestError(
        'data',
        'ARROW_CORRUPT',
        `${file.name}: Hyper could not read the Arrow data: ${failure.message}`,
        'Write the file again with an Arrow library, then replay it.',
        {
          file: file.name,
          sqlState: failure.sqlState,
          sql,
          cause: error,
        },
      ),
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

/**
 * A value the checks let through but its type cannot be read from (its buffer shorter than the
 * type apache-arrow decoded it as): the file's fault, in words, never a bare TypeError.
 */
function unreadableValue(error: unknown, column?: string, row?: number): unknown {
  if (error instanceof IpcProblem || error instanceof BatchTooLarge || isIngestFailure(error)) return error;
  if (!(error instanceof TypeError || error instanceof RangeError)) return error;
  if (column === undefined || row === undefined)
    return new IpcProblem('ARROW_CORRUPT', 'a record batch has a value its type cannot be read from (its buffers do not hold it)');
  return new IpcProblem(
    'ARROW_CORRUPT',
    `column "${column}" has a value at row ${row + 1} of a record batch that its type cannot be read from (its buffers do not hold it)`,
    column,
  );
}

async function* csvChunks(source: IpcSource): AsyncIterable<string> {
  let lines: string[] = [];
  let size = 0;
  const breathe = makeBreather();
  for await (const batch of source.batches()) {
    const formatters = batch.data.children.map((child) => makeFormatter(child));
    const last = formatters.length - 1;
    for (let row = 0; row < batch.numRows; row++) {
      let line = '';
      let c = 0;
      try {
        for (; c <= last; c++) line += csvField(formatters[c]!.text(row)) + (c === last ? '\n' : ',');
      } catch (error) {
        throw unreadableValue(error, source.schema.fields[c]?.name ?? String(c), row);
      }
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

async function loadCsv(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  source: IpcSource,
  plans: readonly ColumnPlan[],
  ctx: IngestContext,
): Promise<number> {
  const sources = sourceValues(file, ctx);
  const sql = `COPY ${qualifiedName(table)} (${columnList([...plans.map((p) => p.column), ...sources])}) FROM STDIN WITH (FORMAT csv)`;
  return conn.copyFrom(sql, sources.length > 0 ? withSourceFields(csvChunks(source), sources) : csvChunks(source));
}

// ---------------------------------------------------------------------------------------------

async function append(conn: DbConnection, file: ClaimedFile, table: TableName, ctx: IngestContext): Promise<AppendResult> {
  // Where hyperd may read the file itself, its values are checked as it is opened (see server-read.ts).
  const source = await openIpc(file, {
    checkValues: ctx.capabilities.readsLocalFiles && ctx.capabilities.arrowStream && !ctx.fileState.has(NO_SERVER_READ),
  });
  const schema = source.schema;
  checkFieldNames(schema, file);
  const mappings = mapFields(schema, file);
  const columns = await tableColumns(conn, file, table, schema, mappings, ctx);
  const plans = plan(
    file,
    table,
    schema,
    mappings,
    columns,
    mappings.map((m, k) => (m.rewrite === 'null-to-utf8' ? source.rows : source.nulls[k]!)),
  );
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
    return ingestError(
      'data',
      'ARROW_BATCH_TOO_LARGE',
      `${file.name}: ${error.message}`,
      'Write the file with smaller record batches (e.g. 64k rows each), then replay it.',
      {
        file: file.name,
        cause: error,
      },
    );
  }
  return fromDbError(error, file.name);
}

/** Appends one Arrow file (the `append` of `arrowIngester`, index.ts, which imports this module on first use). */
export function appendArrow(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  ctx: IngestContext,
): ResultAsync<AppendResult, IngestError> {
  return ResultAsync.fromPromise(append(conn, file, table, ctx), (error) => toError(error, file));
}
