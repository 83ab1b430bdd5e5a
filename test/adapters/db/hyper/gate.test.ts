/**
 * The Hyper adapter's gate between transactions and checkpoints (pure logic): an operation entered
 * with `tryEnter` counts until it leaves, and none enters while a checkpoint waits or runs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Gate } from '../../../../adapters/db/hyper/gate.ts';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('Gate', () => {
  it('an exclusive task waits for an operation entered with tryEnter to leave', async () => {
    const gate = new Gate();
    const leave = gate.tryEnter();
    assert.ok(leave);
    const order: string[] = [];
    const exclusive = gate.exclusive(async () => {
      order.push('exclusive');
    });
    await tick();
    assert.deepEqual(order, [], 'still held by the entered operation');
    leave();
    leave(); // leaving twice counts once
    await exclusive;
    assert.deepEqual(order, ['exclusive']);
  });

  it('tryEnter refuses while an exclusive task waits or runs, and enters again after it', async () => {
    const gate = new Gate();
    let stop!: () => void;
    const running = gate.run(() => new Promise<void>((resolve) => (stop = resolve)));
    let finish!: () => void;
    const exclusive = gate.exclusive(() => new Promise<void>((resolve) => (finish = resolve)));
    await tick(); // (it takes the gate on its next turn)
    assert.equal(gate.tryEnter(), undefined, 'an exclusive task is waiting');
    stop();
    await running;
    await tick();
    assert.equal(gate.tryEnter(), undefined, 'an exclusive task is running');
    finish();
    await exclusive;
    const leave = gate.tryEnter();
    assert.ok(leave, 'free again');
    leave();
  });
});
