/** The sentinel protocol's names (drops, claim ids, staged names) and a claimed file's descriptor. */
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, it } from 'node:test';
import { dataNameOf, isIgnoredName, newClaimId, parseStagedName, stagedName } from '../../../src/protocol/names.ts';
import { canMove, FILE_STATES, type FileState, TRANSITIONS } from '../../../src/protocol/states.ts';
import { eachClaimed } from '../../helpers/claimed.ts';

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

  it('stages a name of a subfolder (recursive) flat, apart from every other name, and back', () => {
    const id = newClaimId();
    const names = ['a/x.csv', 'b/x.csv', 'a%2Fx.csv', 'a^x.csv', 'x/a%2F~^%25.csv', 'a/b/c/d.jsonl', '^lead.csv', '%2F/y.csv'];
    const staged = names.map((name) => stagedName(id, name));
    for (const s of staged) assert.ok(!s.includes('/'), `${s} is flat`);
    assert.equal(new Set(staged).size, names.length, 'no two names share a staged name');
    for (const name of names) assert.deepEqual(parseStagedName(stagedName(id, name)), { claimId: id, name });
    // The form of the watched directory's own files is unchanged.
    assert.equal(stagedName(id, 'orders.csv'), `${id}~orders.csv`);
  });

  it('judges a name of a subfolder by its last segment: a dot-file there is ignored, a dotted folder name is not its concern', () => {
    assert.equal(isIgnoredName('a/.x.csv'), true);
    assert.equal(dataNameOf('a/b/.x.csv.ready'), undefined);
    assert.equal(dataNameOf('a/b/x.csv.ready'), 'a/b/x.csv');
    assert.equal(isIgnoredName('v1.2/x.csv'), false);
    assert.equal(isIgnoredName('a/up.TMP'), true);
  });
});

describe('a claimed file', () => {
  it('refuses reads after it was closed, from its cache or its descriptor, instead of reading whatever reuses the number', async () => {
    await eachClaimed(
      [
        ['small.csv', 'id\n1\n'],
        ['big.csv', `id\n${'1\n'.repeat(40_000)}`],
      ],
      async (file) => {
        assert.equal(new TextDecoder().decode(await file.read(0, 3)), 'id\n');
        file.close();
        file.close(); // twice is once
        await assert.rejects(file.read(0, 3), /read after its claim was closed/);
        await assert.rejects(file.readInto(new Uint8Array(3), 0), /read after its claim was closed/);
        assert.throws(() => file.changedSinceClaim(), /read after its claim was closed/);
      },
    );
  });

  it('reads a whole file through one buffer (readInto) as read gives it: the same bytes, the last piece short', async () => {
    const content = Uint8Array.from({ length: 300_001 }, (_, i) => (i * 7 + (i >> 8)) & 0xff);
    const files: [string, Uint8Array][] = [
      ['small.csv', content.subarray(0, 1000)],
      ['big.csv', content],
    ];
    await eachClaimed(files, async (file, bytes) => {
      const buffer = new Uint8Array(65_536);
      const pieces: Uint8Array[] = [];
      for (let position = 0; position < file.size; ) {
        const piece = await file.readInto(buffer, position);
        assert.ok(piece.length > 0 && piece.length <= buffer.length, `${file.name}: a piece of ${piece.length} bytes at ${position}`);
        pieces.push(piece.slice());
        position += piece.length;
      }
      assert.deepEqual(Buffer.concat(pieces), Buffer.from(bytes), file.name);
      assert.deepEqual(await file.read(1000, 10), bytes.subarray(1000, 1010), `${file.name}: read after readInto`);
      assert.equal((await file.readInto(buffer, file.size)).length, 0, `${file.name}: nothing past the end`);
      assert.equal(file.bytesRead, bytes.length + Math.min(10, Math.max(0, bytes.length - 1000)), `${file.name}: bytes read counted`);
    });
  });
});

describe('the file states', () => {
  it('moves only between declared states, and every state leads to settled or failed', () => {
    for (const [from, targets] of Object.entries(TRANSITIONS)) {
      assert.ok((FILE_STATES as readonly string[]).includes(from), from);
      for (const to of targets) assert.ok(canMove(from as FileState, to), `${from} → ${to}`);
    }
    assert.deepEqual(FILE_STATES.filter((s) => TRANSITIONS[s].length === 0).sort(), ['failed', 'settled']);
    // From each state, the final ones are reachable: no file can be stuck by the protocol itself.
    for (const start of FILE_STATES.filter((s) => s !== 'settled' && s !== 'failed')) {
      const seen = new Set<FileState>([start]);
      for (const s of seen) for (const to of TRANSITIONS[s]) seen.add(to);
      assert.ok(seen.has('failed'), `${start} can fail`);
      assert.ok(seen.has('settled'), `${start} can settle`);
    }
    assert.equal(canMove('ready', 'committed'), false, 'nothing commits without a claim');
    assert.equal(canMove('settled', 'claimed'), false, 'a settled file is never taken again');
  });
});
