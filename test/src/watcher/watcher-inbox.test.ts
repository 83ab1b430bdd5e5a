/**
 * The inbox on its own (src/watcher/inbox.ts): which sentinel names are queued, being claimed,
 * claimed with their event still due, or orphans; the bound on the queue; one rescan at a time.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Inbox } from '../../../src/watcher/inbox.ts';

function inbox(queueLimit = 100) {
  const stats = { queued: 0 };
  let queuedCalls = 0;
  const box = new Inbox(queueLimit, stats, () => queuedCalls++);
  return { box, stats, queuedCalls: () => queuedCalls };
}

describe('Inbox', () => {
  it('queues a sentinel once, in arrival order, and tells the shell each time it queued one', () => {
    const { box, stats, queuedCalls } = inbox();
    assert.equal(box.enqueue('a.csv.ready'), true);
    assert.equal(box.enqueue('b.csv.ready'), true);
    assert.equal(box.enqueue('a.csv.ready'), false, 'already queued');
    assert.equal(box.enqueue('a.csv'), false, 'not a sentinel');
    assert.equal(box.enqueue('.ready'), false, 'a sentinel of no data file');
    assert.equal(box.size, 2);
    assert.equal(stats.queued, 2);
    assert.equal(queuedCalls(), 2);
    assert.ok(box.oldestQueuedAt()! <= Date.now());
    assert.deepEqual(box.dequeue(10), ['a.csv.ready', 'b.csv.ready']);
    assert.equal(box.oldestQueuedAt(), undefined);
  });

  it('dequeues at most the count asked, and a name being claimed is not queued again until released', () => {
    const { box, stats } = inbox();
    for (const n of ['a', 'b', 'c']) box.enqueue(`${n}.csv.ready`);
    assert.deepEqual(box.dequeue(2), ['a.csv.ready', 'b.csv.ready']);
    assert.equal(stats.queued, 1);
    assert.equal(box.pending('a.csv.ready'), true);
    assert.equal(box.enqueue('a.csv.ready'), false, 'being claimed');
    box.released(['a.csv.ready']);
    assert.equal(box.pending('a.csv.ready'), false);
    assert.equal(box.enqueue('a.csv.ready'), true);
    assert.deepEqual(box.dequeue(5), ['c.csv.ready', 'a.csv.ready']);
  });

  it('drops names past queueLimit and says so (overflow) until the next listing', () => {
    const { box } = inbox(2);
    assert.equal(box.enqueue('a.csv.ready'), true);
    assert.equal(box.enqueue('b.csv.ready'), true);
    assert.equal(box.enqueue('c.csv.ready'), false);
    assert.equal(box.overflow, true);
    assert.equal(box.size, 2);
    box.listing();
    assert.equal(box.overflow, false);
  });

  it('takes the move-out event of its own claim as noise, once, and a listing forgets the ones still due', () => {
    const { box } = inbox();
    box.enqueue('a.csv.ready');
    box.dequeue(1);
    box.claimed('a.csv.ready');
    assert.equal(box.pending('a.csv.ready'), false, 'claimed: no longer being claimed');
    assert.equal(box.ownClaimEvent('a.csv.ready'), true);
    assert.equal(box.ownClaimEvent('a.csv.ready'), false, "the next event for the name is the producer's");
    box.claimed('b.csv.ready');
    box.listing();
    assert.equal(box.ownClaimEvent('b.csv.ready'), false);
  });

  it('keeps an orphan from when it was first seen so, until it is forgotten or claimed', () => {
    const { box } = inbox();
    box.orphaned({ state: 'orphaned', readyName: 'a.csv.ready', since: 1000 });
    box.orphaned({ state: 'orphaned', readyName: 'a.csv.ready', since: 2000 });
    assert.equal(box.isOrphan('a.csv.ready'), true);
    assert.deepEqual(
      [...box.orphans()].map(([name, o]) => [name, o.since]),
      [['a.csv.ready', 1000]],
    );
    box.claimed('a.csv.ready');
    assert.equal(box.isOrphan('a.csv.ready'), false);
    box.orphaned({ state: 'orphaned', readyName: 'b.csv.ready', since: 3000 });
    box.forgetOrphan('b.csv.ready');
    assert.deepEqual([...box.orphans()], []);
  });

  it('runs one rescan at a time: a second call gets the running one, and it is told when it ended', async () => {
    const { box } = inbox();
    let lists = 0;
    let done = 0;
    let finish!: () => void;
    const list = () => {
      lists++;
      return new Promise<void>((resolve) => (finish = resolve));
    };
    const first = box.rescan(list, () => done++);
    const second = box.rescan(list, () => done++);
    assert.equal(first, second);
    assert.equal(box.rescanning, first);
    assert.equal(lists, 1);
    finish();
    await first;
    assert.equal(done, 1);
    assert.equal(box.rescanning, undefined);
    await box.rescan(
      async () => void lists++,
      () => done++,
    );
    assert.equal(lists, 2);
  });

  it('clears the queue on stop, and the count with it', () => {
    const { box, stats } = inbox();
    box.enqueue('a.csv.ready');
    box.clear();
    assert.equal(box.size, 0);
    assert.equal(stats.queued, 0);
  });
});
