/**
 * `DbPool.begin` on a real server: BEGIN goes out before the work is known, and whatever runs in
 * the begun transaction must still be inside it (an auto-committed statement would break
 * exactly-once); unused ones give their connection back clean.
 */
import assert from 'node:assert/strict';
import type { DbPool } from '../../src/types.ts';
import { count } from './env.ts';

export async function checkBegunTransaction(pool: DbPool, table: string): Promise<void> {
  assert.ok(pool.begin, 'this pool sends BEGIN early');
  await pool.query(`CREATE TABLE ${table} (id BIGINT NOT NULL)`);

  // Statements run inside it: when its work fails, nothing is kept.
  const failing = pool.begin()!;
  await assert.rejects(
    failing.transaction(async (conn) => {
      await conn.execute(`INSERT INTO ${table} VALUES (1), (2)`);
      throw new Error('the work failed');
    }),
    /the work failed/,
  );
  assert.equal(await count(pool, table), 0, 'the insert was part of the rolled-back transaction');

  // A good one commits, with the last statement sent along with COMMIT; it runs once only.
  const good = pool.begin()!;
  const rows = await good.transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (3), (4)`), { last: () => ({ text: `INSERT INTO ${table} VALUES (5)` }) });
  assert.equal(rows, 2);
  assert.equal(await count(pool, table), 3);
  await assert.rejects(good.transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (6)`)), /already used/);
  good.release(); // a no-op after use
  assert.equal(await count(pool, table), 3);

  // It takes an idle connection or none: with all of them held, there is none to begin on, and
  // a transaction asked for meanwhile waits until released ones come back.
  const held = [];
  for (let b = pool.begin(); b; b = pool.begin()) {
    held.push(b);
    assert.ok(held.length <= 64, 'a pool has a bounded number of connections');
  }
  assert.ok(held.length >= 1);
  assert.equal(pool.begin(), undefined);
  const waiting = pool.transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (7)`));
  for (const b of held) b.release();
  assert.equal(await waiting, 1);

  // Released connections carry nothing over: each runs its own transaction, committed or not.
  await Promise.all(held.map((_, k) => pool.transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (${100 + k})`))));
  await assert.rejects(
    Promise.all(
      held.map((_, k) =>
        pool.transaction(async (conn) => {
          await conn.execute(`INSERT INTO ${table} VALUES (${200 + k})`);
          throw new Error('rolled back');
        }),
      ),
    ),
    /rolled back/,
  );
  assert.equal(await count(pool, table), 4 + held.length);
}
