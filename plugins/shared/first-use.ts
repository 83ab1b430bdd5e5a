/**
 * An ingester whose implementation is imported when its first file arrives, not when the watcher
 * starts: the Arrow and Parquet readers pull in some 200 modules (apache-arrow, hyparquet and
 * their codecs), which every `hyperwatch` command paid for at start, also one that loads only CSV.
 */
import { ResultAsync } from 'neverthrow';
import { fromDbError } from '../../src/errors.ts';
import type { IngesterPlugin } from '../../src/types.ts';

type Append = IngesterPlugin['append'];

/** `append`, from `load()` on its first call; a failed import is tried again on the next call. */
export function appendOnFirstUse(load: () => Promise<Append>): Append {
  let loading: Promise<Append> | undefined;
  const loaded = (): Promise<Append> =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
  return (conn, file, table, ctx) =>
    ResultAsync.fromPromise(loaded(), (error) => fromDbError(error, file.name)).andThen((append) => append(conn, file, table, ctx));
}
