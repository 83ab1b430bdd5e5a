/**
 * The two failures both of the Parquet ingester's load paths report: a schema the table cannot
 * take, and a file whose footer counts other rows than were loaded. One module so that the paths
 * (`server-load.ts`, `index.ts`) and the column checks (`file-columns.ts`) word them alike.
 */
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile } from '../../src/types.ts';

export function schemaError(file: ClaimedFile, code: string, message: string, hint: string, column?: string): IngestFailure {
  return new IngestFailure(
    ingestError('schema', code, `${file.name}: ${message}`, hint, { file: file.name, ...(column === undefined ? {} : { column }) }),
  );
}

export function rowCountMismatch(file: ClaimedFile, rows: number, expected: bigint | number): IngestFailure {
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
