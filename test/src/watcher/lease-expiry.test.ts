/**
 * When an expired lease of another process counts as a sign of its death: only while this
 * process's own renewals answer in time (a stalled database holds everyone's renewals alike).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expiryTrusted, heartbeatMs, heldUpMs, newLeaseState } from '../../../src/watcher/lease.ts';

describe('expiryTrusted', () => {
  const beat = heartbeatMs(3000);

  it("not before this process's first renewal answered in time", () => {
    const lease = newLeaseState('/inbox', 'events', 3000, 4);
    assert.equal(expiryTrusted(lease), false);
  });

  it('yes once that is a heartbeat and a half behind, no while a renewal waits longer than the lease less a heartbeat', () => {
    const lease = newLeaseState('/inbox', 'events', 3000, 4);
    const now = 100_000;
    lease.stalledUntil = now - 1;
    assert.equal(expiryTrusted(lease, now), true);
    assert.equal(heldUpMs(3000), 2000);
    lease.renewingSince = now - 1500;
    assert.equal(expiryTrusted(lease, now), true, 'a renewal slowed by a busy host, well within the lease');
    lease.renewingSince = now - 2001;
    assert.equal(expiryTrusted(lease, now), false, 'a renewal held up long enough for a lease to run out meanwhile');
    lease.renewingSince = undefined;
    lease.stalledUntil = now + beat * 1.5;
    assert.equal(expiryTrusted(lease, now), false, 'just after a slow renewal');
    assert.equal(expiryTrusted(lease, now + beat * 1.5), true);
  });
});
