/**
 * Parquet ingester (`.parquet`, `.pq`). The footer is read and checked with hyparquet first (on
 * every path, so a broken file is always reported by us, clearly), and gives the column types.
 * Then, fastest first:
 * - the database reads the claimed file itself (Hyper with `readsLocalFiles`):
 *   `INSERT INTO t (...) SELECT CAST(...) FROM external(path, FORMAT => 'parquet')`;
 * - otherwise (PostgreSQL, a remote hyperd, or a file hyperd cannot read: a type, codec or
 *   encoding its reader lacks, known from the footer, or any file it refuses, found out by trying
 *   and retried in a fresh transaction) the file is decoded here, row group by row group, and
 *   streamed as CSV into `COPY ... FROM STDIN`.
 */
import { type FileMetaData, parquetSchema, type SchemaElement } from 'hyparquet';
import { ResultAsync } from 'neverthrow';
import { fromDbError, ingestError, IngestFailure, isIngestFailure } from '../../src/errors.ts';
import { defineIngester } from '../../src/plugins.ts';
import { columnList } from '../../src/columns/schema.ts';
import { sourceSelect, sourceValues, withSourceFields } from '../../src/columns/source-columns.ts';
import { createTableFor, fitTable } from '../../src/columns/table-fit.ts';
import { describeLogicalType, qualifiedName, quoteIdent, quoteLiteral, tableLabel } from '../../src/columns/sql.ts';
import { parseSqlType } from '../../src/columns/sql-types.ts';
import type { AppendResult, ClaimedFile, DbConnection, IngestContext, IngestError, IngesterPlugin, TableName } from '../../src/types.ts';
import { csvBatches, readableFooter } from './csv.ts';
import { asyncBufferOf, readFooter, rowsMended } from './footer.ts';
import { checkFilePages } from './decode.ts';
import { mapParquetColumn, type ParquetColumn } from './types.ts';
import { fitsColumn } from '../../src/columns/type-policy.ts';

/**
 * `fileState` key: hyperd refused to read this file itself (a type, codec or encoding its reader
 * does not take although the file is valid); the retry decodes it here instead. Hyper has no
 * savepoints ("Savepoints are disabled"), so the refused statement costs the transaction.
 */
const NO_SERVER_READ = 'parquet.noServerRead';

/**
 * Codecs hyperd's reader takes (main.0.0.26359, checked on files DuckDB and arrow-rs write). It
 * answers BROTLI with "error while reading Parquet file"; LZO and the old Hadoop LZ4 framing are
 * decoded here too, without asking it first.
 */
const SERVER_CODECS = new Set(['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'ZSTD', 'LZ4_RAW']);

/** Why hyperd should not be asked to read the file, known from its footer alone. */
function serverCannotRead(columns: readonly ParquetColumn[], metadata: FileMetaData): string | undefined {
  if (rowsMended(metadata)) return 'its footer counts other rows than its row groups hold';
  const unreadable = columns.filter((c) => !c.hyperReads);
  if (unreadable.length > 0)
    return `the database cannot read some of its column types: ${unreadable.map((c) => `${c.name} (${c.parquetType})`).join(', ')}`;
  const unsigned32 = new Set(columns.filter((c) => c.codec.kind === 'uint32').map((c) => c.name));
  for (const group of metadata.row_groups) {
    for (const chunk of group.columns) {
      const meta = chunk.meta_data!;
      const name = meta.path_in_schema.join('.');
      if (!SERVER_CODECS.has(meta.codec)) return `the database cannot read its ${meta.codec} compression (column "${name}")`;
      // hyperd reads delta-encoded unsigned 32-bit values above 2^31 - 1 as 2147483647 (DuckDB's
      // v2 files): it would land wrong values without a word.
      if (unsigned32.has(name) && meta.encodings.includes('DELTA_BINARY_PACKED'))
        return `the database misreads its delta-encoded unsigned 32-bit column "${name}"`;
    }
  }
  return undefined;
}

/** A file column and the table column it fills. */
interface Target {
  readonly column: ParquetColumn;
  readonly name: string;
  readonly sqlType: string;
}

function schemaError(file: ClaimedFile, code: string, message: string, hint: string, column?: string): IngestFailure {
  return new IngestFailure(
    ingestError('schema', code, `${file.name}: ${message}`, hint, { file: file.name, ...(column === undefined ? {} : { column }) }),
  );
}

/** The file's top-level columns with their types; unsupported types and ambiguous names are errors. */
function fileColumns(
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

async function targetsOf(
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

/**
 * hyperd reads the claimed file itself. Measured on 1M-row files written by hyperd (3 columns: int,
 * text, numeric; and 8 columns of mixed types), hyperd main.0.0.26359, 2-core machine, 12 runs each
 * in rotating order, median (min..max), milliseconds:
 *
 * | statement                                                  | 3 columns       | 8 columns        |
 * | ---------------------------------------------------------- | --------------- | ---------------- |
 * | INSERT INTO t (cols) SELECT cols FROM external(...)        | 356 (242..568)  | 779 (575..1588)  |
 * | INSERT INTO t (cols) SELECT CAST(col AS type), ... (ours)  | 309 (211..465)  | 697 (611..1221)  |
 * | COPY t (cols) FROM 'path' WITH (FORMAT parquet)            | 328 (234..446)  | 755 (469..1272)  |
 *
 * A tie within the noise (an earlier run: 297 vs 285 ms and 1065 vs 1056 ms), so the choice is made
 * on behaviour: COPY ... (FORMAT parquet) converts nothing but integer and float widening ("Type
 * 'text' is incompatible to type 'json'": it cannot even fill the TEXT column our own CREATE TABLE
 * makes for a JSON column, nor date → timestamp, integer → numeric, anything → text), whereas
 * INSERT ... SELECT reads each column by its name in the file and CASTs it to the table's type.
 */
async function loadOnServer(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  targets: readonly Target[],
  metadata: FileMetaData,
  ctx: IngestContext,
): Promise<number> {
  const expected = metadata.num_rows;
  const source = `external(${quoteLiteral(file.stagedPath)}, FORMAT => 'parquet')`;
  const sources = sourceValues(file, ctx);
  const select = [
    ...targets.map((t) => `CAST(${quoteIdent(t.column.name)} AS ${castType(t.sqlType)})`),
    ...sourceSelect(sources, ctx.sqlType),
  ].join(', ');
  const sql = `INSERT INTO ${qualifiedName(table)} (${columnList([...targets, ...sources])}) SELECT ${select} FROM ${source}`;
  // hyperd's reader is more lenient than ours: the pages are checked here first (see `checkFilePages`).
  await checkFilePages(file, asyncBufferOf(file), metadata);
  let rows: number;
  try {
    await checkLengths(conn, file, table, targets, source);
    rows = await conn.execute(sql);
  } catch (error) {
    throw serverReadError(error, file, sql, ctx);
  }
  if (BigInt(rows) !== expected) throw rowCountMismatch(file, rows, expected);
  return rows;
}

/**
 * hyperd's INSERT cuts a value too long for a `varchar(n)`/`char(n)` column without a word (its
 * COPY, and so our fallback, rejects it): look for one first, reading just those columns.
 */
async function checkLengths(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  targets: readonly Target[],
  source: string,
): Promise<void> {
  for (const target of targets) {
    const type = parseSqlType(target.sqlType);
    if (type.family !== 'text' || type.length === undefined) continue;
    const text = `CAST(${quoteIdent(target.column.name)} AS TEXT)`;
    const found = await conn.query<{ v: string }>(`SELECT ${text} AS v FROM ${source} WHERE length(${text}) > ${type.length} LIMIT 1`);
    if (found.length > 0) {
      const value = found[0]!.v;
      throw new IngestFailure(
        ingestError(
          'data',
          'VALUE_TOO_LONG',
          `${file.name}: column "${target.column.name}" has a value of ${value.length} characters ` +
            `(${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}), too long for ${target.sqlType} in ` +
            `table ${tableLabel(table)}`,
          `Shorten the value (or widen the table's column), then replay the file.`,
          { file: file.name, column: target.column.name },
        ),
      );
    }
  }
}

/**
 * The type to CAST a file column to. Into a text column: TEXT, never `varchar(n)`, whose CAST
 * would cut a long value (`checkLengths` reports it instead).
 */
function castType(sqlType: string): string {
  return parseSqlType(sqlType).family === 'text' ? 'TEXT' : sqlType;
}

/** hyperd's own errors about the file, made readable (and its own path replaced by the file's name). */
function serverReadError(error: unknown, file: ClaimedFile, sql: string, ctx: IngestContext): unknown {
  if (isIngestFailure(error)) return error;
  const failure = fromDbError(error, file.name, sql);
  // hyperd's reader says "... Parquet file ..."; anything else (a value out of range) stays as is.
  if (failure.kind === 'transient' || !/parquet/i.test(failure.message)) return error;
  // One line, naming the file as the producer did (not its staged path), without saying so twice.
  let message = failure.message.replaceAll(file.stagedPath, file.name).replace(/\s*\n\s*/g, '; ');
  if (message.startsWith(`${file.name}: `)) message = message.slice(file.name.length + 2);
  // hyperd refuses valid files too (codecs, encodings, types its reader lacks): whatever it says
  // about the file, our own decoder gets the last word, and reports real damage itself.
  if (!ctx.fileState.has(NO_SERVER_READ)) {
    const reason = `hyperd cannot read ${file.name} (${message}); retrying with the file decoded by hyperwatch`;
    ctx.fileState.set(NO_SERVER_READ, true);
    ctx.logger.info(reason, { file: file.name });
    return new IngestFailure({ ...failure, message, retry: { reason } });
  }
  if (failure.sqlState === '42804') return new IngestFailure({ ...failure, message });
  return new IngestFailure(
    ingestError(
      'data',
      'PARQUET_CORRUPT',
      `${file.name}: the database could not read the Parquet data: ${message}`,
      'The file is damaged; write it again from its source, then replay it.',
      {
        file: file.name,
        sql,
        ...(failure.sqlState ? { sqlState: failure.sqlState } : {}),
        cause: error,
      },
    ),
  );
}

function rowCountMismatch(file: ClaimedFile, rows: number, expected: bigint | number): IngestFailure {
  return new IngestFailure(
    ingestError(
      'data',
      'PARQUET_ROW_COUNT',
      `${file.name}: the footer counts ${expected} rows but ${rows} were loaded`,
      'The file is damaged; write it again from its source, then replay it.',
      {
        file: file.name,
      },
    ),
  );
}

/** Decoded here, one row group at a time, streamed as CSV into `COPY ... FROM STDIN`. */
async function loadDecoded(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  targets: readonly Target[],
  metadata: FileMetaData,
  ctx: IngestContext,
): Promise<number> {
  const counter = { rows: 0 };
  const batches = csvBatches({ file, source: asyncBufferOf(file), metadata, columns: targets.map((t) => t.column), counter });
  const sources = sourceValues(file, ctx);
  const rows = await conn.copyFrom(
    `COPY ${qualifiedName(table)} (${columnList([...targets, ...sources])}) FROM STDIN WITH (FORMAT csv)`,
    sources.length > 0 ? withSourceFields(batches, sources) : batches,
  );
  if (rows !== counter.rows || BigInt(rows) !== metadata.num_rows) throw rowCountMismatch(file, rows, metadata.num_rows);
  return rows;
}

async function append(conn: DbConnection, file: ClaimedFile, table: TableName, ctx: IngestContext): Promise<AppendResult> {
  const metadata = await readFooter(file);
  const { columns, decimals, asInt64, int96 } = fileColumns(file, metadata);
  const targets = await targetsOf(conn, file, table, columns, ctx);
  if (ctx.capabilities.parquet && ctx.capabilities.readsLocalFiles && !ctx.fileState.has(NO_SERVER_READ)) {
    const reason = serverCannotRead(columns, metadata);
    if (reason === undefined) return { rows: await loadOnServer(conn, file, table, targets, metadata, ctx) };
    ctx.logger.info(`decoding the Parquet file here: ${reason}`, { file: file.name });
  }
  return { rows: await loadDecoded(conn, file, table, targets, readableFooter(metadata, decimals, asInt64, int96), ctx) };
}

function toError(error: unknown, file: ClaimedFile): IngestError {
  return isIngestFailure(error) ? error.error : fromDbError(error, file.name);
}

/** Apache Parquet files (`.parquet`, `.pq`). */
export const parquetIngester: IngesterPlugin = defineIngester({
  name: 'parquet',
  extensions: ['.parquet', '.pq'],
  append(conn, file, table, ctx) {
    return ResultAsync.fromPromise(append(conn, file, table, ctx), (error) => toError(error, file));
  },
});

export default parquetIngester;
