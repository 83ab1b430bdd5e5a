/**
 * What only the PostgreSQL adapter does about row locks (adapters/db/postgres/locks.ts), on a real
 * server: a takeover's transaction waits for a row lock at most the bound it set, and the session
 * of a transaction frozen while it holds such a lock can be ended, by the rows it locked; and the
 * lease store uses both to take over a process frozen in the middle of renewing its lease; and the
 * sessions of a process frozen in any other transaction (a CREATE TABLE not yet committed) are
 * found by its owner id and ended.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sessionName } from '../../../../adapters/db/postgres/sessions.ts';
import { endFrozenSessions, ensureLeaseTables, registerLease, takeLease } from '../../../../src/store/lease.ts';
import type { DbPool } from '../../../../src/types.ts';
import { postgresForFile } from '../../../helpers/postgres-file.ts';

// One cluster for the whole file (see postgres-file.ts).
const { db } = await postgresForFile();

describe('PostgreSQL row locks', () => {
  let pool: DbPool;
  let tables = 0;
  before(async () => {
    pool = await db.openPool({ maxConnections: 3 });
  });
  after(() => pool.close());

  /** A table of two rows, and a transaction holding the lock on the row of `owner` 'a' until `let go` resolves. */
  async function heldRow(): Promise<{ table: string; holder: Promise<unknown>; letGo: () => void }> {
    const table = `locks_${++tables}`;
    await pool.query(`CREATE TABLE ${table} (owner TEXT NOT NULL, n BIGINT NOT NULL)`);
    await pool.query(`INSERT INTO ${table} VALUES ('a', 0), ('b', 0)`);
    let letGo!: () => void;
    const released = new Promise<void>((resolve) => (letGo = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = pool.transaction(async (conn) => {
      await conn.execute(`UPDATE ${table} SET n = n + 1 WHERE owner = 'a'`);
      locked();
      await released;
      await conn.execute(`UPDATE ${table} SET n = n + 1 WHERE owner = 'a'`);
    });
    holder.catch(() => {});
    await isLocked;
    return { table, holder, letGo };
  }

  it('declares both row-lock methods, and DDL that rolls back with its transaction', () => {
    assert.equal(typeof db.limitLockWait, 'function');
    assert.equal(typeof db.endRowLockHolders, 'function');
    assert.notEqual(db.capabilities.ddlSurvivesRollback, true, 'PostgreSQL rolls DDL back');
  });

  it('limitLockWait: an update of a locked row fails with 55P03 after the bound instead of waiting', async () => {
    const { table, holder, letGo } = await heldRow();
    try {
      const started = performance.now();
      const waiting = pool.transaction(async (conn) => {
        await db.limitLockWait!(conn, 300);
        await conn.execute(`UPDATE ${table} SET n = n + 10 WHERE owner = 'a'`);
      });
      await assert.rejects(waiting, (error: { code?: unknown }) => error.code === '55P03');
      const ms = performance.now() - started;
      assert.ok(ms >= 250 && ms < 5000, `waited ${Math.round(ms)} ms for a bound of 300 ms`);
      // Only this transaction: the next one waits as long as it must.
      letGo();
      await holder;
      await pool.transaction((conn) => conn.execute(`UPDATE ${table} SET n = n + 10 WHERE owner = 'a'`));
      const [row] = await pool.query<{ n: unknown }>(`SELECT n FROM ${table} WHERE owner = 'a'`);
      assert.equal(Number(row!.n), 12);
    } finally {
      letGo();
    }
  });

  it('endRowLockHolders ends the session holding a lock on the rows picked, and only that one', async () => {
    const { table, holder, letGo } = await heldRow();
    try {
      assert.equal(await db.endRowLockHolders!(pool, { table, column: 'owner', value: 'b' }), 0, 'nobody holds the row of b');
      assert.equal(await db.endRowLockHolders!(pool, { table, column: 'owner', value: 'a' }), 1);
      letGo();
      await assert.rejects(holder, 'the frozen transaction does not commit');
      const [row] = await pool.query<{ n: unknown }>(`SELECT n FROM ${table} WHERE owner = 'a'`);
      assert.equal(Number(row!.n), 0, 'nothing of it was kept');
      // The row is free again: an update goes through at once.
      await pool.transaction(async (conn) => {
        await db.limitLockWait!(conn, 300);
        await conn.execute(`UPDATE ${table} SET n = n + 1 WHERE owner = 'a'`);
      });
    } finally {
      letGo();
    }
  });

  it('a lease renewal frozen before its COMMIT: the takeover waits only its bound, ends that session, then takes the lease', async () => {
    await ensureLeaseTables(pool);
    const dead = 'frozen-renewal';
    const me = { owner: dead, host: 'elsewhere', pid: 1, directory: '/inbox', target: 't' };
    await registerLease(pool, me, 1, 2);
    await new Promise((r) => setTimeout(r, 20)); // its 1 ms lease has run out
    // The renewal's UPDATE ran, and its process stopped before the COMMIT (SIGSTOP between round trips).
    let letGo!: () => void;
    const released = new Promise<void>((resolve) => (letGo = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const renewal = pool.transaction(async (conn) => {
      await conn.execute(`UPDATE hyperwatch_internal.leases SET renewed_at = renewed_at WHERE owner = '${dead}'`);
      locked();
      await released;
    });
    renewal.catch(() => {});
    await isLocked;
    try {
      const first = await takeLease(pool, db, dead, 'taker', false);
      assert.equal(first.taken, false);
      assert.match(first.why ?? '', /55P03/, 'the wait for the row lock was bounded');
      assert.equal(await endFrozenSessions(pool, db, dead), 1, 'the frozen renewal is ended');
      letGo();
      await assert.rejects(renewal, 'the frozen renewal does not commit');
      assert.deepEqual(await takeLease(pool, db, dead, 'taker', false), { taken: true });
    } finally {
      letGo();
    }
  });

  it("endSessionsOf: a frozen CREATE TABLE holds every other CREATE TABLE IF NOT EXISTS; ending its owner's sessions frees them, \
and no one else's", async () => {
    const frozen = await db.openPool({ maxConnections: 1, owner: 'vm-4242-0123abcd' });
    const other = await db.openPool({ maxConnections: 1, owner: 'vm-4243-4567cdef' });
    const waiter = await db.openPool({ maxConnections: 1 });
    let letGo!: () => void;
    const released = new Promise<void>((resolve) => (letGo = resolve));
    let created!: () => void;
    const isCreated = new Promise<void>((resolve) => (created = resolve));
    try {
      const holder = frozen.transaction(async (conn) => {
        await conn.query('CREATE TABLE frozen_create (id BIGINT)');
        created();
        await released;
      });
      holder.catch(() => {});
      await isCreated;
      const pidOf = async () => Number((await other.query<{ pid: unknown }>('SELECT pg_backend_pid() AS pid'))[0]!.pid);
      const otherPid = await pidOf(); // a live session of another owner
      let done = false;
      const waiting = waiter.query('CREATE TABLE IF NOT EXISTS frozen_create (id BIGINT)').then(() => (done = true));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(done, false, 'the CREATE TABLE IF NOT EXISTS waits on the frozen transaction');
      assert.equal(await db.endSessionsOf!('vm-4244-89abcdef'), 0, 'an owner without sessions');
      assert.equal(await db.endSessionsOf!('vm-4242-0123abcd'), 1);
      await waiting;
      await assert.rejects(holder, 'the frozen transaction does not commit');
      letGo();
      assert.equal(await pidOf(), otherPid, "the other owner's session is the same, untouched");
    } finally {
      letGo();
      await Promise.all([frozen.close(), other.close(), waiter.close()]);
    }
  });

  it('sessionName: the unique part of an owner id first, cut at 63 bytes on a character boundary', () => {
    assert.equal(sessionName('vm-4242-0123abcd'), 'hyperwatch 0123abcd-4242@vm');
    const long = sessionName(`${'h'.repeat(80)}-4242-0123abcd`);
    assert.equal(Buffer.byteLength(long), 63);
    assert.ok(long.startsWith('hyperwatch 0123abcd-4242@hhh'));
    assert.ok(Buffer.byteLength(sessionName(`${'é'.repeat(40)}-1-ab`)) <= 63);
    assert.equal(sessionName(undefined), 'hyperwatch');
  });
});
