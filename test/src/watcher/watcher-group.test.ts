/**
 * How claimed files are grouped and how a failed group is split (src/watcher/group.ts), on their
 * own: real claimed files in a temp folder, no database.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BATCH_FILE_MAX_BYTES } from '../../../src/constants.ts';
import { type OpenedFile, reopenStaged } from '../../../src/protocol/files.ts';
import { defineIngester } from '../../../src/plugins.ts';
import type { ClaimedFile } from '../../../src/protocol/record.ts';
import type { IngesterPlugin } from '../../../src/types.ts';
import { grouping, orderedGrouping, splitAfterFailure, splitInto } from '../../../src/watcher/group.ts';

const plugin = (name: string): IngesterPlugin =>
  defineIngester({
    name,
    extensions: [`.${name}`],
    append: () => {
      throw new Error('not called');
    },
  });
const csv = plugin('csv');
const json = plugin('json');

describe('grouping', () => {
  let root: string;
  const opened: OpenedFile[] = [];
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'hyperwatch-group-'));
  });
  after(async () => {
    for (const f of opened) f.close();
    await rm(root, { recursive: true, force: true });
  });

  /** A claimed file of `size` bytes, taken by `by` (none: no plugin for it). */
  async function claimed(name: string, size: number, by: IngesterPlugin | undefined): Promise<ClaimedFile> {
    const path = join(root, name);
    await writeFile(path, '');
    await truncate(path, size);
    const outcome = reopenStaged(path, name, { claimId: name, extension: by ? `.${by.name}` : '' });
    assert.equal(outcome.status, 'claimed');
    const file = (outcome as { file: OpenedFile }).file;
    opened.push(file);
    return { state: 'claimed', file, match: by ? { plugin: by, extension: `.${by.name}` } : undefined };
  }

  it('puts small files of one plugin together, up to batchFiles a group, in arrival order; the others alone', async () => {
    const files = [
      await claimed('a1', 10, csv),
      await claimed('b1', 10, json),
      await claimed('a2', 10, csv),
      await claimed('big', BATCH_FILE_MAX_BYTES + 1, csv),
      await claimed('x', 10, undefined),
      await claimed('a3', 10, csv),
      await claimed('edge', BATCH_FILE_MAX_BYTES, csv),
    ];
    const { alone, groups } = grouping(files, true, 2);
    assert.deepEqual(
      alone.map((c) => c.file.name),
      ['big', 'x'],
    );
    assert.deepEqual(
      groups.map((g) => [g.plugin.name, g.files.map((f) => f.name)]),
      [
        ['csv', ['a1', 'a2']],
        ['csv', ['a3', 'edge']],
        ['json', ['b1']],
      ],
    );
  });

  it('sends every file alone while the table is not known to exist, or when batchFiles is 1', async () => {
    const files = [await claimed('c1', 10, csv), await claimed('c2', 10, csv)];
    for (const [exists, batchFiles] of [
      [false, 100],
      [true, 1],
    ] as const) {
      const { alone, groups } = grouping(files, exists, batchFiles);
      assert.deepEqual(
        alone.map((c) => c.file.name),
        ['c1', 'c2'],
      );
      assert.equal(groups.length, 0);
    }
  });

  it("in order (the modes other than append): runs of one plugin's small files, every other file alone in its place", async () => {
    const files = [
      await claimed('o1', 10, csv),
      await claimed('o2', 10, csv),
      await claimed('o3', 10, csv),
      await claimed('o4', 10, json),
      await claimed('o5', 10, csv),
      await claimed('o6', BATCH_FILE_MAX_BYTES + 1, csv),
      await claimed('o7', 10, csv),
      await claimed('o8', 10, undefined),
      await claimed('o9', 10, csv),
    ];
    const shape = (units: ReturnType<typeof orderedGrouping>) =>
      units.map((u) => ('alone' in u ? u.alone.file.name : u.files.map((f) => f.name)));
    assert.deepEqual(shape(orderedGrouping(files, true, 2)), [['o1', 'o2'], ['o3'], ['o4'], ['o5'], 'o6', ['o7'], 'o8', ['o9']]);
    assert.deepEqual(shape(orderedGrouping(files, true, 10)), [['o1', 'o2', 'o3'], ['o4'], ['o5'], 'o6', ['o7'], 'o8', ['o9']]);
    // Every file alone, in its order, while the table is not known or with batchFiles 1.
    const names = files.map((f) => f.file.name);
    assert.deepEqual(shape(orderedGrouping(files, false, 10)), names);
    assert.deepEqual(shape(orderedGrouping(files, true, 1)), names);
  });
});

describe('splitting a failed group', () => {
  const files = Array.from({ length: 100 }, (_, i) => i);

  it('parts of nearly equal size, never more parts than items', () => {
    assert.deepEqual(splitInto([1, 2, 3, 4, 5], 2), [
      [1, 2, 3],
      [4, 5],
    ]);
    assert.deepEqual(splitInto([1, 2], 8), [[1], [2]]);
    assert.deepEqual(splitInto([], 8), []);
    const parts = splitInto(files, 8);
    assert.equal(parts.length, 8);
    assert.deepEqual(parts.flat(), files);
    assert.ok(parts.every((p) => p.length === 13 || p.length === 9));
  });

  it('the file a failure names goes alone and the rest on together', () => {
    const { alone, parts } = splitAfterFailure(files, 41);
    assert.equal(alone, 41);
    assert.deepEqual(parts, [files.filter((i) => i !== 41)]);
  });

  it('a failure naming no file (or one outside the group) splits it in 8, or into single files when it has 16 or fewer', () => {
    for (const index of [undefined, -1, 100]) {
      const { alone, parts } = splitAfterFailure(files, index);
      assert.equal(alone, undefined);
      assert.equal(parts.length, 8);
    }
    const small = files.slice(0, 16);
    assert.deepEqual(
      splitAfterFailure(small, undefined).parts,
      small.map((i) => [i]),
    );
    const seventeen = splitAfterFailure(files.slice(0, 17), undefined).parts;
    assert.deepEqual(
      seventeen.map((p) => p.length),
      [3, 3, 3, 3, 3, 2],
      'parts of at most ceil(17 / 8), not single files',
    );
  });
});
