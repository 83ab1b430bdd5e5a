/**
 * Files under a text name that other tools wrote in another shape, for any database (run with the
 * text-file cases: hyperd and PostgreSQL). UTF-16 with a byte order mark (spreadsheets' "Unicode
 * text") lands value for value with no `encoding` set; UTF-16 without a mark, a workbook, a
 * compressed, Parquet or Arrow file under a `.csv`/`.tsv`/`.json` name fails at once, saying what
 * it looks like and what to do, and creates no table from a header of junk.
 * The workbook (test/fixtures/not-text/book.xlsx) was written by Python's zipfile, the zstd file
 * by the zstd tool, the Arrow file by apache-arrow, the gzip by node:zlib.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { openWatcher } from '../../src/api.ts';
import { drop, failedEntries, leftovers } from './drop.ts';
import { sqlTypes } from './env.ts';
import { gzip } from './compression-suite.ts';
import type { WatchBench } from './watch-bench.ts';
import { ROOT } from './root.ts';

const FIXTURES = join(ROOT, 'test', 'fixtures');

/** `text` as UTF-16 in byte order `order`, with or without its byte order mark. */
export function utf16(text: string, order: 'le' | 'be', mark = true): Uint8Array {
  const out = new Uint8Array((mark ? 2 : 0) + text.length * 2);
  const at = mark ? 2 : 0;
  if (mark) out.set(order === 'le' ? [0xff, 0xfe] : [0xfe, 0xff]);
  for (let i = 0; i < text.length; i++) {
    const [lo, hi] = [text.charCodeAt(i) & 0xff, text.charCodeAt(i) >> 8];
    out.set(order === 'le' ? [lo, hi] : [hi, lo], at + 2 * i);
  }
  return out;
}

async function report(dir: string, name: string): Promise<{ code: string; message: string; hint: string }> {
  return JSON.parse(await readFile(join(dir, 'failed', `${name}.error`), 'utf8'));
}

export function notTextCases(t: WatchBench): void {
  it('UTF-16 with a byte order mark (LE and BE; .tsv, .csv, .jsonl, .csv.gz) lands value for value with no encoding set, alone \
and in a group with UTF-8 files', async () => {
    const { dir, table, opts } = await t.inbox();
    // Ready before the start: claimed together, one group with a plain UTF-8 file in it.
    await drop(dir, 'unicode.tsv', utf16('id\tname\r\n1\tZoë\r\n2\t"a\tb"\r\n', 'le'));
    await drop(dir, 'be.csv', utf16('id,name\n3,€uro\n', 'be'));
    await drop(dir, 'plain.csv', 'id,name\n4,plain ä\n');
    await drop(dir, 'lines.jsonl', utf16('{"id":5,"name":"日本"}\n', 'le'));
    await drop(dir, 'packed.csv.gz', await gzip(utf16('id,name\n6,gz ß\n', 'le')));
    const handle = await openWatcher(dir, table, opts);
    const alone = 'late.tsv';
    await drop(dir, alone, utf16('id\tname\n7\tlate ø\n', 'le'));
    await handle.whenIdle();
    for (let i = 0; i < 50 && handle.stats.filesIngested < 6; i++) await new Promise((r) => setTimeout(r, 100));
    await handle.stop();
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    const rows = await t.pool.query<{ id: string | number; name: string }>(`SELECT id, name FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.name]),
      [
        [1, 'Zoë'],
        [2, 'a\tb'],
        [3, '€uro'],
        [4, 'plain ä'],
        [5, '日本'],
        [6, 'gz ß'],
        [7, 'late ø'],
      ],
    );
  });

  it('not text under a text name (UTF-16 without a mark, an .xlsx workbook, gzip, zstd, Parquet, Arrow) fails at once as \
ENCODING_UTF16 or NOT_TEXT, saying what it looks like and what to do; no table is made of it', async () => {
    const { dir, table, opts } = await t.inbox();
    const arrow = tableToIPC(tableFromArrays({ id: Int32Array.from([1, 2]) }), 'file');
    const cases: [name: string, bytes: Uint8Array | string, code: string, says: RegExp, fix: RegExp][] = [
      [
        'unmarked.tsv',
        utf16('id\tname\r\n1\tx\r\n', 'le', false),
        'ENCODING_UTF16',
        /UTF-16 text without a byte order mark/,
        /--encoding utf-16le/,
      ],
      ['unmarked-be.jsonl', utf16('{"id":1}\n', 'be', false), 'ENCODING_UTF16', /not UTF-8/, /--encoding utf-16be/],
      [
        'book.csv',
        await readFile(join(FIXTURES, 'not-text', 'book.xlsx')),
        'NOT_TEXT',
        /a ZIP archive \(an Excel \.xlsx workbook/,
        /CSV UTF-8/,
      ],
      ['packed.csv', await gzip('id\n1\n'), 'NOT_TEXT', /gzip-compressed/, /packed\.csv\.gz/],
      ['orders.csv', await readFile(join(FIXTURES, 'compressed', 'orders.csv.zst')), 'NOT_TEXT', /zstd-compressed/, /orders\.csv\.zst/],
      ['data.csv', await readFile(join(FIXTURES, 'sample.parquet')), 'NOT_TEXT', /a Parquet file/, /data\.parquet/],
      ['data.json', arrow, 'NOT_TEXT', /an Arrow IPC file/, /data\.arrow/],
    ];
    for (const [name, bytes] of cases) await drop(dir, name, bytes);
    const handle = await openWatcher(dir, table, opts);
    await handle.stop();
    assert.equal(handle.stats.filesFailed, cases.length);
    assert.deepEqual(await leftovers(dir), []);
    assert.equal((await failedEntries(dir)).length, cases.length * 3, 'each with its sentinel and .error');
    for (const [name, , code, says, fix] of cases) {
      const r = await report(dir, name);
      assert.equal(r.code, code, `${name}: ${r.message}`);
      assert.match(r.message, new RegExp(`^${name.replace('.', '\\.')}: `));
      assert.match(r.message, says, name);
      assert.match(r.hint, fix, name);
    }
    assert.equal(await sqlTypes(t.pool, table), undefined, 'no table made of them');
  });
}
