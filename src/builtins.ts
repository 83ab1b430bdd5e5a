/** The ingesters every watcher has unless `WatchOptions.plugins` replaces them. */
import { arrowIngester } from '../plugins/arrow/index.ts';
import { csvIngester } from '../plugins/csv/index.ts';
import { jsonIngester } from '../plugins/json/index.ts';
import { parquetIngester } from '../plugins/parquet/index.ts';
import type { IngesterPlugin } from './types.ts';

export const builtinIngesters: readonly IngesterPlugin[] = [csvIngester, jsonIngester, parquetIngester, arrowIngester];
