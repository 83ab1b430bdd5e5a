/**
 * The check pass run before hyperd reads an Arrow file itself (`IpcSource.check`, or the same
 * checks while opening: `openIpc(file, { checkValues: true })`; reading of the bodies only the
 * buffers whose values point elsewhere) must refuse exactly the files the streaming path's full
 * pass (`streamBytes`, every body read whole) refuses. Pure logic: damaged
 * copies of one small file, a 4-byte word overwritten at every aligned position, both passes run
 * on each.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Bool, Dictionary, Float64, Int32, List, makeVector, Table, tableToIPC, Utf8, vectorFromArray, Field } from 'apache-arrow';
import { openIpc } from '../../../plugins/arrow/source.ts';
import { IngestFailure } from '../../../src/errors.ts';
import { claimFile } from '../../../src/protocol/files.ts';

function part(start: number, n: number): Table {
  const ids = Array.from({ length: n }, (_, i) => start + i);
  return new Table({
    id: vectorFromArray(ids, new Int32()),
    name: vectorFromArray(
      ids.map((i) => (i % 3 === 0 ? null : `n${i}`)),
      new Utf8(),
    ),
    tags: vectorFromArray(
      ids.map((i) => Array.from({ length: i % 3 }, (_, k) => i + k)),
      new List(new Field('item', new Int32(), true)),
    ),
    kind: makeVector(
      vectorFromArray(
        ids.map((i) => (i % 2 ? 'odd' : 'even')),
        new Dictionary(new Utf8(), new Int32()),
      ),
    ),
    flag: vectorFromArray(
      ids.map((i) => i % 2 === 0),
      new Bool(),
    ),
    amount: vectorFromArray(
      ids.map((i) => i * 0.5),
      new Float64(),
    ),
  });
}

/** Three record batches of 5 rows, sharing one dictionary (the file format allows no replacement). */
function table(): Table {
  const whole = part(0, 15).batches[0]!;
  return new Table([whole.slice(0, 5), whole.slice(5, 10), whole.slice(10, 15)]);
}

type Verdict = 'ok' | `refused ${string}`;

async function verdict(run: () => Promise<void>): Promise<Verdict> {
  try {
    await run();
    return 'ok';
  } catch (error) {
    if (error instanceof IngestFailure) return `refused ${error.error.code}`;
    throw error;
  }
}

describe('Arrow check pass before a server read', () => {
  let dir = '';
  let n = 0;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hw-arrow-check-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * The verdicts on `bytes` of the check pass, of the same checks run while opening, and of the
   * full pass; null when the file does not even open (its metadata is refused first).
   */
  async function both(bytes: Uint8Array): Promise<{ check: Verdict; atOpen: Verdict; full: Verdict } | null> {
    const name = `f${n++}.arrow`;
    await writeFile(join(dir, name), bytes);
    const claimed = claimFile(dir, name, join(dir, `staged-${name}`), { claimId: String(n), extension: '.arrow' });
    if (claimed.status !== 'claimed') throw new Error(claimed.status);
    try {
      const source = await openIpc(claimed.file).catch((error: unknown) => {
        if (error instanceof IngestFailure) return null;
        throw error;
      });
      const atOpen = await verdict(async () => {
        await (await openIpc(claimed.file, { checkValues: true })).check();
      });
      if (!source) {
        assert.notEqual(atOpen, 'ok', 'a file whose metadata is refused is refused with value checks too');
        return null;
      }
      const check = await verdict(() => source.check());
      const full = await verdict(async () => {
        for await (const chunk of source.streamBytes()) void chunk;
      });
      return { check, atOpen, full };
    } finally {
      claimed.file.close();
    }
  }

  for (const format of ['file', 'stream'] as const) {
    it(`refuses exactly what the full pass refuses, in damaged copies of an IPC ${format}`, async () => {
      const good = tableToIPC(table(), format);
      assert.deepEqual(await both(good), { check: 'ok', atOpen: 'ok', full: 'ok' });
      const words = [0x7fff0000, 0xffffffff, 0x00000000, 0x00000100];
      let opened = 0;
      let refused = 0;
      for (let at = 0; at + 4 <= good.length; at += 4) {
        for (const word of words) {
          const bad = good.slice();
          new DataView(bad.buffer).setUint32(at, word, true);
          const got = await both(bad);
          if (!got) continue;
          opened++;
          if (got.full !== 'ok') refused++;
          assert.deepEqual(got.check, got.full, `word ${word.toString(16)} at byte ${at}`);
          assert.deepEqual(got.atOpen, got.full, `word ${word.toString(16)} at byte ${at}, checked while opening`);
        }
      }
      // The comparison must have covered damage that only the body checks find.
      assert.ok(opened > 100, `only ${opened} damaged copies opened`);
      assert.ok(refused > 10, `only ${refused} damaged copies were refused by the body checks`);
    });
  }
});
