/**
 * An ingester that decodes each file (decompression, a character set) and hands the decoded view
 * to an inner plugin, which never knows the difference. The database is told it cannot read the
 * files itself: what is on disk is not what loads.
 */
import { ResultAsync } from 'neverthrow';
import { fromDbError, groupFailure, IngestFailure } from '../../src/errors.ts';
import { defineIngester } from '../../src/plugins.ts';
import type { AppendResult, ClaimedFile, DbConnection, IngestContext, IngesterPlugin, TableName } from '../../src/types.ts';
import { type DecodedFile, streaming } from './decoded-file.ts';

export interface DecodingIngester {
  readonly name: string;
  readonly extensions: readonly string[];
  readonly inner: IngesterPlugin;
  /** The decoded view of a claimed file; rejects (an `IngestFailure`) when its head is bad. */
  readonly open: (file: ClaimedFile) => Promise<DecodedFile>;
}

async function appendMany(
  spec: DecodingIngester,
  conn: DbConnection,
  files: readonly ClaimedFile[],
  table: TableName,
  ctx: IngestContext,
): Promise<AppendResult[]> {
  const { inner } = spec;
  const views: DecodedFile[] = [];
  for (const [index, file] of files.entries()) {
    try {
      views.push(await spec.open(file));
    } catch (error) {
      throw new IngestFailure(fromDbError(error, file.name), index);
    }
  }
  // Files decoded whole up front go to the inner plugin together (one COPY for the lot, when it
  // can); a larger one is streamed on its own, so a bad one fails alone.
  if (inner.appendMany && views.every((v) => v.complete)) {
    const many = await inner.appendMany(conn, views, table, ctx);
    if (many.isErr()) throw new IngestFailure(many.error.error, many.error.index);
    return [...many.value];
  }
  const results: AppendResult[] = [];
  for (const [index, view] of views.entries()) {
    const one = await inner.append(conn, view, table, ctx);
    if (one.isErr()) throw new IngestFailure(one.error, index);
    results.push(one.value);
  }
  return results;
}

export function decodingIngester(spec: DecodingIngester): IngesterPlugin {
  return defineIngester({
    name: spec.name,
    extensions: spec.extensions,
    append(conn, file, table, ctx) {
      return ResultAsync.fromPromise(spec.open(file), (error) => fromDbError(error, file.name)).andThen((view) =>
        spec.inner.append(conn, view, table, streaming(ctx)),
      );
    },
    appendMany(conn, files, table, ctx) {
      return ResultAsync.fromPromise(appendMany(spec, conn, files, table, streaming(ctx)), groupFailure);
    },
  });
}
