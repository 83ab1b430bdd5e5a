/**
 * Hyper reading a claimed Arrow file itself: `COPY t (cols) FROM '<path>' WITH (FORMAT arrowfile)`
 * (or `arrowstream` for the stream format), instead of sending its bytes through
 * `COPY ... FROM STDIN`.
 *
 * Only for the case where the bytes would have gone through untouched anyway: Hyper can read the
 * file (`readsLocalFiles`), nothing in it needs a rewrite (little-endian, uncompressed, current
 * framing, types Hyper reads as they are) and every column goes straight into the table column
 * of its name and type.
 *
 * hyperd's own reader is not trusted with damaged files: every message is first checked here as
 * it would be for streaming, values that point elsewhere included (offsets, indices, views: see
 * `checkMessages` for why the other buffers need not be read for that), and the rows hyperd
 * loaded must be the rows the checked metadata announced. Anything hyperd refuses in a file that
 * passed the checks is retried in a fresh transaction with the bytes streamed, which gets the
 * last word.
 */
import { fromDbError, ingestError, IngestFailure, isIngestFailure } from '../../src/errors.ts';
import { qualifiedName, quoteLiteral } from '../../src/columns/sql.ts';
import type { ClaimedFile, DbConnection, IngestContext, TableName } from '../../src/types.ts';
import { IpcProblem } from './problem.ts';
import type { IpcSource } from './source.ts';

/** `fileState` key: the server read of this file failed once; stream it. */
export const NO_SERVER_READ = 'arrow.noServerRead';

/** Whether hyperd may read this file itself (see the module comment). */
export function serverMayRead(ctx: IngestContext, source: IpcSource, untouched: boolean): boolean {
  return ctx.capabilities.readsLocalFiles && untouched && source.passThrough && !ctx.fileState.has(NO_SERVER_READ);
}

/** The retry that streams the file, after hyperd refused it or loaded other rows than announced. */
function streamInstead(
  file: ClaimedFile,
  reason: string,
  ctx: IngestContext,
  details: { readonly sql: string; readonly sqlState?: string | undefined; readonly cause?: unknown },
): IngestFailure {
  const message = `hyperd could not read ${file.name} itself (${reason}); retrying with the file streamed`;
  ctx.fileState.set(NO_SERVER_READ, true);
  ctx.logger.info(message, { file: file.name });
  return new IngestFailure(
    ingestError('data', 'ARROW_SERVER_READ', message, 'Nothing to do: the file is loaded again, streamed.', {
      file: file.name,
      sql: details.sql,
      ...(details.sqlState ? { sqlState: details.sqlState } : {}),
      ...(details.cause === undefined ? {} : { cause: details.cause }),
      retry: { reason: message },
    }),
  );
}

/**
 * How hyperd reads the file into the table:
 * - `copy`: every column goes as it is into the table column of its very name and type:
 *   `COPY t (fields) FROM 'path'`, hyperd's own fastest load;
 * - `insert`: some column needs a cast (a wider type), goes into a column of another letter case,
 *   or into a NOT NULL column from a nullable field, which `COPY ... (FORMAT arrow...)` refuses:
 *   `INSERT INTO t (columns) SELECT expressions FROM external('path', COLUMNS => DESCRIPTOR(...))`,
 *   the descriptor giving each field's exact Arrow type (hyperd infers no Arrow schema there).
 *   A NULL bound for a NOT NULL column fails the INSERT, and the streamed retry reports it.
 */
export type ServerLoad =
  | { readonly kind: 'copy'; readonly fields: string }
  | { readonly kind: 'insert'; readonly columns: string; readonly select: string; readonly descriptor: string };

function statement(table: TableName, path: string, format: 'arrowfile' | 'arrowstream', load: ServerLoad): string {
  if (load.kind === 'copy') return `COPY ${qualifiedName(table)} (${load.fields}) FROM ${quoteLiteral(path)} WITH (FORMAT ${format})`;
  return (
    `INSERT INTO ${qualifiedName(table)} (${load.columns}) SELECT ${load.select} FROM external(${quoteLiteral(path)}, COLUMNS ` +
    `=> DESCRIPTOR(${load.descriptor}), FORMAT => '${format}')`
  );
}

/** Loads the file with hyperd reading it from its staged path; the rows loaded. */
export async function loadOnServer(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  source: IpcSource,
  load: ServerLoad,
  ctx: IngestContext,
): Promise<number> {
  await source.check();
  const sql = statement(table, file.stagedPath, source.format === 'file' ? 'arrowfile' : 'arrowstream', load);
  ctx.logger.debug('arrow: the database reads the file itself', { file: file.name, format: source.format, via: load.kind, sql });
  let rows: number;
  try {
    rows = await conn.execute(sql);
  } catch (error) {
    if (isIngestFailure(error) || error instanceof IpcProblem) throw error;
    const failure = fromDbError(error, file.name, sql);
    throw streamInstead(file, failure.message.replaceAll(file.stagedPath, file.name).replace(/\s*\n\s*/g, '; '), ctx, {
      sqlState: failure.sqlState,
      sql,
      cause: error,
    });
  }
  if (rows !== source.rows) throw streamInstead(file, `it loaded ${rows} rows where the file holds ${source.rows}`, ctx, { sql });
  return rows;
}
