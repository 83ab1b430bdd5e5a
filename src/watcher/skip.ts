/**
 * `onBadRows: 'skip'` inside one file's attempt: the sink its plugin hands bad rows to (only for
 * a file ingested alone; a group that meets a bad row is split until that file is alone), and
 * the limit checked before the COMMIT.
 */
import { pastLimit, tooManyBadRows } from '../bad-rows.ts';
import { IngestFailure } from '../errors.ts';
import type { OpenedFile } from '../files.ts';
import type { WatchContext } from './context.ts';
import { type RejectedRows, rejectedRows, rejectedSuffix } from './rejected.ts';

/** This attempt's sink, or undefined when bad rows fail the file (the default). */
export function badRowsOf(ctx: WatchContext, file: OpenedFile): RejectedRows | undefined {
  if (ctx.options.onBadRows !== 'skip') return undefined;
  return rejectedRows(file.stagedPath + rejectedSuffix(file.name), file.name, ctx.options.maxBadRows);
}

/**
 * Inside the transaction, after the plugin: the whole file fails when past `maxBadRows` (as a
 * fraction, now that its rows are counted), else its rejected rows go to disk before the COMMIT.
 */
export async function checkBadRows(ctx: WatchContext, file: OpenedFile, sink: RejectedRows, loaded: number): Promise<void> {
  if (pastLimit(ctx.options.maxBadRows, sink.rejected, loaded)) throw new IngestFailure(tooManyBadRows(file.name, sink.rejected, loaded, ctx.options.maxBadRows, sink.first));
  await sink.finish();
}
