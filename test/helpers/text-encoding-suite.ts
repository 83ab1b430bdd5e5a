/**
 * Text files in another character set than UTF-8, for any database (run within textFileCases of
 * text-files-suite.ts, so by protocol-suite.ts: hyperd and PostgreSQL, Node, Deno and Bun). A file
 * not in UTF-8 fails, naming where, unless `encoding` says what it is: then every character lands
 * as written (Windows-1252, UTF-16, Shift_JIS), and bytes that mean nothing in it fail the file,
 * naming where. The files' bytes are written here by hand, not by the decoder's library.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openWatcher, startWatching, stopWatching } from '../../src/api.ts';
import { gzip } from './compression-suite.ts';
import { report } from './csv-dates-suite.ts';
import { drop, waitFor } from './drop.ts';
import { count } from './env.ts';
import { utf16 } from './not-text-suite.ts';
import type { WatchBench } from './watch-bench.ts';

const utf8 = new TextEncoder();

/** Text as Windows-1252 bytes: ASCII as is, and the few other characters the tests use. */
function cp1252(text: string): Uint8Array {
  const table: Record<string, number> = { ä: 0xe4, ö: 0xf6, ü: 0xfc, ß: 0xdf, É: 0xc9, '€': 0x80, '“': 0x93, '”': 0x94, '–': 0x96 };
  return Uint8Array.from([...text].map((c) => (c.charCodeAt(0) < 0x80 ? c.charCodeAt(0) : table[c]!)));
}

export function textEncodingCases(t: WatchBench): void {
  it('a file not in UTF-8 (a spreadsheet saved in Windows-1252), a line with too many fields and a trailing delimiter fail \
naming the line and what to do', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'good.csv', 'id,city\n1,Bonn\n');
    await drop(dir, 'latin1.csv', new Uint8Array([...new TextEncoder().encode('id,city\n1,K'), 0xf6, ...new TextEncoder().encode('ln\n')]));
    await drop(dir, 'wide.csv', 'id,city\n2,Bonn\n3,Frankfurt, am Main\n');
    const stats = await startWatching(dir, table, { ...opts, batchFiles: 1 });
    await stopWatching(dir, { registry: t.registry });
    assert.equal(stats.filesIngested, 1);
    const latin1 = await report(dir, 'latin1.csv');
    assert.equal(latin1.code, 'CSV_NOT_UTF8');
    assert.equal(latin1.line, 2);
    assert.match(latin1.hint, /not UTF-8.*Windows-1252.*CSV UTF-8/);
    const wide = await report(dir, 'wide.csv');
    assert.match(wide.code, /^DB_22/);
    assert.equal(wide.line, 3);
    assert.match(wide.hint, /more or fewer fields than the header.*--csv-delimiter/);
    assert.equal(await count(t.pool, table), 1);

    // A delimiter ending every line.
    const other = await t.inbox();
    await drop(other.dir, 'good.csv', 'id,name\n1,a\n');
    await drop(other.dir, 'trailing.csv', 'id,name,\n4,d,\n');
    const more = await startWatching(other.dir, other.table, { ...other.opts, batchFiles: 1 });
    await stopWatching(other.dir, { registry: t.registry });
    assert.equal(more.filesIngested, 1);
    const trailing = await report(other.dir, 'trailing.csv');
    assert.equal(trailing.code, 'EMPTY_COLUMN_NAME');
    assert.equal(trailing.message, 'trailing.csv: column 3 of the header has no name');
    assert.match(trailing.hint, /ends with a delimiter/);
  });

  it("encoding 'windows-1252': a German spreadsheet's CSV (';', decimal commas, €, umlauts, typographic quotes), alone, \
grouped and gzip-compressed, and JSON lines, land character for character", async () => {
    const { dir, table, opts } = await t.inbox();
    const german = { ...opts, encoding: 'windows-1252', csvDelimiter: ';' };
    const names = ['Müller', 'Weiß – “Chef”', 'Éclair € 5'];
    await drop(dir, 'export.csv', cp1252(`id;name;amount\r\n${names.map((n, i) => `${i + 1};${n};${i},5`).join('\r\n')}\r\n`));
    assert.equal((await startWatching(dir, table, german)).filesIngested, 1);
    await stopWatching(dir, { registry: t.registry });
    // Small files ready together, one of them compressed; and one past the read-ahead (streamed).
    for (let i = 0; i < 4; i++) await writeFile(join(dir, `g${i}.csv`), cp1252(`id;name;amount\r\n${10 + i};Größe ${i} €;1,${i}\r\n`));
    await writeFile(join(dir, 'z.csv.gz'), await gzip(cp1252('id;name;amount\r\n20;gezippt ä;2\r\n')));
    const big = ['id;name;amount', ...Array.from({ length: 30000 }, (_, i) => `${1000 + i};Zeile ${i} äöü €;${i}`)].join('\r\n');
    await writeFile(join(dir, 'big.csv'), cp1252(`${big}\r\n`));
    for (const name of ['g0.csv', 'g1.csv', 'g2.csv', 'g3.csv', 'z.csv.gz', 'big.csv']) await writeFile(join(dir, `${name}.ready`), '');
    const handle = await openWatcher(dir, table, german);
    await waitFor(() => handle.stats.filesIngested === 6, 'the grouped, compressed and big files');
    await handle.stop();
    const rows = await t.pool.query<{ id: number | string; name: string }>(`SELECT id, name FROM ${table} WHERE id < 1000 ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.name]),
      [...names.map((n, i) => [i + 1, n]), ...[0, 1, 2, 3].map((i) => [10 + i, `Größe ${i} €`]), [20, 'gezippt ä']],
    );
    const big1 = await t.pool.query<{ n: number | string; bad: number | string }>(
      `SELECT COUNT(*) AS n, SUM(CASE WHEN name = 'Zeile ' || CAST(id - 1000 AS TEXT) || ' äöü €' THEN 0 ELSE 1 END) AS bad ` +
        `FROM ${table} WHERE id >= 1000`,
    );
    assert.deepEqual([Number(big1[0]!.n), Number(big1[0]!.bad)], [30000, 0]);
    // JSON lines in the same character set.
    const json = await t.inbox();
    await drop(json.dir, 'events.jsonl', cp1252('{"id":1,"note":"Straße – “zu”"}\n{"id":2,"note":"€"}\n'));
    assert.equal((await startWatching(json.dir, json.table, { ...json.opts, encoding: 'windows-1252' })).filesIngested, 1);
    await stopWatching(json.dir, { registry: t.registry });
    const notes = await t.pool.query<{ note: string }>(`SELECT note FROM ${json.table} ORDER BY id`);
    assert.deepEqual(
      notes.map((r) => r.note),
      ['Straße – “zu”', '€'],
    );
  });

  it("encoding 'utf-16le': a spreadsheet's Unicode text (.tsv with a byte order mark) lands, also past the read-ahead", async () => {
    const { dir, table, opts } = await t.inbox();
    const lines = ['id\tname', ...Array.from({ length: 20000 }, (_, i) => `${i}\t名前 ${i} 😀`)];
    await drop(dir, 'unicode.tsv', utf16(`${lines.join('\r\n')}\r\n`, 'le'));
    const stats = await startWatching(dir, table, { ...opts, encoding: 'UTF-16LE' });
    await stopWatching(dir, { registry: t.registry });
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    const check = await t.pool.query<{ n: number | string; bad: number | string }>(
      `SELECT COUNT(*) AS n, SUM(CASE WHEN name = '名前 ' || CAST(id AS TEXT) || ' 😀' THEN 0 ELSE 1 END) AS bad FROM ${table}`,
    );
    assert.deepEqual([Number(check[0]!.n), Number(check[0]!.bad)], [20000, 0]);
  });

  it('encoding: bytes that mean nothing in the character set fail the file as ENCODING_INVALID, naming where; the \
others land', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'good.csv', cp1252('id,name\n1,Köln\n'));
    // 0x81 has no character in Windows-1252.
    await drop(dir, 'undefined-byte.csv', Uint8Array.from([...utf8.encode('id,name\n2,K'), 0x81, ...utf8.encode('ln\n')]));
    const stats = await startWatching(dir, table, { ...opts, encoding: 'windows-1252', batchFiles: 1 });
    await stopWatching(dir, { registry: t.registry });
    assert.equal(stats.filesIngested, 1);
    const bad = await report(dir, 'undefined-byte.csv');
    assert.equal(bad.code, 'ENCODING_INVALID');
    assert.match(bad.message, /byte 11 \(0x81\) is not valid windows-1252/);
    assert.match(bad.hint, /--encoding/);
    assert.equal(await count(t.pool, table), 1);

    const jp = await t.inbox();
    // 日本 in Shift_JIS, then a lead byte (0x93) followed by a byte that cannot end it.
    await drop(jp.dir, 'ok.csv', Uint8Array.from([...utf8.encode('id,name\n1,'), 0x93, 0xfa, 0x96, 0x7b, 0x0a]));
    await drop(jp.dir, 'cut.csv', Uint8Array.from([...utf8.encode('id,name\n2,'), 0x93, 0x0a]));
    const jpStats = await startWatching(jp.dir, jp.table, { ...jp.opts, encoding: 'shift_jis', batchFiles: 1 });
    await stopWatching(jp.dir, { registry: t.registry });
    assert.equal(jpStats.filesIngested, 1, JSON.stringify(jpStats.lastError));
    assert.deepEqual(
      (await t.pool.query<{ name: string }>(`SELECT name FROM ${jp.table}`)).map((r) => r.name),
      ['日本'],
    );
    assert.equal((await report(jp.dir, 'cut.csv')).code, 'ENCODING_INVALID');
    const u16 = await t.inbox();
    await drop(u16.dir, 'odd.tsv', Uint8Array.from([0xff, 0xfe, 0x61, 0x00, 0x0a, 0x00, 0x31]));
    const u16Stats = await startWatching(u16.dir, u16.table, { ...u16.opts, encoding: 'utf-16le' });
    await stopWatching(u16.dir, { registry: t.registry });
    assert.equal(u16Stats.filesFailed, 1);
    const odd = await report(u16.dir, 'odd.tsv');
    assert.equal(odd.code, 'ENCODING_INVALID');
    assert.match(odd.message, /cut short|not valid utf-16le/);
    await assert.rejects(
      openWatcher(u16.dir, u16.table, { ...u16.opts, encoding: 'klingon' }),
      /encoding: "klingon" is not a known character set/,
    );
  });
}
