/** One embedded hyperd per binary and user, shared by every adapter of the process that uses it. */
import type { Logger } from '../../../src/types.ts';
import { Hyperd } from './hyperd.ts';

/** Embedded servers are shared by all adapters of a process that use the same binary. */
const shared = new Map<string, { hyperd: Hyperd; refs: number }>();
let isolatedCount = 0;

export interface Acquired {
  readonly hyperd: Hyperd;
  readonly release: () => Promise<void>;
}

/** `isolated`: a hyperd for this caller alone (see HyperAdapterOptions.isolated). */
export function acquire(binary: string, user: string, logger: Logger, isolated = false): Acquired {
  const key = `${binary}|${user}${isolated ? `|isolated-${++isolatedCount}` : ''}`;
  let entry = shared.get(key);
  if (!entry) {
    entry = { hyperd: new Hyperd({ binary, logger, user }), refs: 0 };
    shared.set(key, entry);
  }
  entry.refs++;
  const held = entry;
  let released = false;
  return {
    hyperd: held.hyperd,
    release: async () => {
      if (released) return;
      released = true;
      if (--held.refs === 0) {
        shared.delete(key);
        await held.hyperd.stop();
      }
    },
  };
}
