/**
 * `onBadRows: 'skip'` inside one file's attempt: the sink its plugin hands bad rows to (only for
 * a file ingested alone; a group that meets a bad row is split until that file is alone), and
 * the limit checked before the COMMIT.
 */
import { pastLimit, tooManyBadRows } from '../columns/bad-rows.ts';
import { IngestFailure } from '../errors.ts';
import type { OpenedFile } from '../protocol/files.ts';
import type { ResolvedOptions } from '../options.ts';
import { type RejectedRows, rejectedRows, rejectedSuffix } from './rejected.ts';

/** This attempt's sink, or undefined when bad rows fail the file (the default). */
export function badRowsOf(options: Pick<ResolvedOptions, 'onBadRows' | 'maxBadRows'>, file: OpenedFile): RejectedRows | undefined {
  if (options.onBadRows !== 'skip') return undefined;
  return rejectedRows(file.stagedPath + rejectedSuffix(file.name), file.name, options.maxBadRows);
}

/**
 * Inside the transaction, after the plugin: the whole file fails when past `maxBadRows` (as a
 * fraction, now that its rows are counted), else its rejected rows go to disk before the COMMIT.
 */
export async function checkBadRows(
  options: Pick<ResolvedOptions, 'maxBadRows'>,
  file: OpenedFile,
  sink: RejectedRows,
  loaded: number,
): Promise<void> {
  if (pastLimit(options.maxBadRows, sink.rejected, loaded))
    throw new IngestFailure(tooManyBadRows(file.name, sink.rejected, loaded, options.maxBadRows, sink.first));
  await sink.finish();
}
