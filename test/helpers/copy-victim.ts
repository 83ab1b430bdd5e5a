/**
 * A client killed in the middle of `COPY ... FROM STDIN` on a shared hyperd: it opens a pool of
 * the Hyper adapter on `endpoint` as `owner`, starts streaming rows into `table`, prints
 * `COPYING` once the first rows are sent, and then waits (to be SIGKILLed) without ever ending
 * the COPY.
 *
 *   node --import tsx test/helpers/copy-victim.ts <host:port> <database> <table> <owner>
 */
import process from 'node:process';
import { createHyperAdapter } from '../../adapters/db/hyper/index.ts';

const [endpoint, database, table, owner] = process.argv.slice(2) as [string, string, string, string];
const db = createHyperAdapter({ endpoint, database, endpointReadsFiles: 'no' });
const pool = await db.openPool({ maxConnections: 1, owner });
async function* rows(): AsyncGenerator<string> {
  yield 'id,batch\n1,1\n2,1\n';
  process.stdout.write('COPYING\n');
  await new Promise(() => {});
}
await pool.transaction((conn) => conn.copyFrom(`COPY ${table} FROM STDIN WITH (FORMAT csv, HEADER)`, rows()));
