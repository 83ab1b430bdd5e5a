/**
 * The record batches of a checked IPC stream, decoded one at a time by apache-arrow's reader and,
 * for a schema in transport form (encoded.ts), expanded to their logical form.
 */
import { RecordBatchReader, type RecordBatch, type Schema } from 'apache-arrow';
import type { IngestFailure } from '../../src/errors.ts';
import type { Expansion } from './encoded.ts';
import { expandBatch } from './expand.ts';

/** `logical`: the schema batches are expanded to, for a schema in transport form (encoded.ts). */
export async function* decode(
  bytes: () => AsyncIterable<Uint8Array>,
  failure: (error: unknown) => IngestFailure,
  logical?: { readonly logical: Schema; readonly expansions: readonly Expansion[] },
): AsyncIterable<RecordBatch> {
  let reader: RecordBatchReader;
  try {
    reader = await RecordBatchReader.from(bytes());
    await reader.open();
  } catch (error) {
    throw failure(error);
  }
  const iterator = reader[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<RecordBatch>;
      try {
        next = await iterator.next();
      } catch (error) {
        throw failure(error);
      }
      if (next.done) return;
      if (!logical) {
        yield next.value;
        continue;
      }
      let expanded: RecordBatch;
      try {
        expanded = expandBatch(next.value, logical.logical, logical.expansions);
      } catch (error) {
        throw failure(error);
      }
      yield expanded;
    }
  } finally {
    await iterator.return?.();
  }
}
