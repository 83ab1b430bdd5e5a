/**
 * Small files committed in groups (one transaction, one ledger row per file), on a real embedded
 * hyperd: a bad file among good ones still fails alone with its own report, every good file lands
 * exactly once with its own row count, and a file whose data the group's COPY cannot tell apart
 * is settled on its own.
 */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { scanCsv } from '../../../plugins/csv/index.ts';
import { openWatcher, startWatching, stopWatching } from '../../../src/api.ts';
import type { FsAdapter } from '../../../src/types.ts';
import { csv, drop, failedEntries, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { count, hyperFixture } from '../../helpers/env.ts';
import { groupLogger, useWatchBench } from '../../helpers/watch-bench.ts';

const encoder = new TextEncoder();

describe('scanCsv: record counts the way a CSV parser splits records', () => {
  const cases: [string, string, number, boolean][] = [
    ['plain', 'a,b\n1,2\n3,4\n', 2, false],
    ['no final line break', 'a,b\n1,2\n3,4', 2, false],
    ['CRLF', 'a,b\r\n1,2\r\n3,4\r\n', 2, false],
    ['quoted line breaks, delimiters and quotes', 'a,b\n1,"x\ny"\n2,"say ""hi"", \r\n"\n', 2, false],
    ['empty fields', 'a,b\n,\n1,\n,2\n', 3, false],
    ['header only', 'a,b\n', 0, false],
    ['header without line break', 'a,b', 0, false],
    ['byte order mark', '\ufeffa,b\n1,2\n', 1, false],
    ['quote left open', 'a,b\n1,"x\n2,3\n', 0, true],
    ['quote inside an unquoted field', 'a,b\n1,x"y\n2,3\n', 0, true],
    ['text after a closing quote', 'a,b\n1,"x"y\n', 0, true],
    ['blank line', 'a,b\n1,2\n\n3,4\n', 1, true],
    ['lone carriage return', 'a,b\n1,2\r3,4\n', 0, true],
  ];
  for (const [name, text, records, irregular] of cases) {
    it(name, () => {
      const scan = scanCsv(encoder.encode(text));
      assert.equal(scan.irregular, irregular);
      if (!irregular) assert.equal(scan.records, records);
      assert.equal(scan.header, 'a,b');
    });
  }
  it('tab-separated: a comma is data', () => {
    const scan = scanCsv(encoder.encode('a\tb\n1,5\t"x\ty"\n'), 0x09);
    assert.deepEqual([scan.header, scan.records, scan.irregular], ['a\tb', 1, false]);
  });
});

describe('batched ingest on a real hyperd', () => {
  /** One hyperd and database for the suite; a fresh inbox and table per test. */
  const t = useWatchBench(hyperFixture, 'b');

  /** 1 + i % 7 rows for file i: ids i * 10 + r, so every file's rows and count are its own. */
  function goodFile(i: number): string {
    return csv(
      'id,file,label',
      Array.from({ length: 1 + (i % 7) }, (_, r) => [i * 10 + r, i, `"f${i}, row ${r}"`]),
    );
  }

  async function ledgerOf(table: string): Promise<Map<string, number[]>> {
    const rows = await t.pool.query<{ file_name: string; row_count: string }>(
      `SELECT file_name, row_count FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}'`,
    );
    const byName = new Map<string, number[]>();
    for (const r of rows) byName.set(r.file_name, [...(byName.get(r.file_name) ?? []), Number(r.row_count)]);
    return byName;
  }

  it('a bad file among 200 good ones fails alone with its own report; every good one lands once with its row count', async () => {
    const testStarted = Date.now();
    const { dir, table, opts } = await t.inbox();
    const logger = groupLogger();
    await drop(dir, 'f000.csv', goodFile(0));
    const handle = await openWatcher(dir, table, { ...opts, logger, maxConcurrent: 2 });
    const bad = 'id,file,label\n5000,500,ok\n5001,500,fine\n5002,not-a-number,bad\n';
    await Promise.all(
      Array.from({ length: 200 }, (_, k) => {
        const i = k + 1;
        return i === 137 ? drop(dir, 'f137-bad.csv', bad) : drop(dir, `f${String(i).padStart(3, '0')}.csv`, goodFile(i));
      }),
    );
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 201, 'all files settled', 60000);
    assert.ok(Math.max(...logger.groups) > 1, `files were committed in groups (largest ${Math.max(...logger.groups)})`);
    // The group holding the bad file knew which one it was (from the line, column and type the
    // server gave): it went alone at once, without splitting the group blindly.
    assert.ok(
      logger.splits.every((s) => s.index !== undefined),
      `every failed group named its bad file: ${JSON.stringify(logger.splits)}`,
    );
    assert.equal(handle.stats.filesFailed, 1);
    assert.equal(handle.stats.filesIngested, 200);
    assert.deepEqual(await failedEntries(dir), ['f137-bad.csv', 'f137-bad.csv.error', 'f137-bad.csv.ready']);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'f137-bad.csv.error'), 'utf8'));
    assert.equal(report.code, 'DB_22P02');
    assert.equal(report.line, 4);
    assert.equal(report.column, 2);
    assert.match(report.message, /^f137-bad\.csv: .*\(line 4, column 2 "file"\)$/);
    assert.equal(await readFile(join(dir, 'failed', 'f137-bad.csv'), 'utf8'), bad);

    const goods = Array.from({ length: 201 }, (_, i) => i).filter((i) => i !== 137);
    const expectedRows = goods.reduce((sum, i) => sum + 1 + (i % 7), 0);
    assert.equal(await count(t.pool, table), expectedRows);
    const distinct = await t.pool.query<{ n: string }>(`SELECT COUNT(DISTINCT id) AS n FROM ${table}`);
    assert.equal(Number(distinct[0]!.n), expectedRows, 'no row twice');
    assert.equal(await count(t.pool, table, 'file = 500'), 0, 'nothing of the bad file');
    // Each file's rows are the ones it carried, label included (quoted, with a comma).
    const perFile = await t.pool.query<{ file: string; n: string; labels: string }>(
      `SELECT file, COUNT(*) AS n, MIN(label) AS labels FROM ${table} GROUP BY file ORDER BY file`,
    );
    assert.deepEqual(
      perFile.map((r) => [Number(r.file), Number(r.n), r.labels]),
      goods.map((i) => [i, 1 + (i % 7), `f${i}, row 0`]),
    );
    const ledger = await ledgerOf(table);
    assert.equal(ledger.size, 200, 'one ledger row per good file');
    for (const i of goods) {
      const name = i === 0 ? 'f000.csv' : `f${String(i).padStart(3, '0')}.csv`;
      assert.deepEqual(ledger.get(name), [1 + (i % 7)], `ledger row of ${name}`);
    }
    assert.equal(ledger.has('f137-bad.csv'), false);
    // Group ledger rows go in by COPY with this process's clock; single ones with the server's.
    const times = await t.pool.query<{ first: Date; last: Date; sizes: string }>(
      `SELECT MIN(committed_at) AS first, MAX(committed_at) AS last, SUM(file_size) AS sizes FROM ` +
        `hyperwatch_internal.ingest_log WHERE target_table = '${table}'`,
    );
    const { first, last, sizes } = times[0]!;
    assert.ok(
      new Date(first).getTime() >= testStarted - 2000 && new Date(last).getTime() <= Date.now() + 2000,
      `committed_at ${String(first)} .. ${String(last)} is now`,
    );
    assert.ok(Number(sizes) > 200 * 10, 'file sizes recorded');
    assert.deepEqual(await leftovers(dir), []);
    await handle.stop();
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('groups files of every CSV shape and header order; several bad ones each fail alone', async () => {
    const { dir, table, opts } = await t.inbox();
    const logger = groupLogger();
    await drop(dir, 'a00-first.csv', 'id,name\n0,zero\n');
    const files: [string, string, number][] = [
      ['a01.csv', 'id,name\n1,one\n2,two\n', 2],
      ['a02-crlf.csv', 'id,name\r\n3,three\r\n4,four\r\n', 2],
      ['a03-no-final-break.csv', 'id,name\n5,five', 1],
      ['a04-quoted-break.csv', 'id,name\n6,"six\nlines"\n7,"say ""7"""\n', 2],
      ['a05-bom.csv', '\ufeffid,name\n8,eight\n', 1],
      ['a06-other-order.csv', 'name,id\nnine,9\nten,10\n', 2],
      ['a07-header-only.csv', 'id,name\n', 0],
      ['a08-blank-line.csv', 'id,name\n11,eleven\n\n12,twelve\n', -1],
      ['a09-open-quote.csv', 'id,name\n13,"thirteen\n', -1],
      ['a10-unknown-column.csv', 'id,nom\n14,quatorze\n', -1],
      ['a11.csv', 'id,name\n15,fifteen\n', 1],
      ['a12-bad-number.csv', 'id,name\nsixteen,16\n', -1],
      ['a13.csv', 'id,name\n17,seventeen\n18,eighteen\n19,nineteen\n', 3],
    ];
    // All present before the watcher starts: the initial sweep takes them as one group.
    for (const [name, content] of files) await drop(dir, name, content);
    const stats = await startWatching(dir, table, { ...opts, logger });
    assert.ok(Math.max(...logger.groups) > 1, 'files were committed in groups');
    const bad = files.filter(([, , rows]) => rows < 0).map(([name]) => name);
    assert.equal(stats.filesFailed, bad.length, JSON.stringify(stats.lastError));
    assert.deepEqual(
      (await failedEntries(dir)).filter((f) => f.endsWith('.error')),
      bad.map((name) => `${name}.error`),
    );
    const codes = await Promise.all(
      bad.map(async (name) => JSON.parse(await readFile(join(dir, 'failed', `${name}.error`), 'utf8')).code as string),
    );
    assert.equal(codes[bad.indexOf('a10-unknown-column.csv')], 'UNKNOWN_COLUMN');
    assert.equal(codes[bad.indexOf('a12-bad-number.csv')], 'DB_22P02');
    const rows = await t.pool.query<{ id: string; name: string }>(`SELECT id, name FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => `${r.id}:${r.name}`),
      [
        '0:zero',
        '1:one',
        '2:two',
        '3:three',
        '4:four',
        '5:five',
        '6:six\nlines',
        '7:say "7"',
        '8:eight',
        '9:nine',
        '10:ten',
        '15:fifteen',
        '17:seventeen',
        '18:eighteen',
        '19:nineteen',
      ],
    );
    const ledger = await ledgerOf(table);
    for (const [name, , expected] of files.filter(([, , r]) => r >= 0)) assert.deepEqual(ledger.get(name), [expected], name);
    assert.equal(ledger.size, 1 + files.length - bad.length);
    await stopWatching(dir, { registry: t.registry });
  });

  it('never holds a lone file back waiting for company: it is committed on its own', async () => {
    const { dir, table, opts } = await t.inbox();
    const logger = groupLogger();
    await drop(dir, 'first.csv', csv('id', [[1]]));
    const handle = await openWatcher(dir, table, { ...opts, logger });
    await drop(dir, 'lone.csv', csv('id', [[2], [3]]));
    await waitFor(() => handle.stats.filesIngested === 2, 'the lone file');
    assert.deepEqual(logger.groups, [1, 1]);
    await handle.stop();
  });

  it('groups a format without a multi-file path (JSON lines) file by file in one transaction', async () => {
    const { dir, table, opts } = await t.inbox();
    const logger = groupLogger();
    await drop(dir, 'j000.jsonl', '{"id":0}\n');
    // All there before the watcher starts: ready together whatever the timing, so they form groups.
    await Promise.all(
      Array.from({ length: 60 }, (_, k) => {
        const i = k + 1;
        return drop(dir, `j${String(i).padStart(3, '0')}.jsonl`, i === 30 ? '{"id":30}\n{"id":}\n' : `{"id":${i}}\n{"id":${i + 1000}}\n`);
      }),
    );
    const handle = await openWatcher(dir, table, { ...opts, logger });
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 61, 'all files settled', 60000);
    assert.ok(Math.max(...logger.groups) > 1, 'files were committed in groups');
    assert.deepEqual(await failedEntries(dir), ['j030.jsonl', 'j030.jsonl.error', 'j030.jsonl.ready']);
    assert.equal(JSON.parse(await readFile(join(dir, 'failed', 'j030.jsonl.error'), 'utf8')).line, 2);
    assert.equal(await count(t.pool, table), 1 + 59 * 2);
    const ledger = await ledgerOf(table);
    assert.equal(ledger.size, 60);
    assert.deepEqual(ledger.get('j001.jsonl'), [2]);
    await handle.stop();
  });

  it('sees a table changed behind its back: a new column is filled, not reported unknown', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, '1.csv', csv('id', [[1]]));
    const handle = await openWatcher(dir, table, opts);
    await drop(dir, '2.csv', csv('id', [[2]]));
    await waitFor(() => handle.stats.filesIngested === 2, 'two files');
    await t.pool.query(`ALTER TABLE ${table} ADD COLUMN note TEXT`);
    await drop(dir, '3.csv', csv('id,note', [[3, 'added']]));
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 3, 'third file');
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.equal(await count(t.pool, table, `note = 'added'`), 1);
    await handle.stop();
  });

  it('a group that meets a table changed behind its back is split, and every file lands with the new column', async () => {
    const { dir, table, opts } = await t.inbox();
    const logger = groupLogger();
    await drop(dir, '0.csv', csv('id', [[0]]));
    // No events: files are found only when the test asks for a rescan, all at once, in groups.
    const quiet: FsAdapter = { name: 'none', mayLoseEvents: true, subscribe: async () => ({ close: async () => {} }) };
    const handle = await openWatcher(dir, table, { ...opts, logger, fs: quiet, rescanIntervalMs: 3_600_000 });
    assert.equal(handle.stats.filesIngested, 1, 'the first file created the table');
    await drop(dir, '00.csv', csv('id', [[0]]));
    await handle.rescan();
    await waitFor(() => handle.stats.filesIngested === 2, 'a second file, whose transaction cached the columns');
    await t.pool.query(`ALTER TABLE ${table} ADD COLUMN note TEXT`);
    for (let i = 1; i <= 20; i++) await drop(dir, `${i}.csv`, csv('id,note', [[i, `note ${i}`]]));
    await handle.rescan();
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 22, 'all files settled');
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.ok(logger.splits.length > 0, 'a group failed on the cached columns and was split');
    assert.ok(Math.max(...logger.groups) > 1, 'its parts were committed as groups again');
    assert.equal(await count(t.pool, table, `note = 'note ' || id`), 20);
    await handle.stop();
  });

  it('recovers the claims a killed run left, in groups: committed ones only cleaned up, the rest ingested once', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'seed.csv', csv('id', [[-1]]));
    await (await openWatcher(dir, table, opts)).stop();
    const staging = join(dir, '.hyperwatch', 'staging');
    // 40 claims left by a "killed" run: the first 15 committed (in the ledger), the others not.
    const claims = Array.from({ length: 40 }, (_, i) => `0zzzzzzzz-${String(i).padStart(16, '0')}`);
    await t.pool.query(
      `INSERT INTO hyperwatch_internal.ingest_log (claim_id, file_name, file_size, row_count, target_table, directory, committed_at)
       VALUES ${claims
         .slice(0, 15)
         .map((id, i) => `('${id}', 'r${i}.csv', 1, 1, '${table}', 'x', CURRENT_TIMESTAMP)`)
         .join(', ')}`,
    );
    for (const [i, id] of claims.entries()) {
      await writeFile(join(staging, `${id}~r${i}.csv`), csv('id', [[i], [i + 100]]));
      await writeFile(join(staging, `${id}~r${i}.csv.ready`), '');
    }
    const logger = groupLogger();
    const again = await openWatcher(dir, table, { ...opts, logger });
    assert.equal(again.stats.recovered, 40);
    assert.equal(again.stats.filesIngested, 25);
    assert.ok(Math.max(...logger.groups) > 1, 'recovered files were committed in groups');
    assert.equal(await count(t.pool, table, 'id >= 0 AND id < 15'), 0, 'committed claims not ingested again');
    assert.equal(await count(t.pool, table, 'id >= 15'), 50);
    await again.stop();
    assert.deepEqual(await stagedEntries(dir), []);
  });
});
