/**
 * hyperd reading a claimed Arrow file itself (`COPY ... FROM '<path>' WITH (FORMAT arrowfile |
 * arrowstream)`): only when the bytes would go through untouched into columns of the same names
 * and types, and only after every message passed the reader's checks. Everything else is streamed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Dictionary, Float64, Int32, makeVector, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { arrowIngester } from '../../../plugins/arrow/index.ts';
import type { Logger } from '../../../src/types.ts';
import { count } from '../../helpers/env.ts';
import { expectError, type PluginTarget, usePluginBench } from '../../helpers/plugin-bench.ts';

const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
const logger: Logger = {
  debug: (message, fields) => void lines.push({ level: 'debug', message, ...(fields ? { fields } : {}) }),
  info: (message, fields) => void lines.push({ level: 'info', message, ...(fields ? { fields } : {}) }),
  warn: (message, fields) => void lines.push({ level: 'warn', message, ...(fields ? { fields } : {}) }),
  error: (message, fields) => void lines.push({ level: 'error', message, ...(fields ? { fields } : {}) }),
};

/**
 * How the ingester loaded `name`: `server` (hyperd read the path with COPY), `server-insert` (with
 * INSERT ... SELECT FROM external) or `stream` (COPY FROM STDIN). The last load attempt counts.
 */
function pathOf(name: string): 'server' | 'server-insert' | 'stream' | 'none' {
  const mine = lines.filter((l) => l.fields?.file === name && l.message.startsWith('arrow: '));
  const last = mine.at(-1);
  if (last?.message.startsWith('arrow: the database reads the file itself'))
    return last.fields?.via === 'insert' ? 'server-insert' : 'server';
  if (last?.message.startsWith('arrow: loading through ARROWSTREAM')) return 'stream';
  return 'none';
}

const IDS = [1, 2, 3, 4];
const NAMES = ['aaaa', 'bbbb', null, 'dddd'];
const AMOUNTS = [1.5, -2.25, 0, 1e10];

function plainTable(): Table {
  return new Table({
    id: vectorFromArray(IDS, new Int32()),
    name: vectorFromArray(NAMES, new Utf8()),
    amount: vectorFromArray(AMOUNTS, new Float64()),
  });
}

function int32s(values: readonly number[]): Uint8Array {
  return new Uint8Array(Int32Array.from(values).buffer);
}

/** `bytes` with the first occurrence of `find` replaced by `put` (same length). */
function patched(bytes: Uint8Array, find: Uint8Array, put: Uint8Array): Uint8Array {
  const out = bytes.slice();
  for (let at = 0; at + find.length <= out.length; at++) {
    if (find.every((b, k) => out[at + k] === b)) {
      out.set(put, at);
      return out;
    }
  }
  throw new Error('pattern not found');
}

describe('Arrow files read by hyperd itself', () => {
  const bench = usePluginBench(arrowIngester, { maxAttempts: 5, logger });

  async function rows(table: string): Promise<string[]> {
    const got = await bench.pool.query<{ id: number; name: string | null; amount: number }>(
      `SELECT id, name, amount FROM "${table}" ORDER BY id`,
    );
    return got.map((r) => `${r.id}|${r.name}|${r.amount}`);
  }
  const expected = IDS.map((id, k) => `${id}|${NAMES[k]}|${AMOUNTS[k]}`);

  for (const format of ['file', 'stream'] as const) {
    it(`reads an IPC ${format} that fits the table from its path, with the writer's rows`, async () => {
      const name = `plain-${format}.arrow`;
      const outcome = await bench.ingest(await bench.claim(name, tableToIPC(plainTable(), format)), `server_${format}`);
      assert.equal(outcome.rows, 4);
      assert.equal(pathOf(name), 'server');
      assert.deepEqual(await rows(`server_${format}`), expected);
      // Into the existing table too (names and types equal), appending.
      const again = `plain-${format}-2.arrow`;
      assert.equal((await bench.ingest(await bench.claim(again, tableToIPC(plainTable(), format)), `server_${format}`)).rows, 4);
      assert.equal(pathOf(again), 'server');
      assert.equal(await count(bench.pool, `server_${format}`), 8);
    });
  }

  it('reads a stream that ends without its end-of-stream marker', async () => {
    const bytes = tableToIPC(plainTable(), 'stream');
    const name = 'no-eos.arrows';
    const outcome = await bench.ingest(await bench.claim(name, bytes.subarray(0, bytes.length - 8)), 'server_no_eos');
    assert.equal(outcome.rows, 4);
    assert.equal(pathOf(name), 'server');
    assert.deepEqual(await rows('server_no_eos'), expected);
  });

  for (const format of ['file', 'stream'] as const) {
    it(`refuses a damaged ${format} (string offsets past the data) before hyperd reads it, landing nothing`, async () => {
      const good = tableToIPC(plainTable(), format);
      // The name column's offsets: 0, 4, 8, 8, 12; the third points far past the data.
      const bad = patched(good, int32s([0, 4, 8, 8, 12]), int32s([0, 4, 0x7fff0000, 8, 12]));
      const name = `damaged-${format}.arrow`;
      const error = expectError(await bench.ingest(await bench.claim(name, bad), `damaged_${format}`));
      assert.equal(error.code, 'ARROW_CORRUPT', error.message);
      assert.equal(error.file, name);
      assert.equal(pathOf(name), 'none');
      assert.equal(await count(bench.pool, `damaged_${format}`).catch(() => 0), 0);
    });
  }

  it('streams a file whose columns need a rewrite (dictionary)', async () => {
    const dict = new Table({
      id: vectorFromArray(IDS, new Int32()),
      name: makeVector(vectorFromArray(['x', 'y', 'x', 'y'], new Dictionary(new Utf8(), new Int32()))),
    });
    const name = 'dictionary.arrow';
    assert.equal((await bench.ingest(await bench.claim(name, tableToIPC(dict, 'file')), 'streamed_dict')).rows, 4);
    assert.equal(pathOf(name), 'stream');
  });

  for (const format of ['file', 'stream'] as const) {
    it(`has hyperd read an IPC ${format} itself into a table that needs casts, other letter case, other order or NOT NULL`, async () => {
      // Wider id, columns in another order, NAME in capitals, amount NOT NULL.
      await bench.pool.query(`CREATE TABLE "cast_${format}" (amount DOUBLE PRECISION NOT NULL, "NAME" TEXT, id BIGINT)`);
      const name = `cast-${format}.arrow`;
      assert.equal((await bench.ingest(await bench.claim(name, tableToIPC(plainTable(), format)), `cast_${format}`)).rows, 4);
      assert.equal(pathOf(name), 'server-insert');
      const got = await bench.pool.query<{ id: string; NAME: string | null; amount: number }>(
        `SELECT id, "NAME", amount FROM "cast_${format}" ORDER BY id`,
      );
      assert.deepEqual(
        got.map((r) => `${r.id}|${r.NAME}|${r.amount}`),
        expected,
      );
    });
  }

  it('reports a NULL bound for a NOT NULL column, naming the file, landing nothing', async () => {
    await bench.pool.query('CREATE TABLE "not_null_name" (id INTEGER, name TEXT NOT NULL, amount DOUBLE PRECISION)');
    const name = 'null-in-not-null.arrow';
    const error = expectError(await bench.ingest(await bench.claim(name, tableToIPC(plainTable(), 'file')), 'not_null_name'));
    assert.equal(error.file, name);
    assert.equal(error.code, 'NULL_IN_NOT_NULL');
    assert.equal(error.column, 'name');
    assert.match(error.message, /column "name" holds 1 NULL value/);
    assert.match(error.hint, /every row of column "name"/);
    assert.equal(await count(bench.pool, 'not_null_name'), 0);
  });

  it('streams into a varchar(n) column, whose length limit only COPY checks', async () => {
    await bench.pool.query('CREATE TABLE "limited" (id INTEGER, name VARCHAR(10), amount DOUBLE PRECISION NOT NULL)');
    const name = 'limited.arrow';
    assert.equal((await bench.ingest(await bench.claim(name, tableToIPC(plainTable(), 'file')), 'limited')).rows, 4);
    assert.equal(pathOf(name), 'stream');
    assert.deepEqual(await rows('limited'), expected);
  });

  it('streams when the database cannot read local files', async () => {
    const db = bench.db;
    const remote: PluginTarget = { db: { ...db, capabilities: { ...db.capabilities, readsLocalFiles: false } }, pool: bench.pool };
    const name = 'remote.arrow';
    assert.equal(
      (await bench.ingest(await bench.claim(name, tableToIPC(plainTable(), 'file')), 'streamed_remote', { target: remote })).rows,
      4,
    );
    assert.equal(pathOf(name), 'stream');
    assert.deepEqual(await rows('streamed_remote'), expected);
  });
});
