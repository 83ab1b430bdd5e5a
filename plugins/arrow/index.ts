/**
 * The Arrow ingester: what the registry needs at start (name, extensions); the reader itself
 * (ingest.ts, where the format's paths are described) is imported when the first such file arrives.
 */
import { defineIngester } from '../../src/plugins.ts';
import type { IngesterPlugin } from '../../src/types.ts';
import { appendOnFirstUse } from '../shared/first-use.ts';

/** Arrow IPC files and streams (`.arrow`, `.arrows`, `.ipc`, `.feather`). */
export const arrowIngester: IngesterPlugin = defineIngester({
  name: 'arrow',
  extensions: ['.arrow', '.arrows', '.ipc', '.feather'],
  append: appendOnFirstUse(async () => (await import('./ingest.ts')).appendArrow),
});

export default arrowIngester;
