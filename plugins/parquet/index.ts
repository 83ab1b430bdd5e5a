/**
 * The Parquet ingester: what the registry needs at start (name, extensions); the reader itself
 * (ingest.ts, where the format's paths are described) is imported when the first such file arrives.
 */
import { defineIngester } from '../../src/plugins.ts';
import type { IngesterPlugin } from '../../src/types.ts';
import { appendOnFirstUse } from '../shared/first-use.ts';

/** Apache Parquet files (`.parquet`, `.pq`). */
export const parquetIngester: IngesterPlugin = defineIngester({
  name: 'parquet',
  extensions: ['.parquet', '.pq'],
  append: appendOnFirstUse(async () => (await import('./ingest.ts')).appendParquet),
});

export default parquetIngester;
