/**
 * `DbPool.transaction(fn, { last })` on a real server: the last statement goes with the COMMIT,
 * and a failing one must leave nothing of the transaction behind (the server turns that COMMIT
 * into ROLLBACK). The watcher's ledger row rides on this, so exactly-once depends on it.
 */
import assert from 'node:assert/strict';
import type { DbPool } from '../../src/types.ts';
import { count } from './env.ts';

export async function checkLastWithCommit(pool: DbPool, table: string): Promise<void> {
  await pool.query(`CREATE TABLE ${table} (id BIGINT NOT NULL, what TEXT)`);
  // A failing last statement: the rows inserted by fn are rolled back, the statement's error surfaces.
  await assert.rejects(
    pool.transaction(
      async (conn) => {
        await conn.execute(`INSERT INTO ${table} VALUES (1, 'data'), (2, 'data')`);
        return 2;
      },
      { last: () => ({ text: `INSERT INTO ${table} VALUES (NULL, 'ledger')` }) },
    ),
    (error: { message?: string }) => /null/i.test(error.message ?? ''),
  );
  assert.equal(await count(pool, table), 0, 'nothing of the failed transaction was kept');
  // A good one: both commit, and the last statement is made from fn's result (with parameters too).
  const result = await pool.transaction(
    async (conn) => {
      await conn.execute(`INSERT INTO ${table} VALUES (3, 'data')`);
      return 3;
    },
    { last: (n) => ({ text: `INSERT INTO ${table} VALUES ($1, $2)`, params: [n * 10, 'ledger \\ with a backslash'] }) },
  );
  assert.equal(result, 3);
  const rows = await pool.query<{ id: string; what: string }>(`SELECT id, what FROM ${table} ORDER BY id`);
  assert.deepEqual(rows.map((r) => [Number(r.id), r.what]), [[3, 'data'], [30, 'ledger \\ with a backslash']]);
  // The connections are fine afterwards: every one of them runs a transaction again.
  await Promise.all([1, 2, 3, 4].map((k) => pool.transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (${100 + k}, 'after')`))));
  assert.equal(await count(pool, table), 6);
}
