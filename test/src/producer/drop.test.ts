/**
 * `dropFile` and `replayFailed` on the filesystem alone (no database), so that the protocol's
 * producer side is checked on Node, Deno and Bun alike (scripts/test-runtimes.mjs runs this file).
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DropError, dropFile } from '../../../src/producer/drop.ts';
import { replayFailed } from '../../../src/producer/replay.ts';
import { leftovers } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';

describe('dropFile and replayFailed', () => {
  const tmp = useTempDir('hyperwatch-drop-');

  it('dropFile writes the data, then the sentinel, leaves no temp file, and refuses a name still waiting', async () => {
    const dir = await tmp.dir('unit');
    async function* chunks() {
      yield 'id,name\n';
      yield new TextEncoder().encode('1,a\n');
    }
    const result = await dropFile(dir, 'a.csv', chunks());
    assert.equal(result.bytes, 12);
    assert.deepEqual((await readdir(dir)).sort(), ['a.csv', 'a.csv.ready']);
    assert.equal(await readFile(join(dir, 'a.csv'), 'utf8'), 'id,name\n1,a\n');
    assert.equal((await readFile(join(dir, 'a.csv.ready'))).length, 0);
    await assert.rejects(
      dropFile(dir, 'a.csv', 'x'),
      (e: unknown) => e instanceof DropError && e.code === 'DROP_EXISTS' && /not ingested yet/.test(e.message),
    );
    for (const name of ['../x.csv', '.hidden.csv', 'x.tmp', 'x.csv.ready', '']) {
      await assert.rejects(dropFile(dir, name, 'x'), (e: unknown) => e instanceof DropError && e.code === 'DROP_NAME', name);
    }
    assert.deepEqual((await readdir(dir)).sort(), ['a.csv', 'a.csv.ready']);
  });

  it('replay restores the original name of a file failed under a unique one, and refuses paths outside failed/', async () => {
    const dir = tmp.path('unique');
    await mkdir(join(dir, 'failed'), { recursive: true });
    await writeFile(join(dir, 'failed', 'x.0abc-123.csv'), 'id\n1\n');
    await writeFile(join(dir, 'failed', 'x.0abc-123.csv.ready'), '');
    await writeFile(join(dir, 'failed', 'x.0abc-123.csv.error'), JSON.stringify({ file: 'x.csv', failedAs: 'x.0abc-123.csv' }));
    const result = await replayFailed(join(dir, 'failed', 'x.0abc-123.csv'));
    assert.equal(result.path, join(dir, 'x.csv'));
    assert.deepEqual(await leftovers(dir), ['x.csv', 'x.csv.ready']);
    assert.deepEqual(await readdir(join(dir, 'failed')), []);
    await assert.rejects(replayFailed(join(dir, 'x.csv')), /is not in a failed\/ folder/);
    await assert.rejects(replayFailed(join(dir, 'failed', 'gone.csv')), /does not exist/);
  });
});
