/**
 * A value the inferred column type cannot hold: the wider type is kept for the next attempt, which
 * creates the table again with it.
 */
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile, IngestContext, LogicalType } from '../../src/types.ts';

/** `fileState` key: column types widened after an earlier attempt found a value they could not hold. */
const WIDENED = 'json.widened';

export function widenedTypes(ctx: IngestContext): Map<string, LogicalType> {
  const stored = ctx.fileState.get(WIDENED);
  return stored instanceof Map ? (stored as Map<string, LogicalType>) : new Map<string, LogicalType>();
}

/** Records the wider type for the next attempt (the table is created again with it). */
export function retryWider(
  ctx: IngestContext,
  file: ClaimedFile,
  column: string,
  wider: LogicalType,
  reason: string,
  line?: number,
): IngestFailure {
  const widened = widenedTypes(ctx);
  widened.set(column, wider);
  ctx.fileState.set(WIDENED, widened);
  ctx.logger.info(reason, { file: file.name });
  return new IngestFailure(
    ingestError(
      'schema',
      'JSON_TYPE_CHANGED',
      `${file.name}: ${reason}`,
      'The file is retried at once with the wider type; if it still fails, create the table with the column types you want, ' +
        'then replay the file.',
      { file: file.name, column, retry: { reason }, ...(line === undefined ? {} : { line }) },
    ),
  );
}
