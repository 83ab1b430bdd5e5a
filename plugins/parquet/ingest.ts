/**
 * Parquet ingester (`.parquet`, `.pq`). The footer is read and checked with hyparquet first (on
 * every path, so a broken file is always reported by us, clearly), and gives the column types
 * (`file-columns.ts`). Then, fastest first:
 * - the database reads the claimed file itself (Hyper with `readsLocalFiles`):
 *   `INSERT INTO t (...) SELECT CAST(...) FROM external(path, FORMAT => 'parquet')` (`server-load.ts`);
 * - otherwise (PostgreSQL, a remote hyperd, or a file hyperd cannot read: a type, codec or
 *   encoding its reader lacks, known from the footer, or any file it refuses, found out by trying
 *   and retried in a fresh transaction) the file is decoded here, row group by row group, and
 *   streamed as CSV into `COPY ... FROM STDIN`.
 */
import type { FileMetaData } from 'hyparquet';
import { ResultAsync } from 'neverthrow';
import { fromDbError, isIngestFailure } from '../../src/errors.ts';
import { columnList } from '../../src/columns/schema.ts';
import { sourceValues, withSourceFields } from '../../src/columns/source-columns.ts';
import { qualifiedName } from '../../src/columns/sql.ts';
import type { AppendResult, ClaimedFile, DbConnection, IngestContext, IngestError, TableName } from '../../src/types.ts';
import { csvBatches, readableFooter } from './csv.ts';
import { rowCountMismatch } from './failures.ts';
import { fileColumns, type Target, targetsOf } from './file-columns.ts';
import { asyncBufferOf, readFooter } from './footer.ts';
import { loadOnServer, NO_SERVER_READ, serverCannotRead } from './server-load.ts';

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

/** Appends one Parquet file (the `append` of `parquetIngester`, index.ts, which imports this module on first use). */
export function appendParquet(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  ctx: IngestContext,
): ResultAsync<AppendResult, IngestError> {
  return ResultAsync.fromPromise(append(conn, file, table, ctx), (error) => toError(error, file));
}
