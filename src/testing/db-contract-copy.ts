/**
 * Contract cases on COPY (see db-contract.ts): `copyFrom` streams CSV and reports its rows, and
 * fails whole (rolled back, naming the line) on a bad row or a failing input, never hanging.
 */
import assert from 'node:assert/strict';
import { fromDbError } from '../errors.ts';
import type { ContractCase } from '../testing.ts';
import type { DbPool } from '../types.ts';

/** The parts as the chunks of a COPY's input. */

export async function* chunks(...parts: string[]): AsyncIterable<string> {
  yield* parts;
}

export function copyCases(
  p: () => DbPool,
  nextTable: (label: string) => string,
  count: (table: string) => Promise<number>,
): ContractCase[] {
  return [
    {
      name: 'copyFrom streams CSV into a table and reports the row count',
      async run() {
        const table = nextTable('copy');
        await p().query(`CREATE TABLE ${table} (a BIGINT, b TEXT)`);
        const n = await p().transaction((conn) =>
          conn.copyFrom(`COPY ${table} FROM STDIN WITH (FORMAT csv, HEADER true)`, chunks('a,b\n', '1,x\n2,y\n3,z\n')),
        );
        assert.equal(n, 3);
        assert.equal(await count(table), 3);
      },
    },
    {
      name: 'copyFrom rejects (and rolls back) when the last chunk holds a bad row, naming its line, instead of hanging',
      async run() {
        const table = nextTable('copybad');
        await p().query(`CREATE TABLE ${table} (a BIGINT, b TEXT)`);
        const failing = p().transaction(async (conn) => {
          await conn.query(`INSERT INTO ${table} VALUES (100, 'before')`);
          return conn.copyFrom(`COPY ${table} FROM STDIN WITH (FORMAT csv, HEADER true)`, chunks('a,b\n1,x\n', 'oops,y\n'));
        });
        await assert.rejects(failing, (error: unknown) => {
          const failure = fromDbError(error);
          return failure.sqlState === '22P02' && failure.kind === 'data' && failure.line === 3;
        });
        assert.equal(await count(table), 0);
      },
    },
    {
      name: 'copyFrom rejects with the source error when reading the input fails',
      async run() {
        const table = nextTable('copysource');
        await p().query(`CREATE TABLE ${table} (a BIGINT)`);
        async function* broken(): AsyncIterable<string> {
          yield 'a\n1\n';
          throw Object.assign(new Error('disk on fire'), { code: 'EIO' });
        }
        await assert.rejects(
          p().transaction((conn) => conn.copyFrom(`COPY ${table} FROM STDIN WITH (FORMAT csv, HEADER true)`, broken())),
          /disk on fire/,
        );
        assert.equal(await count(table), 0);
      },
    },
  ];
}
