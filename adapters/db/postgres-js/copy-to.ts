/**
 * `COPY ... TO STDOUT` over postgres.js, as an async iterable that ends only when the server has
 * confirmed the statement (see `copyTo`).
 */
import type { Readable } from 'node:stream';
import { secondSettle } from './copy-settle.ts';
import type { AnySql } from './sql.ts';

/**
 * Runs `COPY (...) TO STDOUT` and yields the bytes as they arrive; returns once the server's
 * CommandComplete came. postgres.js resolves the query with a Readable at CopyOutResponse and
 * settles the same query object a second time at the end: that second settle is where an error
 * after the last data would show, so it is hooked (see copy-settle.ts) and awaited after the
 * stream ended. An error before or during the data destroys the stream with it: it is thrown here.
 *
 * A caller that stops early (`break`, or a consumer that failed) leaves the session in the middle
 * of the COPY: end that connection rather than reuse it.
 */
export async function* copyTo(sql: AnySql, statement: string): AsyncGenerator<Uint8Array, number> {
  const query = sql.unsafe(statement);
  const done = secondSettle(query);

  const readable = (await query.readable()) as unknown as Readable;
  for await (const chunk of readable) yield chunk as Uint8Array;
  // postgres.js pauses the socket whenever the stream's buffer is full and resumes it only from
  // the stream's `_read`, which is never called again once the stream has ended: when the last
  // data filled the buffer, the socket stays paused and the next statement on the connection (the
  // COMMIT) never hears back (seen with a 71 MB stream). Its `_read` is that resume: call it.
  readable._read(0);
  return await done;
}
