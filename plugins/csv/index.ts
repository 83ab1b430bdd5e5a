/**
 * CSV and TSV ingester. The file is loaded by the database's own COPY parser, streamed in large
 * chunks (or read by the server itself from the claimed path when it can): no per-row JavaScript.
 * Only the head of the file is parsed here (papaparse), for the header and, when the table does
 * not exist yet, to infer column types.
 */
import { ResultAsync } from 'neverthrow';
import { fromDbError, groupFailure } from '../../src/errors.ts';
import { defineIngester } from '../../src/plugins.ts';
import type { IngesterPlugin } from '../../src/types.ts';
import { append, nameColumn } from './append.ts';
import { appendMany } from './append-many.ts';

export { type Scan, scanCsv } from './scan.ts';

/** CSV (`.csv`) and tab-separated (`.tsv`) files with a header line. */
export const csvIngester: IngesterPlugin = defineIngester({
  name: 'csv',
  extensions: ['.csv', '.tsv'],
  append(conn, file, table, ctx) {
    const header: string[] = [];
    return ResultAsync.fromPromise(append(conn, file, table, ctx, header), (error) => nameColumn(fromDbError(error, file.name), header));
  },
  appendMany(conn, files, table, ctx) {
    return ResultAsync.fromPromise(appendMany(conn, files, table, ctx), groupFailure);
  },
});

export default csvIngester;
