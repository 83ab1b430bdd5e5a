/**
 * Fence slots: which slot a file transaction takes. The most recently used one whose last
 * transaction ended before this one's BEGIN (its fence statement is then the one hyperd has
 * planned already), never one released after that BEGIN while another is free (on Hyper, whose
 * snapshot is taken at BEGIN, that one would conflict).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkFence, ensureLeaseTables, registerLease } from '../../../src/store/lease.ts';
import type { DbConnection } from '../../../src/types.ts';
import { newLeaseState, takeSlot } from '../../../src/watcher/lease.ts';
import { useHyperFixture } from '../../helpers/env.ts';

const lease = (maxConcurrent = 2) => newLeaseState('/inbox', 'public.t', 30_000, maxConcurrent);

describe('fence slots', () => {
  it('gives transactions one after the other the same slot, and open ones each their own', () => {
    const state = lease();
    const first = takeSlot(state);
    first.release();
    const second = takeSlot(state);
    assert.equal(second.slot, first.slot, 'a transaction begun after the last one ended reuses its slot');
    const third = takeSlot(state);
    assert.notEqual(third.slot, second.slot, 'two open transactions never share a slot while others are free');
    second.release();
    third.release();
    third.release(); // twice is once
    assert.equal(state.freeSlots.length, state.slots - 1);
    assert.equal(new Set(state.freeSlots).size, state.freeSlots.length);
  });

  it('does not hand a transaction a slot released after its BEGIN went out', () => {
    const state = lease();
    const used = takeSlot(state);
    const begunBefore = performance.now();
    used.release(); // released after that BEGIN
    const next = takeSlot(state, begunBefore);
    assert.notEqual(next.slot, used.slot);
    // Begun after the release: that slot is safe, and the most recent.
    assert.equal(takeSlot(state, performance.now()).slot, used.slot);
  });

  it('falls back to the least recently used slot, and shares the last one when none is free', () => {
    const state = lease(1); // 4 slots, 3 of them handed out
    const held = [takeSlot(state), takeSlot(state), takeSlot(state)];
    const begun = performance.now();
    for (const h of held) h.release();
    // Every free slot was released after `begun`: the one released longest ago.
    assert.equal(takeSlot(state, begun).slot, held[0]!.slot);
    const rest = [takeSlot(state), takeSlot(state)];
    const shared = takeSlot(state);
    assert.equal(shared.slot, state.slots - 1);
    shared.release();
    assert.equal(state.freeSlots.length, 0, 'the shared slot is not put back among the free ones');
    for (const r of rest) r.release();
  });
});

describe('fence slots on hyperd', () => {
  const fx = useHyperFixture();

  it('a slot reused by a transaction begun after its commit passes the fence; one begun before would conflict', async () => {
    const { pool } = fx;
    const state = lease(1);
    await ensureLeaseTables(pool);
    await registerLease(pool, state.me, state.leaseMs, state.slots);
    const fenceIn = (slot: number) => async (conn: DbConnection) => assert.equal(await checkFence(conn, state.me.owner, slot), true);

    // A transaction whose BEGIN goes out while another one holds a slot...
    const first = takeSlot(state);
    const sentAt = performance.now();
    const early = pool.begin!()!;
    await pool.transaction(fenceIn(first.slot));
    first.release();
    // ...gets another slot than the one that committed after its BEGIN, and commits.
    const second = takeSlot(state, sentAt);
    assert.notEqual(second.slot, first.slot);
    await early.transaction(fenceIn(second.slot));
    second.release();
    // Begun after that commit, the same slot again: no conflict.
    const third = takeSlot(state);
    assert.equal(third.slot, second.slot);
    await pool.transaction(fenceIn(third.slot));
    third.release();

    // What the rule avoids: a transaction begun before another's commit on its slot conflicts.
    // Its BEGIN must have reached hyperd before that commit: a statement answered inside it says
    // so (the BEGIN alone may still wait for its connection to open while the other commits).
    const stale = pool.begin!()!;
    let markBegun = () => {};
    let markCommitted = () => {};
    const begun = new Promise<void>((resolve) => (markBegun = resolve));
    const committed = new Promise<void>((resolve) => (markCommitted = resolve));
    const staleDone = stale.transaction(async (conn) => {
      await conn.query('SELECT 1');
      markBegun();
      await committed;
      await fenceIn(third.slot)(conn);
    });
    staleDone.catch(() => {}); // asserted below
    await begun;
    await pool.transaction(fenceIn(third.slot));
    markCommitted();
    await assert.rejects(staleDone, (error: { code?: string }) => error.code === '40001');
  });
});
