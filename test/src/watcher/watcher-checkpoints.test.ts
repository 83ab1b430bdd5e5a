/**
 * The durability step's state on its own (src/watcher/durability.ts `Checkpoints`), with the
 * watcher's life (life.ts) and a task's early BEGIN (early.ts): when committed files leave
 * staging, when a checkpoint runs and what it waits for, and what a server restart sends back
 * to the ledger. The database is a stand-in that counts checkpoints; the staged files are real.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { READY_SUFFIX } from '../../../src/constants.ts';
import { exists } from '../../../src/protocol/files.ts';
import { resolveOptions, type WatchOptions } from '../../../src/options.ts';
import { PluginRegistry } from '../../../src/plugins.ts';
import type { CommittedFile } from '../../../src/protocol/record.ts';
import { emptyStats } from '../../../src/observe/stats.ts';
import type { BegunTransaction, DbAdapter } from '../../../src/types.ts';
import { Checkpoints } from '../../../src/watcher/durability.ts';
import { EarlyBegin, takeEarly } from '../../../src/watcher/early.ts';
import { watchEnv } from '../../../src/watcher/env.ts';
import { newLeaseState } from '../../../src/watcher/lease.ts';
import { Lifecycle } from '../../../src/watcher/life.ts';
import { WatcherPool } from '../../../src/watcher/pool.ts';
import type { StagedClaim } from '../../../src/watcher/recover.ts';
import { waitFor } from '../../helpers/drop.ts';

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'hyperwatch-checkpoints-'));
});
after(() => rm(root, { recursive: true, force: true }));

/** A database whose commits are durable or not, counting checkpoints (`fail`: the next ones throw). */
function database(durableCommit: boolean) {
  const state = { checkpoints: 0, epoch: 1, fail: 0 };
  const db: DbAdapter = {
    name: 'stand-in',
    capabilities: { readsLocalFiles: false, arrowStream: false, parquet: false, durableCommit },
    sqlType: () => 'TEXT',
    openPool: () => Promise.reject(new Error('no pool here')),
    checkpoint: async () => {
      if (state.fail > 0) {
        state.fail--;
        throw new Error('the database is away');
      }
      state.checkpoints++;
    },
    epoch: () => state.epoch,
    describe: () => 'stand-in',
    close: async () => {},
  };
  return { db, state };
}

let files = 0;
/** A committed file staged on disk (data file and sentinel), committed in `epoch`. */
async function committed(epoch = 1): Promise<CommittedFile> {
  const name = `f${++files}.csv`;
  const stagedPath = join(root, `c${files}~${name}`);
  await writeFile(stagedPath, 'a\n1\n');
  await writeFile(stagedPath + READY_SUFFIX, '');
  return { state: 'committed', stagedPath, name, claimId: `c${files}`, epoch, rows: 1, bytes: 4 };
}

const staged = (c: CommittedFile) => exists(c.stagedPath) || exists(c.stagedPath + READY_SUFFIX);

function checkpoints(durableCommit: boolean, options: WatchOptions = {}) {
  const { db, state } = database(durableCommit);
  const stats = emptyStats(1);
  const lease = newLeaseState(root, 'events', 3000, 1);
  const env = watchEnv({
    dir: root,
    table: { name: 'events' },
    db,
    plugins: new PluginRegistry([]),
    options: resolveOptions(options),
    stats,
    me: lease.me,
    stagingRoot: root,
  });
  let nudges = 0;
  const life = new Lifecycle(() => nudges++);
  const rechecked: StagedClaim[][] = [];
  const cp = new Checkpoints(env, life, new WatcherPool(), async (claims) => void rechecked.push([...claims]));
  return { cp, state, stats, life, rechecked, nudges: () => nudges };
}

describe('Checkpoints', () => {
  it('on a database whose commits are durable, a committed file leaves staging at once', async () => {
    const { cp, state } = checkpoints(true);
    const file = await committed();
    assert.deepEqual(cp.settle(file), { state: 'settled', name: file.name, claimId: file.claimId });
    assert.equal(staged(file), false);
    assert.equal(cp.unsettledCount, 0);
    assert.equal(state.checkpoints, 0);
  });

  it('otherwise keeps it staged until a checkpoint, run once checkpointEvery commits wait', async () => {
    const { cp, state, stats, nudges } = checkpoints(false, { checkpointEvery: 2, checkpointDelayMs: 60_000 });
    const [a, b] = [await committed(), await committed()];
    assert.equal(cp.settle(a), undefined);
    assert.equal(cp.unsettledCount, 1);
    assert.equal(cp.running, undefined, 'one commit: the delay runs');
    cp.settle(b);
    assert.ok(cp.running, 'the second one starts it');
    await cp.running;
    assert.equal(state.checkpoints, 1);
    assert.equal(stats.checkpoints, 1);
    assert.equal(staged(a) || staged(b), false);
    assert.equal(cp.unsettledCount, 0);
    assert.equal(cp.paused, false);
    assert.equal(nudges(), 1, 'the shell is told, to start what waited');
    cp.stop();
  });

  it('pauses dispatch and waits for the tasks running before the database checkpoints', async () => {
    const { cp, state, life } = checkpoints(false, { checkpointDelayMs: 60_000 });
    cp.settle(await committed());
    let finish!: () => void;
    const task = new Promise<void>((resolve) => (finish = resolve));
    life.add(task);
    const running = cp.checkpoint();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(cp.paused, true);
    assert.equal(state.checkpoints, 0, 'not while a task runs');
    life.remove(task);
    finish();
    await running;
    assert.equal(state.checkpoints, 1);
    assert.equal(cp.paused, false);
    cp.stop();
  });

  it('runs a due checkpoint when the last task ends with nothing queued, not before', async () => {
    // Due after 200 ms; run anyway 200 ms later: the checks below fall in between.
    const { cp, state } = checkpoints(false, { checkpointDelayMs: 200 });
    cp.settle(await committed());
    cp.afterTask(0);
    assert.equal(cp.running, undefined, 'not due yet');
    await new Promise((resolve) => setTimeout(resolve, 300));
    cp.afterTask(3);
    assert.equal(cp.running, undefined, 'files are queued: later');
    cp.afterTask(0);
    assert.ok(cp.running);
    await cp.running;
    assert.equal(state.checkpoints, 1);
    cp.stop();
  });

  it('keeps the files when the checkpoint fails, and tries again after retryMaxMs', async () => {
    const { cp, state } = checkpoints(false, { checkpointDelayMs: 60_000, retryDelayMs: { initial: 5, max: 30 } });
    const file = await committed();
    cp.settle(file);
    state.fail = 1;
    await cp.checkpoint();
    assert.equal(staged(file), true);
    assert.equal(cp.unsettledCount, 1);
    await waitFor(() => state.checkpoints === 1 && cp.running === undefined, 'the checkpoint tried again');
    assert.equal(staged(file), false);
    cp.stop();
  });

  it('after a server restart, hands what was committed before it to the ledger check instead of removing it', async () => {
    const { cp, state, rechecked } = checkpoints(false, { checkpointDelayMs: 60_000 });
    const before = await committed(1);
    state.epoch = 2;
    const after = await committed(2);
    cp.settle(before);
    cp.settle(after);
    await cp.checkpoint();
    assert.equal(staged(after), false, 'committed in this run of the server: durable now');
    assert.equal(staged(before), true);
    assert.deepEqual(rechecked, [[{ claimId: before.claimId, names: [before.name, before.name + READY_SUFFIX], counted: before }]]);
    cp.stop();
  });

  it('once stopping, only the final checkpoint settles what is left', async () => {
    const { cp, state, life } = checkpoints(false, { checkpointEvery: 1 });
    life.stop();
    const file = await committed();
    cp.settle(file);
    assert.equal(cp.running, undefined);
    await cp.final();
    assert.equal(state.checkpoints, 1);
    assert.equal(staged(file), false);
  });
});

describe('Lifecycle', () => {
  it('a sleep ends early when the watcher stops, and at once after', async () => {
    const life = new Lifecycle(() => {});
    const started = performance.now();
    const sleeping = life.sleep(10_000);
    setTimeout(() => life.stop(), 20);
    await sleeping;
    assert.ok(performance.now() - started < 5000);
    assert.equal(life.stopping, true);
    const again = performance.now();
    await life.sleep(10_000);
    assert.ok(performance.now() - again < 100);
  });
});

describe('EarlyBegin', () => {
  function begun() {
    const calls = { released: 0 };
    const tx: BegunTransaction = { transaction: (fn) => fn(undefined as never), release: async () => void calls.released++ };
    return { tx, calls };
  }

  it("goes to the task's first transaction that can take it, once", () => {
    const { tx, calls } = begun();
    const early = new EarlyBegin(tx, 12.5);
    assert.deepEqual(takeEarly(early, true), { begun: tx, sentAt: 12.5 });
    assert.equal(takeEarly(early, true), undefined, 'taken');
    early.release();
    assert.equal(calls.released, 0, 'a taken one is not released by the task');
  });

  it('is released when the first transaction cannot take it, and when the task ends unused', () => {
    const first = begun();
    assert.equal(takeEarly(new EarlyBegin(first.tx, 0), false), undefined);
    assert.equal(first.calls.released, 1);
    const second = begun();
    const unused = new EarlyBegin(second.tx, 0);
    unused.release();
    unused.release();
    assert.equal(second.calls.released, 1);
    assert.equal(takeEarly(undefined, true), undefined, 'a task without one');
  });
});
