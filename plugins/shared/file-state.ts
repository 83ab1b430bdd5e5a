/**
 * What a plugin learns on one attempt at a file and keeps for the next (`IngestContext.fileState`),
 * kept in one map per key so every plugin stores and finds it the same way.
 */
import type { IngestContext } from '../../src/types.ts';

/** The map kept under `key`, stored empty on first use. */
export function fileStateMap<K, V>(ctx: IngestContext, key: string): Map<K, V> {
  const stored = ctx.fileState.get(key);
  if (stored instanceof Map) return stored as Map<K, V>;
  const fresh = new Map<K, V>();
  ctx.fileState.set(key, fresh);
  return fresh;
}
