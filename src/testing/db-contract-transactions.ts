/**
 * Contract cases on how a transaction ends (see db-contract.ts): a COMMIT that did not commit, and
 * transactions begun early.
 */
import assert from 'node:assert/strict';
import { fromDbError } from '../errors.ts';
import type { ContractCase } from '../testing.ts';
import type { DbPool } from '../types.ts';

export function transactionEndCases(
  p: () => DbPool,
  nextTable: (label: string) => string,
  count: (table: string) => Promise<number>,
): ContractCase[] {
  return [
    {
      name: 'a COMMIT the server answers with ROLLBACK (its transaction had aborted) rejects with 40000: nothing is taken for committed',
      async run() {
        const table = nextTable('rolledback');
        await p().query(`CREATE TABLE ${table} (a INTEGER)`);
        // A statement fails and its error goes unseen (on a shared hyperd: a cancel between statements).
        const aborted = p().transaction(async (conn) => {
          await conn.execute(`INSERT INTO ${table} VALUES (1)`);
          await conn.query("SELECT CAST('x' AS INTEGER)").catch(() => {});
          return 1;
        });
        await assert.rejects(aborted, (error: { code?: unknown }) => error.code === '40000');
        assert.equal(await count(table), 0);
        assert.equal(fromDbError(await aborted.catch((error: unknown) => error)).kind, 'transient', 'retried, never a failure of the file');
      },
    },
    ...earlyBeginCases(p, nextTable, count),
  ];
}

/**
 * `DbPool.begin`, where the pool has it: BEGIN goes out before the work is known, and whatever
 * runs in the begun transaction must still be inside it (an auto-committed statement would break
 * exactly-once); unused ones give their connection back clean.
 */
function earlyBeginCases(p: () => DbPool, nextTable: (label: string) => string, count: (table: string) => Promise<number>): ContractCase[] {
  return [
    {
      name: 'begins a transaction early on an idle connection: its work stays inside it, and an unused one gives the connection back',
      async run() {
        const pool = p();
        assert.ok(pool.begin, 'this pool sends BEGIN early');
        const table = nextTable('begun');
        await pool.query(`CREATE TABLE ${table} (id BIGINT NOT NULL)`);
        // Statements run inside it: when its work fails, nothing is kept.
        const failing = pool.begin()!;
        const work = failing.transaction(async (conn) => {
          await conn.execute(`INSERT INTO ${table} VALUES (1), (2)`);
          throw new Error('the work failed');
        });
        await assert.rejects(work, /the work failed/);
        assert.equal(await count(table), 0, 'the insert was part of the rolled-back transaction');
        // A good one commits, with the last statement sent along with COMMIT; it runs once only.
        const good = pool.begin()!;
        const rows = await good.transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (3), (4)`), {
          last: () => ({ text: `INSERT INTO ${table} VALUES (5)` }),
        });
        assert.equal(rows, 2);
        assert.equal(await count(table), 3);
        await assert.rejects(
          good.transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (6)`)),
          /already used/,
        );
        void good.release(); // a no-op after use
        assert.equal(await count(table), 3);
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
        for (const b of held) void b.release();
        assert.equal(await waiting, 1);
        // Released connections carry nothing over: each runs its own transaction, committed or not.
        await Promise.all(held.map((_, k) => pool.transaction((conn) => conn.execute(`INSERT INTO ${table} VALUES (${100 + k})`))));
        const rolledBack = Promise.all(
          held.map((_, k) =>
            pool.transaction(async (conn) => {
              await conn.execute(`INSERT INTO ${table} VALUES (${200 + k})`);
              throw new Error('rolled back');
            }),
          ),
        );
        await assert.rejects(rolledBack, /rolled back/);
        assert.equal(await count(table), 4 + held.length);
      },
    },
  ];
}
