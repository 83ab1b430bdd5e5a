/**
 * A failed COPY explained in the file's terms: the record's line and the column, a retry with a
 * wider type, or the refused row set aside when bad rows are skipped.
 */
import { fromDbError, IngestFailure, isIngestFailure } from '../../src/errors.ts';
import type { ClaimedFile, IngestContext } from '../../src/types.ts';
import { widen } from '../shared/infer-text.ts';
import type { JsonSkip } from './bad-rows.ts';
import type { Plan } from './plan.ts';
import { describePosition, type RecordPosition } from './record.ts';
import { readBatches } from './records.ts';
import { retryWider } from './widen-retry.ts';

/** Finds the `row`-th record (1-based) again: the database reports the COPY row, the operator needs the file's line. */
async function locate(file: ClaimedFile, row: number): Promise<RecordPosition | undefined> {
  let seen = 0;
  try {
    for await (const batch of readBatches(file)) {
      if (seen + batch.length >= row) {
        const record = batch[row - seen - 1]!;
        return { line: record.line, ...(record.index === undefined ? {} : { index: record.index }) };
      }
      seen += batch.length;
    }
  } catch {
    // The file went bad past the failing row; that row's position is all we wanted.
  }
  return undefined;
}

function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
}

/**
 * Turns a failed COPY into an error naming the record and column. Hyper reports the row of the
 * CSV stream (`file: 'stdin' line:3 column:2`), and with `HEADER false` row N is the Nth record.
 */
export async function explainCopyError(
  error: unknown,
  file: ClaimedFile,
  plan: Plan,
  sql: string,
  ctx: IngestContext,
  skip?: JsonSkip,
): Promise<unknown> {
  if (isIngestFailure(error)) return error;
  const failure = fromDbError(error, file.name, sql);
  if (failure.kind === 'transient' || !failure.sqlState) return new IngestFailure(failure);
  const message = messageOf(error);
  // A NOT NULL violation names its row only in the message: "(line: 2, column 0)".
  const rowInMessage = /line:\s*(\d+)/.exec(message);
  const row = failure.line ?? (rowInMessage ? Number(rowInMessage[1]) : undefined);
  const columnIndex = typeof failure.column === 'number' ? failure.column - 1 : -1;
  const column = plan.columns[columnIndex]?.name ?? /column "([^"]+)"/.exec(message)?.[1];
  const position = row === undefined ? undefined : await locate(file, row);

  const type = plan.inferred?.[columnIndex];
  if (type && column !== undefined && failure.sqlState.startsWith('22') && type.kind !== 'text' && type.kind !== 'json') {
    // A string the sample took for a date (or similar) that the database cannot read as one.
    const wider = widen(type, failure.sqlState);
    const where = position ? describePosition(position) : `COPY row ${row ?? '?'}`;
    return retryWider(
      ctx,
      file,
      column,
      wider,
      `column "${column}" was inferred as ${type.kind} from the first ${plan.sampleSize} record(s), but ${where} does not ` +
        `fit (${message}); retrying with ${wider.kind}`,
      position?.line,
    );
  }

  if (skip && !plan.inferred) {
    const again = await skip.refuse(file, failure, row, message, column);
    if (again) return again;
  }

  const where = position ? describePosition(position) : row === undefined ? undefined : `record ${row}`;
  const subject = [where, column === undefined ? undefined : `column "${column}"`].filter((part) => part !== undefined).join(', ');
  const { line: _row, column: _column, ...rest } = failure;
  return new IngestFailure({
    ...rest,
    message: `${file.name}: ${subject ? `${subject}: ` : ''}${message}`,
    ...(position ? { line: position.line } : {}),
    ...(column === undefined ? {} : { column }),
  });
}
