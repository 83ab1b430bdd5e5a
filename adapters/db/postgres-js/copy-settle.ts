/**
 * The second settle of a COPY query in postgres.js, made into a promise (for `copyFrom` and
 * `copyTo`).
 *
 * postgres.js resolves a COPY query once with its stream (at CopyInResponse or CopyOutResponse)
 * and settles the same query object a second time when the server ends the statement: with the
 * "COPY n" row count, or with an error after the last data. Its own API drops that second settle,
 * so the query's two settle functions are hooked: the first resolve goes through as it is, every
 * settle after it goes to the promise returned. Pinned to postgres 3.4.x; the tests of both
 * directions cover a count, an error mid-stream and one after the last data.
 */

/** The two settle functions postgres.js keeps on every pending query. */
interface SettleHooks {
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Hooks `query`'s settles; `onStream` sees the stream of the first resolve before the caller
 * does. The promise returned (already guarded against an unhandled rejection) holds the row count.
 */
export function secondSettle(query: object, onStream: (stream: unknown) => void = () => {}): Promise<number> {
  const hooks = query as SettleHooks;
  let handedOut = false;
  let settle!: { resolve: (count: number) => void; reject: (error: unknown) => void };
  const done = new Promise<number>((resolve, reject) => {
    settle = { resolve, reject };
  });
  // It may reject before the caller awaits it: the caller handles it there.
  done.catch(() => {});
  const firstResolve = hooks.resolve;
  const firstReject = hooks.reject;
  hooks.resolve = (value) => {
    if (!handedOut) {
      handedOut = true;
      onStream(value);
      return firstResolve(value);
    }
    const count = (value as { count?: unknown } | null)?.count;
    settle.resolve(typeof count === 'number' ? count : Number(count ?? 0));
  };
  hooks.reject = (error) => (handedOut ? settle.reject(error) : firstReject(error));
  return done;
}
