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
import { streaming } from '../shared/decoded-file.ts';
import { type CsvDialect, dialectProblems } from './dialect.ts';
import { withLineFeeds } from './line-ends.ts';
import { sniffedDialect } from './sniffed.ts';

export { type CsvDialect, type DialectProblem, delimiterProblem, dialectProblems } from './dialect.ts';
export { type Scan, scanCsv } from './scan.ts';
export { type Sniffed, sniffCsv } from './sniff.ts';
export { sniffedFlags } from './sniffed.ts';

/**
 * CSV (`.csv`) and tab-separated (`.tsv`) files with a header line; `dialect.delimiter` sets the
 * delimiter of `.csv` files (e.g. `';'` for spreadsheets' exports in locales with a decimal comma),
 * `dialect.dateStyle` and the formats how dates are written (see CsvDialect).
 */
export function createCsvIngester(dialect: CsvDialect = {}): IngesterPlugin {
  const [problem] = dialectProblems(dialect);
  if (problem) throw new TypeError(`csv ${problem.field} ${problem.problem}`);
  const single = defineIngester({
    name: 'csv',
    extensions: ['.csv', '.tsv'],
    append(conn, file, table, ctx) {
      const header: string[] = [];
      const load = async () => {
        const view = await withLineFeeds(file);
        // Sniffed per file: the head is read as it arrives (decompressed and decoded).
        const read = dialect.sniff ? await sniffedDialect(view, dialect) : dialect;
        return append(conn, view, table, view === file ? ctx : streaming(ctx), header, read);
      };
      return ResultAsync.fromPromise(load(), (error) => nameColumn(fromDbError(error, file.name), header));
    },
  });
  // Files of a group may each be written their own way: sniffed, they load one by one (in the group's transaction).
  if (dialect.sniff) return single;
  return defineIngester({
    ...single,
    appendMany(conn, files, table, ctx) {
      const load = async () => {
        const views = await Promise.all(files.map(withLineFeeds));
        return appendMany(conn, views, table, views.every((v, i) => v === files[i]) ? ctx : streaming(ctx), dialect);
      };
      return ResultAsync.fromPromise(load(), groupFailure);
    },
  });
}

/** CSV and TSV with the default dialect (comma-separated `.csv`). */
export const csvIngester: IngesterPlugin = createCsvIngester();

export default csvIngester;
