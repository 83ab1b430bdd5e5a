/**
 * JSON ingester: an array of objects (`.json`) or JSON lines (`.json`, `.jsonl`, `.ndjson`).
 * The file is streamed once: each 1 MiB read chunk is split into records, which are parsed, turned
 * into CSV text and fed to the database's COPY parser in ~1 MiB chunks, so a file of any size costs
 * a few chunks of memory (and the head of the file kept as the type sample). The
 * first records decide the columns and types when the table does not exist yet; a later value that
 * does not fit its inferred type makes the plugin ask for a fresh attempt with a wider type.
 */
import { ResultAsync } from 'neverthrow';
import { fromDbError, ingestError, IngestFailure } from '../../src/errors.ts';
import { defineIngester } from '../../src/plugins.ts';
import { columnList } from '../../src/columns/schema.ts';
import { sourceValues, withSourceFields } from '../../src/columns/source-columns.ts';
import { qualifiedName, tableLabel } from '../../src/columns/sql.ts';
import { tableMissing } from '../../src/columns/table-fit.ts';
import type { AppendResult, ClaimedFile, DbConnection, IngestContext, IngesterPlugin, TableName } from '../../src/types.ts';
import { jsonSkip } from './bad-rows.ts';
import { explainCopyError } from './copy-error.ts';
import { type JsonDialect, type JsonReading, jsonReading } from './dialect.ts';
import { type Plan, planExisting, planNew } from './plan.ts';
import { readBatches } from './records.ts';
import { csvChunks, RowEncoder } from './row-encoder.ts';
import { takeSample } from './sample.ts';

export type { JsonDialect } from './dialect.ts';

async function append(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  ctx: IngestContext,
  reading: JsonReading,
): Promise<AppendResult> {
  if (file.size === 0) {
    throw new IngestFailure(
      ingestError(
        'data',
        'EMPTY_FILE',
        `${file.name} is empty (0 bytes)`,
        'A JSON file needs an array of objects or JSON lines; write the file completely before creating its .ready, then replay it.',
        {
          file: file.name,
        },
      ),
    );
  }
  const existing = await conn.describeTable(table);
  let plan: Plan | undefined;
  const skip = jsonSkip(ctx, file, existing, () => plan);
  const batches = readBatches(file, skip?.unreadable);
  try {
    const sample = await takeSample(batches);
    if (sample.records.length === 0) {
      await skip?.drain();
      // Only an empty array gets here; it says nothing about columns, so no table is created.
      ctx.logger.info('empty array: nothing to append', { file: file.name, table: tableLabel(table) });
      return { rows: 0 };
    }
    if (!existing && !ctx.schema.createTable) {
      throw tableMissing(file, table);
    }
    plan = existing
      ? await planExisting(conn, file, table, existing, sample, ctx, reading)
      : await planNew(conn, file, table, sample, ctx, reading);
    const sources = sourceValues(file, ctx);
    const sql = `COPY ${qualifiedName(table)} (${columnList([...plan.columns, ...sources])}) FROM STDIN WITH (FORMAT csv, HEADER false)`;
    const stop = { stopped: false };
    try {
      const chunks = csvChunks(sample, batches, new RowEncoder(plan, file, table, ctx), stop, skip);
      return { rows: await conn.copyFrom(sql, sources.length > 0 ? withSourceFields(chunks, sources) : chunks) };
    } catch (error) {
      stop.stopped = true;
      throw await explainCopyError(error, file, plan, sql, ctx, skip);
    }
  } finally {
    await batches.return(undefined);
  }
}

/**
 * JSON arrays of objects (`.json`) and JSON lines (`.json`, `.jsonl`, `.ndjson`); `dialect`: the
 * strings that are NULL, and how date strings are written (see JsonDialect).
 */
export function createJsonIngester(dialect: JsonDialect = {}): IngesterPlugin {
  const reading = jsonReading(dialect);
  return defineIngester({
    name: 'json',
    extensions: ['.json', '.jsonl', '.ndjson'],
    append(conn, file, table, ctx) {
      return ResultAsync.fromPromise(append(conn, file, table, ctx, reading), (error) => fromDbError(error, file.name));
    },
  });
}

/** JSON with the default dialect: no NULL markers, dates decided by the file or failing it. */
export const jsonIngester: IngesterPlugin = createJsonIngester();

export default jsonIngester;
