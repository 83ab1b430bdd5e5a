/**
 * Retry decisions on their own (src/watcher/retry.ts): after a failed attempt, again at once, with
 * a fresh table description, for good, or after the database comes back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ingestError } from '../../../src/errors.ts';
import type { IngestError } from '../../../src/types.ts';
import { afterFailure, lostConnection, MAX_PLUGIN_RETRIES } from '../../../src/watcher/retry.ts';

const dataError = ingestError('data', 'BAD_VALUE', 'x.csv: bad value', 'Fix it.');
const away = ingestError('transient', 'ECONNREFUSED', 'connection refused', 'Wait.');
const widen: IngestError = { ...dataError, retry: { reason: 'widen column amount' } };

describe('afterFailure', () => {
  const fresh = { retried: 0, freshRetried: false };

  it('tries again at once when the plugin asks, as long as it has retries left, then fails', () => {
    assert.equal(afterFailure({ error: widen, usedCache: false }, fresh, MAX_PLUGIN_RETRIES), 'plugin');
    assert.equal(
      afterFailure({ error: widen, usedCache: false }, { retried: MAX_PLUGIN_RETRIES, freshRetried: false }, MAX_PLUGIN_RETRIES),
      'final',
    );
    assert.equal(afterFailure({ error: widen, usedCache: false }, fresh, 0), 'final', 'a group has none: it is split instead');
  });

  it('tries once more with a fresh description when it failed using the cached one', () => {
    assert.equal(afterFailure({ error: dataError, usedCache: true }, fresh, 0), 'fresh');
    assert.equal(afterFailure({ error: dataError, usedCache: true }, { retried: 0, freshRetried: true }, 0), 'final');
    assert.equal(afterFailure({ error: dataError, usedCache: false }, fresh, 0), 'final');
  });

  it('waits for a database that is away, however the attempt used the cache', () => {
    assert.equal(afterFailure({ error: away, usedCache: true }, fresh, 0), 'transient');
    assert.equal(afterFailure({ error: away, usedCache: false }, { retried: 8, freshRetried: true }, 8), 'transient');
  });
});

describe('lostConnection', () => {
  it('is a broken connection (by code or SQLSTATE class 08), not a conflict or a refusal', () => {
    for (const code of ['CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'ECONNRESET', 'EPIPE'])
      assert.equal(lostConnection({ ...away, code }), true, code);
    assert.equal(lostConnection({ ...away, code: 'X', sqlState: '08006' }), true);
    assert.equal(lostConnection({ ...away, code: '40001', sqlState: '40001' }), false);
    assert.equal(lostConnection(away), false);
  });
});
