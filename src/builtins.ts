/** The ingesters every watcher has unless `WatchOptions.plugins` replaces them. */
import { csvIngester } from '../plugins/csv/index.ts';
import type { IngesterPlugin } from './types.ts';

export const builtinIngesters: readonly IngesterPlugin[] = [csvIngester];
