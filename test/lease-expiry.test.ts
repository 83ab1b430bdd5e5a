/**
 * When an expired lease of another process counts as a sign of its death: only while this
 * process's own renewals answer in time (a stalled database holds everyone's renewals alike).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { expiryTrusted, heartbeatMs, newLeaseState } from '../src/watcher/lease.ts';

describe('expiryTrusted', () => {
  const beat = heartbeatMs(3000);

  it('not before this process\'s first renewal answered in time', () => {
    const lease = newLeaseState('/inbox', 'events', 3000, 4);
    assert.equal(expiryTrusted(lease), false);
  });

  it('yes once that is a heartbeat and a half behind, no while a renewal waits longer than a heartbeat', () => {
    const lease = newLeaseState('/inbox', 'events', 3000, 4);
    const now = 100_000;
    lease.stalledUntil = now - 1;
    assert.equal(expiryTrusted(lease, now), true);
    lease.renewingSince = now - beat / 2;
    assert.equal(expiryTrusted(lease, now), true, 'a renewal in flight for less than a heartbeat');
    lease.renewingSince = now - beat - 1;
    assert.equal(expiryTrusted(lease, now), false, 'a renewal in flight for more than a heartbeat');
    lease.renewingSince = undefined;
    lease.stalledUntil = now + beat * 1.5;
    assert.equal(expiryTrusted(lease, now), false, 'just after a slow renewal');
    assert.equal(expiryTrusted(lease, now + beat * 1.5), true);
  });
});
