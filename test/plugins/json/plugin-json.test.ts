import assert from 'node:assert/strict';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonIngester } from '../../../plugins/json/index.ts';
import { silentLogger } from '../../../src/log.ts';
import { count } from '../../helpers/env.ts';
import { columnTypes as columnTypesIn, expectError, type Outcome, usePluginBench } from '../../helpers/plugin-bench.ts';

describe('json ingester', () => {
  // The JSON ingester asks for a retry each time it widens a column: room for several in a file.
  const bench = usePluginBench(jsonIngester, { maxAttempts: 9, logger: silentLogger });

  async function ingestText(
    name: string,
    content: string | Uint8Array,
    table: string,
    options?: { createTable?: boolean },
  ): Promise<Outcome> {
    return bench.ingest(await bench.claim(name, content), table, options);
  }

  function columnTypes(table: string): Promise<Record<string, string> | null> {
    return columnTypesIn(bench.pool, table);
  }

  it('loads an array of objects and infers column types', async () => {
    const content = `[
  {"id": 1, "name": "alpha", "score": 1.5, "ok": true, "day": "2024-01-02", "at": "2024-01-02T03:04:05"},
  {"id": 2, "name": "beta", "score": 2, "ok": false, "day": "2024-02-29", "at": "2024-02-29 23:59:59"},
  {
    "id": 3,
    "name": null,
    "score": -0.25,
    "ok": null
  }
]
`;
    const outcome = await ingestText('array.json', content, 'arr');
    assert.equal(outcome.rows, 3);
    assert.deepEqual(await columnTypes('arr'), {
      id: 'bigint',
      name: 'text',
      score: 'double precision',
      ok: 'boolean',
      day: 'date',
      at: 'timestamp',
    });
    const rows = await bench.pool.query<{ id: string; name: string | null; score: number; ok: boolean | null; day: string | null }>(
      `SELECT id, name, score, ok, CAST(day AS TEXT) AS day FROM arr ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => ({ ...r, id: Number(r.id) })),
      [
        { id: 1, name: 'alpha', score: 1.5, ok: true, day: '2024-01-02' },
        { id: 2, name: 'beta', score: 2, ok: false, day: '2024-02-29' },
        { id: 3, name: null, score: -0.25, ok: null, day: null },
      ],
    );
  });

  it('loads JSON lines (.jsonl, .ndjson, and .json starting with "{"), skipping blank lines and CRLF', async () => {
    const lines = '{"id": 1, "city": "Oslo"}\r\n\r\n{"id": 2, "city": "Lima"}\r\n   \n{"id": 3}';
    assert.equal((await ingestText('a.jsonl', lines, 'lines')).rows, 3);
    assert.equal((await ingestText('b.ndjson', `${lines}\n`, 'lines')).rows, 3);
    assert.equal((await ingestText('c.json', `\n\n${lines}\n`, 'lines')).rows, 3);
    assert.equal(await count(bench.pool, 'lines'), 9);
    assert.equal(await count(bench.pool, 'lines', 'city IS NULL'), 3);
    const cities = await bench.pool.query<{ city: string }>(`SELECT DISTINCT city FROM lines WHERE city IS NOT NULL ORDER BY city`);
    assert.deepEqual(
      cities.map((r) => r.city),
      ['Lima', 'Oslo'],
    );
  });

  it('stores nested values as JSON text and keeps NULL apart from the empty string', async () => {
    const records = [
      { id: 1, tags: ['a', 'b'], meta: { note: 'comma, "quote"\nnewline', n: 1 }, label: '' },
      { id: 2, tags: [], meta: { deep: { x: [1, { y: null }] } }, label: 'x,y' },
      { id: 3, tags: null, label: null },
      { id: 4, tags: 'plain', meta: { emoji: 'héllo 🌍' }, label: 'line1\r\nline2 "q"' },
    ];
    const outcome = await ingestText('nested.jsonl', records.map((r) => JSON.stringify(r)).join('\n'), 'nested');
    assert.equal(outcome.rows, 4);
    assert.deepEqual(await columnTypes('nested'), { id: 'bigint', tags: 'text', meta: 'text', label: 'text' });
    const rows = await bench.pool.query<{ id: string; tags: string | null; meta: string | null; label: string | null }>(
      `SELECT id, tags, meta, label FROM nested ORDER BY id`,
    );
    assert.deepEqual(JSON.parse(rows[0]!.tags!), ['a', 'b']);
    assert.deepEqual(JSON.parse(rows[0]!.meta!), records[0]!.meta);
    assert.equal(rows[0]!.label, '');
    assert.deepEqual(JSON.parse(rows[1]!.tags!), []);
    assert.deepEqual(JSON.parse(rows[1]!.meta!), records[1]!.meta);
    assert.equal(rows[1]!.label, 'x,y');
    assert.equal(rows[2]!.tags, null);
    assert.equal(rows[2]!.meta, null);
    assert.equal(rows[2]!.label, null);
    // A string in a JSON column is written as JSON, so every value of the column parses back.
    assert.equal(JSON.parse(rows[3]!.tags!), 'plain');
    assert.deepEqual(JSON.parse(rows[3]!.meta!), { emoji: 'héllo 🌍' });
    assert.equal(rows[3]!.label, 'line1\r\nline2 "q"');
  });

  it('appends to an existing table by column name, in any order, with NULL for a missing nullable column', async () => {
    await bench.pool.query(`CREATE TABLE existing (note TEXT, id BIGINT NOT NULL, amount DOUBLE PRECISION, extra TEXT)`);
    const content = JSON.stringify([
      { amount: 2.5, id: 10, Note: 'first' },
      { id: 11, amount: 3 },
      { Note: null, amount: null, id: 12 },
    ]);
    const outcome = await ingestText('existing.json', content, 'existing');
    assert.equal(outcome.rows, 3, JSON.stringify(outcome.error));
    const rows = await bench.pool.query<{ id: string; note: string | null; amount: number | null; extra: string | null }>(
      `SELECT id, note, amount, extra FROM existing ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => ({ ...r, id: Number(r.id) })),
      [
        { id: 10, note: 'first', amount: 2.5, extra: null },
        { id: 11, note: null, amount: 3, extra: null },
        { id: 12, note: null, amount: null, extra: null },
      ],
    );
    // A key first seen late that the table has is fine: every table column is in the COPY.
    const late = [
      ...Array.from({ length: 1500 }, (_, i) => JSON.stringify({ id: 100 + i })),
      JSON.stringify({ id: 9999, extra: 'late' }),
    ].join('\n');
    assert.equal((await ingestText('late.jsonl', late, 'existing')).rows, 1501);
    assert.equal(await count(bench.pool, 'existing', `extra = 'late' AND id = 9999`), 1);
    // Two spellings of one column in one file are ambiguous.
    const twice = expectError(await ingestText('twice.jsonl', '{"id": 1, "note": "a"}\n{"id": 2, "NOTE": "b"}\n', 'existing'));
    assert.equal(twice.kind, 'schema');
    assert.equal(twice.code, 'DUPLICATE_COLUMN');
    assert.equal(twice.column, 'NOTE');
    assert.equal(twice.line, 2);
    assert.equal(await count(bench.pool, 'existing'), 1504);
  });

  it('rejects a key the existing table lacks with a schema error naming it', async () => {
    await bench.pool.query(`CREATE TABLE strict (id BIGINT, name TEXT)`);
    const error = expectError(await ingestText('extra.jsonl', '{"id": 1, "name": "a"}\n{"id": 2, "colour": "red"}\n', 'strict'));
    assert.equal(error.kind, 'schema');
    assert.equal(error.code, 'UNKNOWN_COLUMN');
    assert.equal(error.column, 'colour');
    assert.equal(error.line, 2);
    assert.match(error.message, /colour/);
    assert.equal(await count(bench.pool, 'strict'), 0);
  });

  it('rejects a key first seen after the sample of a new table, naming the key and the record', async () => {
    const records = Array.from({ length: 1200 }, (_, i) => JSON.stringify({ id: i }));
    records[1099] = JSON.stringify({ id: 1099, surprise: true });
    const error = expectError(await ingestText('late-key.jsonl', records.join('\n'), 'late_key'));
    assert.equal(error.kind, 'schema');
    assert.equal(error.code, 'UNKNOWN_COLUMN');
    assert.equal(error.column, 'surprise');
    assert.equal(error.line, 1100);
    assert.match(error.message, /"surprise" at line 1100/);
    // Nothing landed (and the core-like helper dropped the table the failed attempt created).
    assert.equal(await columnTypes('late_key'), null);

    const array = JSON.stringify(
      Array.from({ length: 1200 }, (_, i) => (i === 1150 ? { id: i, other: 1 } : { id: i })),
      null,
      1,
    );
    const arrayError = expectError(await ingestText('late-key.json', array, 'late_key'));
    assert.equal(arrayError.code, 'UNKNOWN_COLUMN');
    assert.match(arrayError.message, /element \[1150\]/);
    assert.equal(arrayError.line, array.split('\n').findIndex((l) => l.includes('"other"')) - 1);
  });

  it('reports a syntax error mid-file with its line (and element index for arrays)', async () => {
    const lines = ['{"id": 1}', '{"id": 2}', '', '{"id": 3', '{"id": 5}'].join('\n');
    const error = expectError(await ingestText('broken.jsonl', lines, 'broken'));
    assert.equal(error.kind, 'data');
    assert.equal(error.code, 'JSON_SYNTAX');
    assert.equal(error.line, 4);
    assert.match(error.message, /line 4/);

    const array = '[\n  {"id": 1},\n  {"id": 2},\n  {"id": 3,\n   "name": "x" "y"},\n  {"id": 4}\n]\n';
    const arrayError = expectError(await ingestText('broken.json', array, 'broken'));
    assert.equal(arrayError.code, 'JSON_SYNTAX');
    assert.equal(arrayError.line, 5);
    assert.match(arrayError.message, /element \[2\]/);

    const unclosed = expectError(await ingestText('unclosed.json', '[{"id": 1},\n{"id": 2}\n', 'broken'));
    assert.equal(unclosed.code, 'JSON_SYNTAX');
    assert.equal(unclosed.line, 3);

    const mismatched = expectError(await ingestText('mismatched.json', '[{"id": 1},\n{"id": [2}},\n{"id": 3}]', 'broken'));
    assert.equal(mismatched.code, 'JSON_SYNTAX');
    assert.equal(mismatched.line, 2);

    const trailing = expectError(await ingestText('trailing.json', '[{"id": 1}]\n{"id": 2}\n', 'broken'));
    assert.equal(trailing.code, 'JSON_SYNTAX');
    assert.equal(trailing.line, 2);
    assert.equal(await columnTypes('broken'), null);
  });

  it('rejects a value of the wrong type for an existing column, naming the record and column', async () => {
    await bench.pool.query(`CREATE TABLE typed (id BIGINT, qty BIGINT NOT NULL, label TEXT)`);
    const lines = ['{"id": 1, "qty": 5}', '', '{"id": 2, "qty": 6}', '{"id": 3, "qty": {"n": 7}}', '{"id": 4, "qty": 8}'].join('\n');
    const error = expectError(await ingestText('wrong.jsonl', lines, 'typed'));
    assert.equal(error.kind, 'data');
    assert.equal(error.sqlState, '22P02');
    assert.equal(error.line, 4);
    assert.equal(error.column, 'qty');
    assert.match(error.message, /line 4, column "qty"/);

    const array = JSON.stringify([
      { id: 1, qty: 1 },
      { id: 2, qty: 'many' },
    ]);
    const arrayError = expectError(await ingestText('wrong.json', array, 'typed'));
    assert.equal(arrayError.column, 'qty');
    assert.match(arrayError.message, /element \[1\]/);

    const missing = expectError(await ingestText('null.jsonl', '{"id": 1, "qty": 1}\n{"id": 2, "qty": null}\n', 'typed'));
    assert.equal(missing.kind, 'data');
    assert.equal(missing.line, 2);
    assert.equal(missing.column, 'qty');
    assert.equal(await count(bench.pool, 'typed'), 0);
  });

  it('widens an inferred type when a later record does not fit it, with a fresh attempt', async () => {
    const records = Array.from({ length: 1500 }, (_, i) => ({ id: i, n: i, day: '2024-01-01', flag: true }));
    records[1200] = { id: 1200, n: 2.5, day: '2024-01-01', flag: true };
    const dayRecords = records.map((r, i) => (i === 1300 ? { ...r, day: '2024-02-30' } : r));
    const outcome = await ingestText('widen.jsonl', dayRecords.map((r) => JSON.stringify(r)).join('\n'), 'widen');
    assert.equal(outcome.rows, 1500, JSON.stringify(outcome.error));
    // n: bigint → double (seen by the plugin); day: date → text (rejected by the database).
    assert.equal(outcome.attempts, 3);
    assert.deepEqual(await columnTypes('widen'), { id: 'bigint', n: 'double precision', day: 'text', flag: 'boolean' });
    assert.equal(await count(bench.pool, 'widen', 'n = 2.5'), 1);
    assert.equal(await count(bench.pool, 'widen', `day = '2024-02-30'`), 1);

    const objects = Array.from({ length: 1100 }, (_, i) => JSON.stringify({ v: i === 1050 ? { nested: i } : 'text' })).join('\n');
    const nested = await ingestText('widen-json.jsonl', objects, 'widen_json');
    assert.equal(nested.rows, 1100);
    const rows = await bench.pool.query<{ v: string }>(`SELECT v FROM widen_json`);
    for (const row of rows) JSON.parse(row.v);
  });

  it('rejects a .json holding a single object or a scalar, and arrays of non-objects', async () => {
    const pretty = expectError(await ingestText('single.json', JSON.stringify({ id: 1, name: 'x' }, null, 2), 'shape'));
    assert.equal(pretty.kind, 'data');
    assert.equal(pretty.code, 'JSON_SHAPE');
    assert.match(pretty.hint, /array of objects/);

    const compact = expectError(await ingestText('single-line.json', '{"data": [1, 2, 3]}\n', 'shape'));
    assert.equal(compact.code, 'JSON_SHAPE');

    for (const [name, text] of [
      ['scalar.json', '42\n'],
      ['string.json', '  "hello"'],
      ['null.json', 'null'],
    ] as const) {
      const error = expectError(await ingestText(name, text, 'shape'));
      assert.equal(error.kind, 'data', name);
      assert.equal(error.code, 'JSON_SHAPE', name);
      assert.equal(error.line, 1, name);
    }

    const scalars = expectError(await ingestText('scalars.json', '[1, 2, 3]', 'shape'));
    assert.equal(scalars.code, 'JSON_NOT_OBJECT');
    assert.match(scalars.message, /element \[0\]/);

    const arrayLine = expectError(await ingestText('arrays.jsonl', '{"a": 1}\n[1, 2]\n', 'shape'));
    assert.equal(arrayLine.code, 'JSON_NOT_OBJECT');
    assert.equal(arrayLine.line, 2);
    assert.equal(await columnTypes('shape'), null);
  });

  it('rejects a zero-byte or whitespace-only file', async () => {
    for (const name of ['empty.json', 'empty.jsonl']) {
      const error = expectError(await ingestText(name, '', 'empty'));
      assert.equal(error.kind, 'data');
      assert.equal(error.code, 'EMPTY_FILE');
      assert.equal(error.file, name);
    }
    const blank = expectError(await ingestText('blank.ndjson', '\n \n\t\n', 'empty'));
    assert.equal(blank.code, 'EMPTY_FILE');
    assert.equal(await columnTypes('empty'), null);
  });

  it('accepts a UTF-8 byte order mark and rejects bytes that are not UTF-8', async () => {
    assert.equal((await ingestText('bom.json', '\ufeff[{"word": "größe"}]', 'utf8')).rows, 1);
    assert.equal((await ingestText('bom.jsonl', '\ufeff{"word": "naïve"}\n', 'utf8')).rows, 1);
    const words = await bench.pool.query<{ word: string }>(`SELECT word FROM utf8 ORDER BY word`);
    assert.deepEqual(
      words.map((r) => r.word),
      ['größe', 'naïve'],
    );
    const latin1 = Buffer.concat([Buffer.from('{"word": "ok"}\n{"word": "gr'), Buffer.from([0xf6]), Buffer.from('sse"}\n')]);
    const error = expectError(await ingestText('latin1.jsonl', latin1, 'utf8'));
    assert.equal(error.kind, 'data');
    assert.equal(error.code, 'JSON_ENCODING');
    assert.equal(await count(bench.pool, 'utf8'), 2);
  });

  it('appends nothing for an empty array and does not create the table', async () => {
    const outcome = await ingestText('none.json', ' [ \n ] \n', 'nothing');
    assert.equal(outcome.rows, 0);
    assert.equal(outcome.error, undefined);
    assert.equal(await columnTypes('nothing'), null);
  });

  it('fails cleanly when the table is missing and creating tables is disabled', async () => {
    const error = expectError(await ingestText('nocreate.jsonl', '{"a": 1}\n', 'not_created', { createTable: false }));
    assert.equal(error.code, 'TABLE_MISSING');
    assert.equal(await columnTypes('not_created'), null);
  });

  it('splits array elements across read chunks (strings with brackets, escapes, multi-byte text)', async () => {
    // Over 3 MiB, so elements, strings, escapes and UTF-8 sequences straddle the 1 MiB chunks.
    const tricky = ['a"],{"', '\\', '}{][', 'é🌍漢字', ',,', '\\"'];
    const records = Array.from({ length: 40_000 }, (_, i) => ({
      i,
      s: `${tricky[i % tricky.length]}-${'x'.repeat(i % 50)}`,
      o: { k: [i, '[{'] },
    }));
    const text = `[${records.map((r, i) => (i % 3 === 0 ? `\n  ${JSON.stringify(r, null, 1)}` : JSON.stringify(r))).join(',')}\n]`;
    assert.ok(Buffer.byteLength(text) > 3 * 1024 * 1024);
    const outcome = await ingestText('tricky.json', text, 'tricky');
    assert.equal(outcome.rows, records.length);
    const sample = await bench.pool.query<{ i: string; s: string; o: string }>(
      `SELECT i, s, o FROM tricky WHERE i IN (0, 1, 3, 39999) ORDER BY i`,
    );
    for (const row of sample) {
      const expected = records[Number(row.i)]!;
      assert.equal(row.s, expected.s);
      assert.deepEqual(JSON.parse(row.o), expected.o);
    }
  });

  it('streams a 200k-record JSON-lines file', async () => {
    const name = 'big.jsonl';
    const out = createWriteStream(join(bench.inbox, name));
    const total = 200_000;
    for (let i = 1; i <= total; i++) {
      const line = `${JSON.stringify({
        id: i,
        name: `user ${i}`,
        score: i / 4,
        active: i % 2 === 0,
        tags: i % 10 === 0 ? ['ten'] : null,
      })}\n`;
      if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    const outcome = await bench.ingest(await bench.claim(name), 'big');
    assert.equal(outcome.rows, total);
    assert.equal(await count(bench.pool, 'big'), total);
    const [sums] = await bench.pool.query<{ ids: string; active: string; tagged: string }>(
      `SELECT SUM(id) AS ids, SUM(CASE WHEN active THEN 1 ELSE 0 END) AS active, SUM(CASE WHEN tags IS NULL THEN 0 ELSE 1 ` +
        `END) AS tagged FROM big`,
    );
    assert.equal(Number(sums!.ids), (total * (total + 1)) / 2);
    assert.equal(Number(sums!.active), total / 2);
    assert.equal(Number(sums!.tagged), total / 10);
  });
});
