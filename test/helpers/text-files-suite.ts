/**
 * CSV files other tools write with another delimiter (spreadsheets in locales with a decimal comma
 * export `;`-separated "CSV"), for any database (run by protocol-suite.ts: hyperd and PostgreSQL,
 * Node, Deno and Bun): with `csvDelimiter` they land value for value, alone and in groups; without
 * it they fail as CSV_DELIMITER before anything is loaded, instead of landing whole lines in one
 * column.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openWatcher, startWatching, stopWatching } from '../../src/api.ts';
import { drop, failedEntries, leftovers, waitFor } from './drop.ts';
import { count, sqlTypes } from './env.ts';
import { groupLogger, type WatchBench } from './watch-bench.ts';

/** A spreadsheet's "CSV UTF-8" export where the decimal separator is a comma: BOM, CRLF, `;`. */
const EXPORT = '\ufeffid;name;amount\r\n1;"Müller; Anna";1,5\r\n2;"O""Brien, Pat";2,25\r\n3;plain;\r\n';

async function report(dir: string, name: string): Promise<{ code: string; message: string; hint: string; line?: number }> {
  return JSON.parse(await readFile(join(dir, 'failed', `${name}.error`), 'utf8'));
}

export function csvDialectCases(t: WatchBench): void {
  it("csvDelimiter ';': a spreadsheet export (BOM, CRLF, ';' and commas inside quotes, decimal commas) lands value for value, alone and as a group; .tsv stays tab-separated", async () => {
    const { dir, table, opts } = await t.inbox();
    const logger = groupLogger();
    const semi = { ...opts, csvDelimiter: ';', logger };
    await drop(dir, 'export.csv', EXPORT);
    assert.equal((await startWatching(dir, table, semi)).filesIngested, 1);
    await stopWatching(dir, { registry: t.registry });
    const rows = await t.pool.query<{ id: number | string; name: string; amount: string | null }>(`SELECT id, name, amount FROM ${table} ORDER BY id`);
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
    for (const name of ['g0.csv', 'g1.csv', 'g2.csv', 'g3.csv', 'g4.csv', 'g5.csv', 'tabs.tsv']) await writeFile(join(dir, `${name}.ready`), '');
    const handle = await openWatcher(dir, table, semi);
    await waitFor(() => handle.stats.filesIngested === 7, 'the six grouped files and the .tsv');
    await handle.stop();
    assert.ok(logger.groups.some((g) => g > 1), `some files shared a transaction: ${logger.groups.join(', ')}`);
    const added = await t.pool.query<{ id: number | string; name: string; amount: string }>(`SELECT id, name, amount FROM ${table} WHERE id >= 10 ORDER BY id`);
    assert.deepEqual(
      added.map((r) => [Number(r.id), r.name, r.amount]),
      [...[0, 1, 2, 3, 4, 5].map((i) => [10 + i, `g; ${i}`, `${i},5`]), [20, 't;ab', '7']],
    );
    assert.deepEqual(await leftovers(dir), []);
  });

  it("without csvDelimiter, a ';'-separated .csv fails as CSV_DELIMITER before anything loads (with or without commas in it), alone and in a group; a one-column file still loads", async () => {
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

  it('a file not in UTF-8 (a spreadsheet saved in Windows-1252) and a line with too many fields fail naming the line and what to do', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'good.csv', 'id,city\n1,Bonn\n');
    await drop(dir, 'latin1.csv', new Uint8Array([...new TextEncoder().encode('id,city\n1,K'), 0xf6, ...new TextEncoder().encode('ln\n')]));
    await drop(dir, 'wide.csv', 'id,city\n2,Bonn\n3,Frankfurt, am Main\n');
    const stats = await startWatching(dir, table, { ...opts, batchFiles: 1 });
    await stopWatching(dir, { registry: t.registry });
    assert.equal(stats.filesIngested, 1);
    const latin1 = await report(dir, 'latin1.csv');
    assert.equal(latin1.code, 'DB_22021');
    assert.equal(latin1.line, 2);
    assert.match(latin1.hint, /not UTF-8.*Windows-1252.*CSV UTF-8/);
    const wide = await report(dir, 'wide.csv');
    assert.match(wide.code, /^DB_22/);
    assert.equal(wide.line, 3);
    assert.match(wide.hint, /more or fewer fields than the header.*--csv-delimiter/);
    assert.equal(await count(t.pool, table), 1);
  });

  it('csvDelimiter must be one character other than the quote or a line break', async () => {
    const { dir, table, opts } = await t.inbox();
    for (const bad of [';;', '', '"', '\n', 'é']) {
      await assert.rejects(openWatcher(dir, table, { ...opts, csvDelimiter: bad }), /csvDelimiter must be one ASCII character|csvDelimiter cannot be/, JSON.stringify(bad));
    }
  });
}
