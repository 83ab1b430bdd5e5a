/**
 * The Parquet ingester's fast path: hyperd reads the claimed file itself with
 * `INSERT ... SELECT CAST(...) FROM external(path, FORMAT => 'parquet')`. What it decides: whether
 * the footer already says hyperd cannot read the file (`serverCannotRead`), and what hyperd's
 * refusal means (a retry decoded here, marked by `NO_SERVER_READ`, or real damage).
 */
import type { FileMetaData } from 'hyparquet';
import { fromDbError, ingestError, IngestFailure, isIngestFailure } from '../../src/errors.ts';
import { columnList } from '../../src/columns/schema.ts';
import { sourceSelect, sourceValues } from '../../src/columns/source-columns.ts';
import { qualifiedName, quoteIdent, quoteLiteral, tableLabel } from '../../src/columns/sql.ts';
import { parseSqlType } from '../../src/columns/sql-types.ts';
import type { ClaimedFile, DbConnection, IngestContext, TableName } from '../../src/types.ts';
import { checkFilePages } from './decode.ts';
import { rowCountMismatch } from './failures.ts';
import type { Target } from './file-columns.ts';
import { asyncBufferOf, rowsMended } from './footer.ts';
import type { ParquetColumn } from './column.ts';

/**
 * `fileState` key: hyperd refused to read this file itself (a type, codec or encoding its reader
 * does not take although the file is valid); the retry decodes it here instead. Hyper has no
 * savepoints ("Savepoints are disabled"), so the refused statement costs the transaction.
 */
export const NO_SERVER_READ = 'parquet.noServerRead';

/**
 * Codecs hyperd's reader takes (main.0.0.26359, checked on files DuckDB and arrow-rs write). It
 * answers BROTLI with "error while reading Parquet file"; LZO and the old Hadoop LZ4 framing are
 * decoded here too, without asking it first.
 */
const SERVER_CODECS = new Set(['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'ZSTD', 'LZ4_RAW']);

/** Why hyperd should not be asked to read the file, known from its footer alone. */
export function serverCannotRead(columns: readonly ParquetColumn[], metadata: FileMetaData): string | undefined {
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
export async function loadOnServer(
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
  // hyperd's reader is more lenient than ours: the pages are checked here (see `checkFilePages`)
  // while hyperd reads the file, and the transaction commits only once both are done. A page the
  // check refuses fails the file with the check's error, whatever hyperd made of it.
  const [checked, loaded] = await Promise.allSettled([
    checkFilePages(file, asyncBufferOf(file), metadata),
    checkLengths(conn, file, table, targets, source).then(() => conn.execute(sql)),
  ]);
  if (checked.status === 'rejected') throw checked.reason;
  if (loaded.status === 'rejected') throw serverReadError(loaded.reason, file, sql, ctx);
  const rows = loaded.value;
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
