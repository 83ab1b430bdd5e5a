/**
 * test/helpers/loop-hold.ts, which lets the conformance files run beside others (scripts/test.mjs):
 * the loop held by work on the main thread counts, time the thread spends without the CPU does not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { holdProbe } from '../helpers/loop-hold.ts';

/** Keeps the main thread busy until it has used `ms` of CPU, whatever else the machine runs. */
function spin(ms: number): void {
  const start = process.cpuUsage();
  while (true) {
    const { user, system } = process.cpuUsage(start);
    if ((user + system) / 1000 >= ms) return;
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 30));

describe('the event-loop hold probe', () => {
  it('counts the main thread running without a break as held', async () => {
    const stop = holdProbe();
    await tick();
    spin(300);
    await tick();
    const hold = stop();
    assert.ok(hold.heldMs >= 250, `held ${hold.heldMs} ms`);
    assert.ok(hold.gapMs >= hold.heldMs - 20, `gap ${hold.gapMs} ms, held ${hold.heldMs} ms`);
  });

  it('does not count a blocked thread without the CPU as held, but as a gap', async () => {
    const stop = holdProbe();
    await tick();
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
    await tick();
    const hold = stop();
    assert.ok(hold.gapMs >= 290, `gap ${hold.gapMs} ms`);
    assert.ok(hold.heldMs < 100, `held ${hold.heldMs} ms`);
  });

  it('tells the growth of the process', async () => {
    const stop = holdProbe();
    await tick();
    const kept = Buffer.alloc(64 * 1024 * 1024, 1);
    await tick();
    const hold = stop();
    assert.ok(hold.growth >= 48 * 1024 * 1024, `grew ${hold.growth} bytes`);
    assert.equal(kept[kept.length - 1], 1);
  });
});
