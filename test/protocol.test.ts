/** The sentinel protocol's names: which entries are drops, and the claim ids and staged names. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dataNameOf, isIgnoredName, newClaimId, parseStagedName, stagedName } from '../src/protocol.ts';

describe('protocol names', () => {
  it('takes X.ready as the sentinel of X, and ignores dot-files, *.tmp and an empty data name', () => {
    assert.equal(dataNameOf('orders.csv.ready'), 'orders.csv');
    assert.equal(dataNameOf('orders.csv'), undefined);
    assert.equal(dataNameOf('.ready'), undefined);
    assert.equal(dataNameOf('.hidden.csv.ready'), undefined);
    assert.equal(dataNameOf('part.tmp.ready'), undefined);
    assert.equal(isIgnoredName('upload.TMP'), true);
    assert.equal(isIgnoredName('orders.csv'), false);
  });

  it('makes claim ids that are unique, free of "~", and sort by time', () => {
    const ids = Array.from({ length: 20_000 }, () => newClaimId());
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.match(id, /^[0-9a-z]{9}-[0-9a-f]{16}$/);
    // Two ids drawn from the same pool of random bytes never share their random part.
    assert.equal(new Set(ids.map((id) => id.slice(10))).size, ids.length);
    const earlier = newClaimId(Date.UTC(2026, 0, 1));
    const later = newClaimId(Date.UTC(2026, 0, 2));
    assert.ok(earlier < later, `${earlier} sorts before ${later}`);
  });

  it('round-trips a staged name, whatever the original name holds', () => {
    const id = newClaimId();
    for (const name of ['a.csv', 'with~tilde.csv', 'spaces and ünïcode.json']) {
      assert.deepEqual(parseStagedName(stagedName(id, name)), { claimId: id, name });
    }
    assert.equal(parseStagedName('no-separator'), undefined);
  });
});
