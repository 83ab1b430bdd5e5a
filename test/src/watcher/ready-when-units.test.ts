/**
 * The pure parts of `readyWhen: 'stable'` and `include` / `exclude`: their settings and flags,
 * which names stable mode takes, the globs, the bookkeeping of settling files, and the /proc look
 * for writers (on this machine's /proc, at a file this test holds open).
 */
import assert from 'node:assert/strict';
import { closeSync, openSync, realpathSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { watchOptionsFromFlags } from '../../../src/options/flags.ts';
import { checkOptions, resolveOptions } from '../../../src/options/resolve.ts';
import { isStableCandidate, isUnitExtra, newClaimId, parseUnitStagedName, unitStagedName } from '../../../src/protocol/names.ts';
import { emptyStats } from '../../../src/observe/stats.ts';
import { heldForWriting } from '../../../src/watcher/open-writers.ts';
import { fileSelection } from '../../../src/watcher/select.ts';
import { Settling } from '../../../src/watcher/settling.ts';

describe('readyWhen and include/exclude settings', () => {
  it('defaults to sentinels, every file; refuses a readyWhen it does not know and globs that are not a list', () => {
    const resolved = resolveOptions({});
    assert.equal(resolved.readyWhen, 'sentinel');
    assert.equal(resolved.stableMs, 5000);
    assert.deepEqual([resolved.include, resolved.exclude], [[], []]);
    assert.equal(resolveOptions({ stableMs: 1 }).stableMs, 100, 'below its range: the minimum');
    assert.throws(
      () => checkOptions({ readyWhen: 'folder' as never }),
      /^WatchConfigError: readyWhen is "folder"; use 'sentinel', 'stable' or 'marker'$/,
    );
    assert.equal(resolveOptions({ readyWhen: 'marker' }).marker, '_SUCCESS');
    assert.equal(resolveOptions({ readyWhen: 'marker', marker: '_DONE' }).marker, '_DONE');
    assert.equal(resolveOptions({ readyWhen: 'marker', partitionColumns: true }).partitionColumns, true, 'no recursive needed');
    assert.throws(
      () => checkOptions({ include: '*.csv' as never }),
      /include must be a list of globs such as \['\*\.csv'\], got "\*\.csv"/,
    );
    assert.throws(() => checkOptions({ exclude: [''] }), /exclude must be a list of globs such as \['\*\.csv'\], got \[""\]/);
  });

  it('reads --ready, --stable-ms, --include and --exclude, and names what is wrong', () => {
    const read = watchOptionsFromFlags({ ready: 'stable', 'stable-ms': '2000', include: ['*.csv', '*.tsv'], exclude: ['tmp_*'] });
    assert.deepEqual(read, { value: { readyWhen: 'stable', stableMs: 2000, include: ['*.csv', '*.tsv'], exclude: ['tmp_*'] } });
    assert.deepEqual(watchOptionsFromFlags({ 'stable-ms': '2000' }), { problem: '--stable-ms goes with --ready stable' });
    assert.deepEqual(watchOptionsFromFlags({ ready: 'folder' }), { problem: '--ready is sentinel, stable or marker, got "folder"' });
    assert.deepEqual(watchOptionsFromFlags({ ready: 'marker', marker: '_DONE' }), { value: { readyWhen: 'marker', marker: '_DONE' } });
    assert.deepEqual(watchOptionsFromFlags({ marker: '_DONE' }), { problem: '--marker goes with --ready marker' });
    assert.deepEqual(watchOptionsFromFlags({ ready: 'stable', 'stable-ms': 'soon' }), {
      problem: '--stable-ms expects a whole number, got "soon"',
    });
  });
});

describe('readyWhen marker: what it refuses', () => {
  it('refuses settings a folder landing whole cannot honour, each with what to drop', () => {
    const refused: [Record<string, unknown>, RegExp][] = [
      [{ recursive: true }, /cannot go with recursive \(a marker folder is always read whole/],
      [{ mode: 'upsert', key: ['id'] }, /cannot go with mode: 'upsert' \(a folder lands in append mode only/],
      [{ order: 'name' }, /cannot go with order: 'name'/],
      [{ onBadRows: 'skip' }, /cannot go with onBadRows: 'skip'/],
      [{ include: ['*.csv'] }, /cannot go with include \/ exclude/],
      [{ exclude: ['x*'] }, /cannot go with include \/ exclude/],
    ];
    for (const [extra, message] of refused)
      assert.throws(() => checkOptions({ readyWhen: 'marker', ...extra }), message, JSON.stringify(extra));
    assert.throws(() => checkOptions({ marker: '_DONE' }), /marker goes with readyWhen: 'marker'/);
    assert.throws(() => checkOptions({ readyWhen: 'marker', marker: 'a/b' }), /marker must be a file name such as '_SUCCESS'/);
  });

  it('sets aside the marker and what Hadoop readers hide; names a staged folder apart from a staged file', () => {
    for (const name of ['j/_SUCCESS', 'j/_committed_12', 'j/d=1/.part-0.parquet.crc', 'j/x.crc', 'j/_DONE', 'j/a.tmp'])
      assert.equal(isUnitExtra(name, '_DONE'), true, name);
    for (const name of ['j/part-0.parquet', 'j/d=1/x.csv', 'j/SUCCESS.csv']) assert.equal(isUnitExtra(name, '_SUCCESS'), false, name);
    const id = newClaimId();
    assert.deepEqual(parseUnitStagedName(unitStagedName(id, 'job~7')), { claimId: id, folder: 'job~7' });
    assert.equal(parseUnitStagedName(`${id}~a@b.csv`), undefined, 'a staged file is not a folder');
    assert.equal(parseUnitStagedName('.from-owner'), undefined, 'an adopted owner folder is not a claimed folder');
  });
});

describe('which files stable mode takes', () => {
  it('leaves names that say they are still being written, and the protocol’s own', () => {
    for (const name of ['orders.csv', 'data.parquet', 'a~b.csv', 'report.csv.gz']) assert.equal(isStableCandidate(name), true, name);
    for (const name of ['.x.csv', 'up.TMP', 'up.csv.part', 'up.partial', 'f.crdownload', 'f.filepart', '.f.swp', 'f.csv~', '~$book.xlsx'])
      assert.equal(isStableCandidate(name), false, name);
    for (const name of ['orders.csv.ready', 'orders.csv.error']) assert.equal(isStableCandidate(name), false, name);
  });

  it('matches include/exclude globs over the relative path, exclude winning', () => {
    const selected = fileSelection({ include: ['*.csv', 'orders_*'], exclude: ['tmp_*'] });
    assert.deepEqual(['a.csv', 'orders_1.json', 'tmp_a.csv', 'a.json', 'sub/a.csv'].map(selected), [true, true, false, false, false]);
    assert.equal(fileSelection({ include: [], exclude: [] })('anything'), true);
    assert.equal(fileSelection({ include: [], exclude: ['*.bak'] })('x.bak'), false);
  });
});

describe('settling files', () => {
  it('a file is due once it stayed the same for stableMs; a change, or a claim that did not take it, starts it again', () => {
    const stats = emptyStats(1);
    const settling = new Settling(1000, 10, stats, () => {});
    try {
      const look = { size: 10, mtimeMs: 1, ino: 7 };
      settling.saw('a.csv', look, 0);
      assert.deepEqual(settling.due(999), []);
      assert.deepEqual(settling.due(1000), ['a.csv']);
      settling.saw('a.csv', { ...look, size: 11 }, 500);
      assert.deepEqual(settling.due(1000), [], 'grew at 500');
      settling.saw('a.csv', { ...look, size: 11 }, 900);
      assert.deepEqual(settling.due(1500), ['a.csv'], 'the same look does not restart it');
      settling.queued('a.csv');
      assert.deepEqual(settling.due(5000), [], 'queued: not due twice');
      settling.waitAgain('a.csv', 5000);
      assert.deepEqual(settling.due(5999), []);
      assert.deepEqual(settling.due(6000), ['a.csv']);
      assert.deepEqual(settling.settle(6000), [{ name: 'a.csv', waitedMs: 6000, size: 11 }], 'waited 6 × stableMs: logged');
      assert.deepEqual(settling.settle(7000), [], 'not again before its wait doubles');
      assert.equal(stats.settling, 1);
      assert.equal(stats.settlingLongestSeconds, 7);
      settling.forget('a.csv');
      settling.settle(7000);
      assert.deepEqual([stats.settling, stats.settlingLongestSeconds], [0, 0]);
    } finally {
      settling.stop();
    }
  });

  it('keeps at most its limit of names', () => {
    const settling = new Settling(1000, 2, emptyStats(1), () => {});
    try {
      const look = { size: 1, mtimeMs: 1, ino: 1 };
      assert.deepEqual(
        ['a', 'b', 'c'].map((n) => settling.saw(n, look, 0)),
        [true, true, false],
      );
      assert.deepEqual(settling.names(), ['a', 'b']);
    } finally {
      settling.stop();
    }
  });

  it('calls back once the earliest file is due', async () => {
    let woke = 0;
    const settling = new Settling(100, 10, emptyStats(1), () => woke++);
    try {
      settling.saw('a', { size: 1, mtimeMs: 1, ino: 1 });
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(woke, 0);
      await new Promise((r) => setTimeout(r, 150));
      assert.equal(woke, 1);
    } finally {
      settling.stop();
    }
  });
});

describe('writers seen through /proc', { skip: process.platform !== 'linux' && 'Linux only' }, () => {
  it('sees a file open for writing (this process holds it), not one open for reading only', async () => {
    const dir = realpathSync(await mkdtemp(join(tmpdir(), 'hyperwatch-writers-')));
    try {
      const [written, read, closed] = ['w.csv', 'r.csv', 'c.csv'].map((n) => join(dir, n));
      for (const path of [written!, read!, closed!]) writeFileSync(path, 'id\n1\n');
      const w = openSync(written!, 'a');
      const r = openSync(read!, 'r');
      closeSync(openSync(closed!, 'r+'));
      try {
        assert.deepEqual([...heldForWriting(new Set([written!, read!, closed!]))], [written]);
      } finally {
        closeSync(w);
        closeSync(r);
      }
      assert.deepEqual([...heldForWriting(new Set([written!]))], []);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
