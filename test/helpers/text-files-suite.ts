/**
 * Text files as other tools write them, for any database (run by protocol-suite.ts: hyperd and
 * PostgreSQL, Node, Deno and Bun). Another delimiter (spreadsheets in locales with a decimal comma
 * export `;`-separated "CSV"): with `csvDelimiter` such files land value for value, alone and in
 * groups; without it they fail as CSV_DELIMITER before anything is loaded, instead of landing whole
 * lines in one column. Another character set (`encoding`: Windows-1252, UTF-16, Shift_JIS): every
 * character lands as written, and bytes that mean nothing in it fail the file, naming where
 * (text-encoding-suite.ts). The files' bytes are written here by hand, not by the decoder's library.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openWatcher, startWatching, stopWatching } from '../../src/api.ts';
import { drop, failedEntries, leftovers, waitFor } from './drop.ts';
import { count, sqlTypes } from './env.ts';
import { report } from './csv-dates-suite.ts';
import { notTextCases } from './not-text-suite.ts';
import { numberRangeCases } from './number-range-suite.ts';
import { textEncodingCases } from './text-encoding-suite.ts';
import { groupLogger, type WatchBench } from './watch-bench.ts';

/** A spreadsheet's "CSV UTF-8" export where the decimal separator is a comma: BOM, CRLF, `;`. */
const EXPORT = '\ufeffid;name;amount\r\n1;"Müller; Anna";1,5\r\n2;"O""Brien, Pat";2,25\r\n3;plain;\r\n';

export function textFileCases(t: WatchBench, fillsDefaults: boolean): void {
  it("csvDelimiter ';': a spreadsheet export (BOM, CRLF, ';' and commas inside quotes, decimal commas) lands value for value, \
alone and as a group; .tsv stays tab-separated", async () => {
    const { dir, table, opts } = await t.inbox();
    const logger = groupLogger();
    const semi = { ...opts, csvDelimiter: ';', logger };
    await drop(dir, 'export.csv', EXPORT);
    assert.equal((await startWatching(dir, table, semi)).filesIngested, 1);
    await stopWatching(dir, { registry: t.registry });
    const rows = await t.pool.query<{ id: number | string; name: string; amount: string | null }>(
      `SELECT id, name, amount FROM ${table} ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.name, r.amount]),
      [
        [1, 'Müller; Anna', '1,5'],
        [2, 'O"Brien, Pat', '2,25'],
        [3, 'plain', null],
      ],
    );
    // Decimal commas are not numbers: the column is text, so no value changes on the way.
    assert.match((await sqlTypes(t.pool, table))![2]!, /^(text|character varying)/i);
    // Small files ready together share one COPY with the same delimiter.
    for (let i = 0; i < 6; i++) {
      await writeFile(join(dir, `g${i}.csv`), `id;name;amount\r\n${10 + i};"g; ${i}";${i},5\r\n`);
    }
    await writeFile(join(dir, 'tabs.tsv'), 'id\tname\tamount\n20\tt;ab\t7\n');
    for (const name of ['g0.csv', 'g1.csv', 'g2.csv', 'g3.csv', 'g4.csv', 'g5.csv', 'tabs.tsv'])
      await writeFile(join(dir, `${name}.ready`), '');
    const handle = await openWatcher(dir, table, semi);
    await waitFor(() => handle.stats.filesIngested === 7, 'the six grouped files and the .tsv');
    await handle.stop();
    assert.ok(
      logger.groups.some((g) => g > 1),
      `some files shared a transaction: ${logger.groups.join(', ')}`,
    );
    const added = await t.pool.query<{ id: number | string; name: string; amount: string }>(
      `SELECT id, name, amount FROM ${table} WHERE id >= 10 ORDER BY id`,
    );
    assert.deepEqual(
      added.map((r) => [Number(r.id), r.name, r.amount]),
      [...[0, 1, 2, 3, 4, 5].map((i) => [10 + i, `g; ${i}`, `${i},5`]), [20, 't;ab', '7']],
    );
    assert.deepEqual(await leftovers(dir), []);
  });

  it("without csvDelimiter, a ';'-separated .csv fails as CSV_DELIMITER before anything loads (with or without commas in it), \
alone and in a group; a one-column file still loads", async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'nocomma.csv', 'id;name\r\n1;a\r\n2;b\r\n');
    await drop(dir, 'export.csv', EXPORT);
    const first = await startWatching(dir, table, opts);
    await stopWatching(dir, { registry: t.registry });
    assert.equal(first.filesFailed, 2);
    await assert.rejects(count(t.pool, table), 'no table was created from either file');
    for (const name of ['nocomma.csv', 'export.csv']) {
      const error = await report(dir, name);
      assert.equal(error.code, 'CSV_DELIMITER', name);
      assert.match(error.message, new RegExp(`^${name.replace('.', '\\.')}: .*looks ';'-separated`), name);
      assert.match(error.hint, /--csv-delimiter ';'/);
      assert.equal(error.line, 1);
    }
    // Into an existing table, small files ready together: each such file fails alone, the rest land.
    await drop(dir, 'good.csv', 'id,name\n1,a\n');
    assert.equal((await startWatching(dir, table, opts)).filesIngested, 1);
    await stopWatching(dir, { registry: t.registry });
    for (let i = 0; i < 4; i++) await writeFile(join(dir, `ok${i}.csv`), `id,name\n${10 + i},ok\n`);
    await writeFile(join(dir, 'pipe.csv'), 'id|name\n20|x\n21|y\n');
    for (const name of ['ok0.csv', 'ok1.csv', 'pipe.csv', 'ok2.csv', 'ok3.csv']) await writeFile(join(dir, `${name}.ready`), '');
    const second = await startWatching(dir, table, opts);
    await stopWatching(dir, { registry: t.registry });
    assert.equal(second.filesIngested, 4);
    assert.equal(second.filesFailed, 1);
    assert.equal((await report(dir, 'pipe.csv')).code, 'CSV_DELIMITER');
    assert.match((await report(dir, 'pipe.csv')).hint, /--csv-delimiter '\|'/);
    assert.equal(await count(t.pool, table), 5);
    assert.deepEqual(
      (await failedEntries(dir)).filter((n) => n.endsWith('.error')),
      ['export.csv.error', 'nocomma.csv.error', 'pipe.csv.error'],
    );

    // A one-column file whose values hold ';' is not a file of another delimiter.
    const other = await t.inbox();
    await drop(other.dir, 'notes.csv', 'note\r\nhello; world\r\nbye\r\n');
    assert.equal((await startWatching(other.dir, other.table, other.opts)).filesIngested, 1);
    await stopWatching(other.dir, { registry: t.registry });
    assert.equal(await count(t.pool, other.table), 2);
    // Said explicitly, the comma is taken at its word: the lines land as one column.
    const explicit = await t.inbox();
    await drop(explicit.dir, 'semi.csv', 'id;name\n1;a\n2;b\n');
    assert.equal((await startWatching(explicit.dir, explicit.table, { ...explicit.opts, csvDelimiter: ',' })).filesIngested, 1);
    await stopWatching(explicit.dir, { registry: t.registry });
    assert.equal(await count(t.pool, explicit.table), 2);
  });

  textEncodingCases(t);
  it('lines ended by a carriage return alone (old Mac spreadsheets) land, alone and grouped, a CR inside quotes kept', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'mac.csv', 'id,name\r1,a\r2,"two\rlines"\r');
    assert.equal((await startWatching(dir, table, opts)).filesIngested, 1);
    await stopWatching(dir, { registry: t.registry });
    for (let i = 0; i < 4; i++) await writeFile(join(dir, `m${i}.csv`), `id,name\r${10 + i},m${i}\r`);
    await writeFile(join(dir, 'unix.csv'), 'id,name\n20,u\n');
    for (const name of ['m0.csv', 'm1.csv', 'm2.csv', 'm3.csv', 'unix.csv']) await writeFile(join(dir, `${name}.ready`), '');
    const stats = await startWatching(dir, table, opts);
    await stopWatching(dir, { registry: t.registry });
    assert.equal(stats.filesIngested, 5, JSON.stringify(stats.lastError));
    const rows = await t.pool.query<{ id: number | string; name: string }>(`SELECT id, name FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.name]),
      [
        [1, 'a'],
        [2, 'two\rlines'],
        [10, 'm0'],
        [11, 'm1'],
        [12, 'm2'],
        [13, 'm3'],
        [20, 'u'],
      ],
    );
  });

  it('a table another program made, with NOT NULL columns that have a DEFAULT: files without those columns land, the database \
fills them (PostgreSQL); hyperd says they are required', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(
      `CREATE TABLE ${table} (id BIGINT NOT NULL, name TEXT, source TEXT NOT NULL DEFAULT 'inbox', version INTEGER NOT NULL ` +
        `DEFAULT 1, tag TEXT DEFAULT 'none')`,
    );
    await drop(dir, 'a.csv', 'id,name\n1,a\n2,b\n');
    // A key past the first 1,000 records names a defaulted column: retried with it loaded. COPY
    // cannot ask for the default row by row, so the records without the key get NULL there.
    const late = [
      ...Array.from({ length: 3000 }, (_, i) => `{"id":${100 + i},"name":"n","version":2}`),
      '{"id":3,"name":"c","version":2,"tag":"late"}',
    ].join('\n');
    await drop(dir, 'b.jsonl', `${late}\n`);
    const stats = await startWatching(dir, table, { ...opts, batchFiles: 1 });
    await stopWatching(dir, { registry: t.registry });
    if (!fillsDefaults) {
      assert.equal(stats.filesFailed, 2);
      const error = await report(dir, 'a.csv');
      assert.equal(error.code, 'MISSING_COLUMN');
      assert.match(error.message, /lacks column\(s\) source, version, which table .* requires \(NOT NULL, no default\)/);
      return;
    }
    assert.equal(stats.filesIngested, 2, JSON.stringify(stats.lastError));
    const rows = await t.pool.query<{ id: number | string; source: string; version: number | string; tag: string | null }>(
      `SELECT id, source, version, tag FROM ${table} WHERE id < 101 OR id = 3099 ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.source, Number(r.version), r.tag]),
      [
        [1, 'inbox', 1, 'none'],
        [2, 'inbox', 1, 'none'],
        [3, 'inbox', 2, 'late'],
        [100, 'inbox', 2, null],
        [3099, 'inbox', 2, null],
      ],
    );
    assert.equal(await count(t.pool, table), 3003);
    // A NOT NULL column without a default is still required.
    await drop(dir, 'noid.csv', 'name\nx\n');
    const missing = await startWatching(dir, table, opts);
    await stopWatching(dir, { registry: t.registry });
    assert.equal(missing.filesFailed, 1);
    const error = await report(dir, 'noid.csv');
    assert.equal(error.code, 'MISSING_COLUMN');
    assert.match(error.message, /lacks column\(s\) id, which table .* requires \(NOT NULL, no default\)/);
  });

  it('JSON numbers land as the file wrote them: ids past 2^53, 18-digit decimals into NUMERIC, big numbers nested in a JSON \
column; a line that is only a number is no record', async () => {
    const { dir, table, opts } = await t.inbox();
    // A new table: the column types come from the file.
    await drop(
      dir,
      'ids.jsonl',
      '{"id":9007199254740993,"obj":{"k":12345678901234567890123,"f":0.5}}\n' +
        '{"id":-9223372036854775808,"obj":null}\n{"id":9223372036854775807,"obj":[1]}\n',
    );
    assert.equal((await startWatching(dir, table, opts)).filesIngested, 1);
    await stopWatching(dir, { registry: t.registry });
    const ids = await t.pool.query<{ id: string; obj: string | null }>(
      `SELECT CAST(id AS TEXT) AS id, CAST(obj AS TEXT) AS obj FROM ${table} ORDER BY id`,
    );
    assert.deepEqual(
      ids.map((r) => [r.id, r.obj === null ? null : JSON.stringify(JSON.parse(r.obj.replace(/\d{16,}/g, (d) => `"${d}"`)))]),
      [
        ['-9223372036854775808', null],
        ['9007199254740993', JSON.stringify({ k: '12345678901234567890123', f: 0.5 })],
        ['9223372036854775807', '[1]'],
      ],
    );
    // An existing table with exact columns: NUMERIC and TEXT receive every digit (as a double,
    // 1234567890.12345679 would read 1234567890.1234567).
    const exact = await t.inbox();
    await t.pool.query(`CREATE TABLE ${exact.table} (id BIGINT, amount NUMERIC(18,8), note TEXT)`);
    await drop(
      exact.dir,
      'exact.json',
      '[{"id":1,"amount":1234567890.12345679,"note":12345678901234567890123456789},{"id":2,"amount":0.1,"note":"x"}]',
    );
    await drop(exact.dir, 'number.jsonl', '{"id":3,"amount":1}\n12345678901234567890\n');
    const stats = await startWatching(exact.dir, exact.table, { ...exact.opts, batchFiles: 1 });
    await stopWatching(exact.dir, { registry: t.registry });
    assert.equal(stats.filesIngested, 1);
    const rows = await t.pool.query<{ id: string; amount: string; note: string }>(
      `SELECT CAST(id AS TEXT) AS id, CAST(amount AS TEXT) AS amount, note FROM ${exact.table} ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => [r.id, r.amount, r.note]),
      [
        ['1', '1234567890.12345679', '12345678901234567890123456789'],
        ['2', '0.10000000', 'x'],
      ],
    );
    const notRecord = await report(exact.dir, 'number.jsonl');
    assert.equal(notRecord.code, 'JSON_NOT_OBJECT');
    assert.equal(notRecord.line, 2);
  });

  it('csvDelimiter must be one character other than the quote or a line break', async () => {
    const { dir, table, opts } = await t.inbox();
    for (const bad of [';;', '', '"', '\n', 'é']) {
      await assert.rejects(
        openWatcher(dir, table, { ...opts, csvDelimiter: bad }),
        /csvDelimiter must be one ASCII character|csvDelimiter cannot be/,
        JSON.stringify(bad),
      );
    }
  });
  notTextCases(t);
  numberRangeCases(t);
}
