/**
 * `COPY ... FROM STDIN` over postgres.js, made to settle on every path (see `copyFrom`).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { secondSettle } from './copy-settle.ts';
import type { AnySql } from './sql.ts';

/**
 * Runs `COPY ... FROM STDIN` and streams `source` into it; resolves with the row count.
 *
 * postgres.js resolves the query with a Writable and then settles nothing else: when the server
 * rejects the data after the last chunk, the Writable's `final` callback is never called (an
 * `await` on it hangs and `sql.begin` never rolls back), and on success the "COPY n" row count is
 * dropped. Both arrive as a second settle of the same query object, made into one promise that
 * always settles (copy-settle.ts).
 */
export async function copyFrom(sql: AnySql, statement: string, source: AsyncIterable<Uint8Array | string>): Promise<number> {
  const query = sql.unsafe(statement);
  // The server's error can arrive in the same read as CopyInResponse (a cancelled COPY):
  // postgres.js then destroys the stream, with an 'error' event, before this function gets it.
  // Without a listener that event throws out of the socket handler and ends the process.
  const done = secondSettle(query, (stream) =>
    (stream as { on?: (event: string, listener: () => void) => void } | null)?.on?.('error', () => {}),
  );
  const writable = await query.writable();
  // Already ended by the server's error (see above): `done` holds it.
  if (writable.destroyed) return done;
  // On an error, postgres.js destroys this stream and its destroy handler writes CopyFail to the
  // socket, which is null when the error was the connection closing: a TypeError thrown out of a
  // socket event, uncatchable by any caller. Nothing can be told to a dead connection anyway.
  const destroy = writable._destroy.bind(writable);
  writable._destroy = (error, callback) => {
    try {
      destroy(error, callback);
    } catch {
      // callback was already called before the failed write
    }
  };
  let sourceError: unknown;
  const piped = pipeline(Readable.from(source, { objectMode: false }), writable).catch((error: unknown) => {
    sourceError ??= error;
  });
  try {
    return await done;
  } catch (error) {
    // When reading the file failed, the server only saw our CopyFail: report the real cause.
    throw sourceError ?? error;
  } finally {
    void piped;
  }
}
