/**
 * A COPY FROM STDIN whose statement the server ends as it starts (a takeover cancelling a
 * process it thinks dead): CopyInResponse, the error and ReadyForQuery can arrive in one read.
 * postgres.js then destroys the stream it hands out before anyone can listen to it; the COPY must
 * fail with the server's error, not end the process with an unhandled 'error' event.
 *
 * The server here is a few lines speaking just those messages: no real server sends them in one
 * read on demand, and the case is about the client's handling of that sequence.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import { copyFrom } from '../../../../adapters/db/postgres-js/copy-from.ts';
import type { Sql } from '../../../../adapters/db/postgres-js/pool.ts';

const message = (type: string, body: Buffer) => {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeUInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
};
const ready = () => message('Z', Buffer.from('I'));
const cancelled = () => message('E', Buffer.from('SERROR\u0000C57014\u0000Mcanceled by user\u0000\u0000'));
const copyIn = () => message('G', Buffer.from([0, 0, 0]));

describe('COPY FROM STDIN cancelled as it starts', () => {
  let server: net.Server;
  let port: number;
  before(async () => {
    server = net.createServer((socket) => {
      let started = false;
      let buffered = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        if (!started) {
          // The startup message: a length, then the rest; no type byte.
          if (buffered.length < 4 || buffered.length < buffered.readUInt32BE(0)) return;
          buffered = buffered.subarray(buffered.readUInt32BE(0));
          started = true;
          const key = Buffer.alloc(8);
          socket.write(Buffer.concat([message('R', Buffer.alloc(4)), message('K', key), ready()]));
        }
        while (buffered.length >= 5 && buffered.length >= 1 + buffered.readUInt32BE(1)) {
          const type = String.fromCharCode(buffered[0]!);
          buffered = buffered.subarray(1 + buffered.readUInt32BE(1));
          // The COPY's answer, all in one write: it starts, it is cancelled, the session is ready.
          if (type === 'Q') socket.write(Buffer.concat([copyIn(), cancelled(), ready()]));
          if (type === 'X') socket.end();
        }
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as net.AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("fails with the server's error (57014), and the connection serves the next statement", { timeout: 10_000 }, async () => {
    const sql: Sql = postgres({
      host: '127.0.0.1',
      port,
      user: 'u',
      database: 'd',
      max: 1,
      fetch_types: false,
      prepare: false,
      onnotice: () => {},
    });
    let uncaught: unknown;
    const onUncaught = (error: unknown) => (uncaught = error);
    process.on('uncaughtException', onUncaught);
    try {
      async function* rows(): AsyncGenerator<string> {
        yield 'id\n1\n';
      }
      await assert.rejects(
        copyFrom(sql, 'COPY t FROM STDIN WITH (FORMAT csv, HEADER)', rows()),
        (error: { code?: unknown }) => error.code === '57014',
      );
      // Room for a stray 'error' event to surface.
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(uncaught, undefined, `no uncaught error: ${String(uncaught)}`);
      await assert.rejects(
        copyFrom(sql, 'COPY t FROM STDIN WITH (FORMAT csv, HEADER)', rows()),
        (error: { code?: unknown }) => error.code === '57014',
      );
    } finally {
      process.off('uncaughtException', onUncaught);
      await sql.end({ timeout: 1 });
    }
  });
});
