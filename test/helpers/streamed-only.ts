/**
 * A real database adapter that says it cannot read the watcher's files: every file is streamed to
 * it through `COPY ... FROM STDIN`, as to an endpoint on another machine. The same server, so the
 * same files can be loaded both ways and the results compared.
 */
import type { DbAdapter } from '../../src/types.ts';
import { type HyperFixture, hyperFixture } from './env.ts';

export function streamedOnly<D extends DbAdapter>(db: D): D {
  const capabilities = { ...db.capabilities, readsLocalFiles: false };
  return new Proxy(db, {
    get(target, key) {
      if (key === 'capabilities') return capabilities;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** hyperFixture with every adapter streamedOnly: the same hyperd, the files streamed to it. */
export function streamedHyperFixture(): Promise<HyperFixture> {
  return hyperFixture({ adapt: streamedOnly });
}
