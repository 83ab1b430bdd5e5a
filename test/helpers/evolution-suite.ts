/**
 * Schema evolution (`schemaEvolution: 'addColumns'`) and source columns (`sourceColumns`), end to
 * end on any database: part of the protocol suite, so they run on hyperd and PostgreSQL, and on
 * Node, Deno and Bun.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { openWatcher, startWatching, stopWatching } from '../../src/api.ts';
import type { WatchOptions } from '../../src/options.ts';
import type { WatcherStats } from '../../src/observe/stats.ts';
import { csv, drop, failedEntries, leftovers, waitFor } from './drop.ts';
import { columnsOf, count } from './env.ts';
import type { WatchBench } from './watch-bench.ts';
import { ROOT } from './root.ts';

const SAMPLE_PARQUET = join(ROOT, 'test', 'fixtures', 'sample.parquet');

async function report(dir: string, name: string): Promise<{ code: string; message: string; hint: string; column?: string }> {
  return JSON.parse(await readFile(join(dir, 'failed', `${name}.error`), 'utf8'));
}

function arrowFile(columns: Record<string, unknown>): Uint8Array {
  return tableToIPC(tableFromArrays(columns as Parameters<typeof tableFromArrays>[0]), 'stream');
}

export function evolutionCases(t: WatchBench): void {
  /** Processes the ready files of `dir` once, then stops: the stats of that run. */
  const once = async (dir: string, table: string, options: WatchOptions): Promise<WatcherStats> => {
    await startWatching(dir, table, options);
    return (await stopWatching(dir, { registry: t.registry })).stats;
  };

  it('schema evolution off (the default): a file with a column the table lacks fails, naming it and the option that would add \
it', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'a.csv', csv('id,name', [[1, 'ann']]));
    assert.equal((await once(dir, table, opts)).filesIngested, 1);
    await drop(dir, 'b.csv', csv('id,name,extra', [[2, 'bob', 'x']]));
    const stats = await once(dir, table, opts);
    assert.equal(stats.filesFailed, 1);
    assert.equal(stats.columnsAdded, 0);
    const error = await report(dir, 'b.csv');
    assert.equal(error.code, 'UNKNOWN_COLUMN');
    assert.equal(error.column, 'extra');
    assert.match(error.hint, /--schema-evolution add-columns/);
    assert.deepEqual(await columnsOf(t.pool, table), ['id bigint', 'name text']);
  });

  it('addColumns: each format adds the columns it brings (nullable, typed as for a new table); earlier rows read NULL; each \
added column is counted once', async () => {
    const { dir, table, opts } = await t.inbox();
    const options = { ...opts, schemaEvolution: 'addColumns' as const };
    await drop(dir, 'a.csv', csv('id,name', [[1, 'ann']]));
    assert.equal((await once(dir, table, options)).filesIngested, 1);
    await drop(dir, 'b.csv', csv('id,name,amount', [[2, 'bob', 7]]));
    await drop(dir, 'c.jsonl', `${JSON.stringify({ id: 3, Name: 'cy', flag: true })}\n`);
    await drop(dir, 'd.arrow', arrowFile({ id: BigInt64Array.from([4n]), note: ['from arrow'] }));
    await drop(dir, 'e.parquet', await readFile(SAMPLE_PARQUET));
    const handle = await openWatcher(dir, table, { ...options, batchFiles: 1, maxConcurrent: 1 });
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 4, 'the four files');
    const stats = (await stopWatching(dir, { registry: t.registry })).stats;
    assert.equal(stats.filesFailed, 0, JSON.stringify(stats.lastError));
    assert.equal(stats.columnsAdded, 5, 'amount, flag, note, score, day');
    const columns = await columnsOf(t.pool, table);
    assert.deepEqual(columns?.slice(0, 2), ['id bigint', 'name text']);
    for (const added of ['amount bigint', 'flag boolean', 'score numeric(12,1)', 'day date'])
      assert.ok(columns?.includes(added), `${added} in ${columns}`);
    assert.ok(
      columns?.some((c) => c.startsWith('note ')),
      `note in ${columns}`,
    );
    assert.equal(await count(t.pool, table), 4 + 25);
    const rows = await t.pool.query<{ id: string; amount: string | null; flag: boolean | null }>(
      `SELECT id, amount, flag FROM ${table} WHERE score IS NULL AND id <= 3 ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.amount === null ? null : Number(r.amount), r.flag]),
      [
        [1, null, null],
        [2, 7, null],
        [3, null, true],
      ],
    );
  });

  it('addColumns: many files adding the same column at once all land, and the column is added once', async () => {
    const { dir, table, opts } = await t.inbox();
    const added: Record<string, unknown>[] = [];
    const logger = {
      debug() {},
      warn() {},
      error() {},
      info: (message: string, fields?: Record<string, unknown>) => (message === 'added column' ? added.push(fields ?? {}) : undefined),
    };
    const options = { ...opts, schemaEvolution: 'addColumns' as const, batchFiles: 1, maxConcurrent: 4, logger };
    await drop(dir, 'first.csv', csv('id', [[0]]));
    assert.equal((await once(dir, table, options)).filesIngested, 1);
    await Promise.all(Array.from({ length: 12 }, (_, i) => drop(dir, `f${i}.csv`, csv('id,extra', [[i + 1, `x${i}`]]))));
    const stats = await once(dir, table, options);
    assert.equal(stats.filesIngested, 12, JSON.stringify(stats.lastError));
    assert.equal(stats.columnsAdded, 1);
    assert.equal(added.length, 1, 'logged once');
    assert.equal(added[0]!.column, 'extra');
    assert.equal(added[0]!.type, 'text');
    assert.deepEqual(await columnsOf(t.pool, table), ['id bigint', 'extra text']);
    assert.equal(await count(t.pool, table, 'extra IS NOT NULL'), 12);
    assert.deepEqual(await leftovers(dir), []);
  });

  it('addColumns: small files committed together, some bringing new columns and some not, all land', async () => {
    const { dir, table, opts } = await t.inbox();
    const options = { ...opts, schemaEvolution: 'addColumns' as const };
    await drop(dir, 'first.csv', csv('id', [[0]]));
    assert.equal((await once(dir, table, options)).filesIngested, 1);
    for (let i = 1; i <= 30; i++) {
      const header = i % 3 === 0 ? 'id,wide' : i % 3 === 1 ? 'id' : 'id,other';
      await drop(dir, `s${i}.csv`, csv(header, [header === 'id' ? [i] : [i, `v${i}`]]));
    }
    const stats = await once(dir, table, options);
    assert.equal(stats.filesIngested, 30, JSON.stringify(stats.lastError));
    assert.equal(stats.columnsAdded, 2);
    assert.equal(await count(t.pool, table), 31);
    assert.equal(await count(t.pool, table, 'wide IS NOT NULL'), 10);
    assert.equal(await count(t.pool, table, 'other IS NOT NULL'), 10);
  });

  it('addColumns: a file that fails after adding a column leaves a table later files load into, with or without that column', async () => {
    const { dir, table, opts } = await t.inbox();
    const options = { ...opts, schemaEvolution: 'addColumns' as const, batchFiles: 1, maxConcurrent: 1 };
    await drop(dir, 'a.csv', csv('id', [[1]]));
    assert.equal((await once(dir, table, options)).filesIngested, 1);
    await drop(
      dir,
      'bad.csv',
      csv('id,extra', [
        [2, 5],
        ['not-a-number', 6],
      ]),
    );
    const failed = await once(dir, table, options);
    assert.equal(failed.filesFailed, 1);
    assert.ok((await failedEntries(dir)).includes('bad.csv.error'));
    assert.equal((await report(dir, 'bad.csv')).code, 'DB_22P02');
    assert.equal(await count(t.pool, table), 1, 'nothing of the failed file');
    await drop(dir, 'b.csv', csv('id,extra', [[3, 7]]));
    await drop(dir, 'c.csv', csv('id', [[4]]));
    const later = await once(dir, table, options);
    assert.equal(later.filesIngested, 2, JSON.stringify(later.lastError));
    const rows = await t.pool.query<{ id: string; extra: string | null }>(`SELECT id, extra FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r.extra === null ? null : Number(r.extra)]),
      [
        [1, null],
        [3, 7],
        [4, null],
      ],
    );
  });

  it('addColumns: types come from the head of the file; a later value that does not fit fails the file, as does a JSON key \
first seen past the sample', async () => {
    const { dir, table, opts } = await t.inbox();
    const options = { ...opts, schemaEvolution: 'addColumns' as const, batchFiles: 1, maxConcurrent: 1 };
    await drop(dir, 'a.csv', csv('id', [[1]]));
    assert.equal((await once(dir, table, options)).filesIngested, 1);
    const rows = Array.from({ length: 2500 }, (_, i) => [i + 10, i < 2400 ? i : 'late text']);
    await drop(dir, 'narrow.csv', csv('id,n', rows));
    const records = Array.from({ length: 1100 }, (_, i) => JSON.stringify(i < 1050 ? { id: 5000 + i } : { id: 5000 + i, late: 'x' })).join(
      '\n',
    );
    await drop(dir, 'late.jsonl', `${records}\n`);
    const stats = await once(dir, table, options);
    assert.equal(stats.filesFailed, 2);
    assert.equal((await report(dir, 'narrow.csv')).code, 'DB_22P02');
    const late = await report(dir, 'late.jsonl');
    assert.equal(late.code, 'UNKNOWN_COLUMN');
    assert.equal(late.column, 'late');
    assert.equal(await count(t.pool, table), 1);
  });

  it("source columns: every row carries its own file's name, claim id and transaction time, in every format and in groups of \
small files", async () => {
    const { dir, table, opts } = await t.inbox();
    const sourceColumns = { file: '_source_file', claim: '_claim_id', committed: '_committed_at' };
    // Grouped small CSV files; one with a quoted line break and CRLF line ends.
    for (let i = 0; i < 8; i++)
      await drop(
        dir,
        `g${i}.csv`,
        csv('id,name', [
          [i * 10, `n${i}`],
          [i * 10 + 1, `m${i}`],
        ]),
      );
    await drop(dir, 'crlf "q".csv', 'id,name\r\n100,"two\r\nlines"\r\n101,plain\r\n');
    await drop(dir, 'j.json', JSON.stringify([{ id: 200, name: 'json' }]));
    await drop(dir, 'k.arrow', arrowFile({ id: BigInt64Array.from([300n]), name: ['arrow'] }));
    const before = Date.now();
    const stats = await once(dir, table, { ...opts, sourceColumns });
    assert.equal(stats.filesFailed, 0, JSON.stringify(stats.lastError));
    assert.equal(stats.filesIngested, 11);
    const columns = await columnsOf(t.pool, table);
    assert.deepEqual(columns?.slice(0, 4), ['id bigint', 'name text', '_source_file text', '_claim_id text']);
    assert.match(columns?.[4] ?? '', /^_committed_at (timestamptz|timestamp with time zone)$/);
    const rows = await t.pool.query<{ id: string; name: string; _source_file: string; _claim_id: string; committed: string }>(
      `SELECT id, name, _source_file, _claim_id, CAST(_committed_at AS TEXT) AS committed FROM ${table} ORDER BY id`,
    );
    assert.equal(rows.length, 20);
    const expected = (id: number) =>
      id < 100 ? `g${Math.floor(id / 10)}.csv` : id < 200 ? 'crlf "q".csv' : id < 300 ? 'j.json' : 'k.arrow';
    for (const r of rows) assert.equal(r._source_file, expected(Number(r.id)), `row ${r.id}`);
    assert.deepEqual(
      rows.filter((r) => Number(r.id) >= 100 && Number(r.id) < 200).map((r) => r.name),
      ['two\r\nlines', 'plain'],
    );
    const ledger = await t.pool.query<{ claim_id: string; file_name: string }>(
      `SELECT claim_id, file_name FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}'`,
    );
    const claimOf = new Map(ledger.map((l) => [l.file_name, l.claim_id]));
    for (const r of rows) assert.equal(r._claim_id, claimOf.get(r._source_file), `claim of row ${r.id}`);
    // The time of the file's transaction: one value for all its rows, taken during this run.
    const today = new Date(before).toISOString().slice(0, 10);
    for (const r of rows) assert.ok(r.committed.startsWith(today), `commit time of row ${r.id}: ${r.committed}`);
    for (const name of new Set(rows.map((r) => r._source_file)))
      assert.equal(new Set(rows.filter((r) => r._source_file === name).map((r) => r.committed)).size, 1, name);
    // One bad file's rows can be found, and deleted, by its name.
    assert.equal(await count(t.pool, table, `_source_file = 'g3.csv'`), 2);
  });

  it('source columns: a large Arrow file lands whole, every row named', async () => {
    const { dir, table, opts } = await t.inbox();
    const n = 200_000;
    await drop(
      dir,
      'big.arrow',
      arrowFile({ id: BigInt64Array.from({ length: n }, (_, i) => BigInt(i)), name: Array.from({ length: n }, (_, i) => `n${i % 100}`) }),
    );
    const stats = await once(dir, table, { ...opts, sourceColumns: { file: '_source_file' } });
    assert.equal(stats.rowsIngested, n, JSON.stringify(stats.lastError));
    assert.equal(await count(t.pool, table, `_source_file = 'big.arrow'`), n);
  });

  it('source columns: a Parquet file (read by the database, or decoded here) gets them too', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'sample.parquet', await readFile(SAMPLE_PARQUET));
    await drop(dir, 'more.parquet', await readFile(SAMPLE_PARQUET));
    const stats = await once(dir, table, { ...opts, sourceColumns: { file: '_source_file', claim: '_claim_id' }, batchFiles: 1 });
    assert.equal(stats.rowsIngested, 50, JSON.stringify(stats.lastError));
    assert.equal(await count(t.pool, table, `_source_file = 'sample.parquet' AND _claim_id IS NOT NULL`), 25);
    assert.equal(await count(t.pool, table, `_source_file = 'more.parquet' AND _claim_id IS NOT NULL`), 25);
  });

  it('source columns: an existing table without them fails the file with the fix, or gets them with addColumns; a file column \
of the same name is refused', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'a.csv', csv('id', [[1]]));
    assert.equal((await once(dir, table, opts)).filesIngested, 1);
    const sourceColumns = { file: '_source_file' };
    await drop(dir, 'b.csv', csv('id', [[2]]));
    const refused = await once(dir, table, { ...opts, sourceColumns });
    assert.equal(refused.filesFailed, 1);
    const error = await report(dir, 'b.csv');
    assert.equal(error.code, 'SOURCE_COLUMN_MISSING');
    assert.equal(error.column, '_source_file');
    assert.match(error.hint, /ALTER TABLE .* ADD COLUMN "_source_file" text/i);
    assert.match(error.hint, /--schema-evolution add-columns/);
    await drop(dir, 'c.csv', csv('id', [[3]]));
    await drop(dir, 'd.csv', csv('id,_Source_File', [[4, 'mine']]));
    const added = await once(dir, table, { ...opts, sourceColumns, schemaEvolution: 'addColumns', batchFiles: 1 });
    assert.equal(added.filesIngested, 1);
    assert.equal(added.columnsAdded, 1);
    assert.equal(added.filesFailed, 1);
    assert.equal((await report(dir, 'd.csv')).code, 'SOURCE_COLUMN_IN_FILE');
    const rows = await t.pool.query<{ id: string; _source_file: string | null }>(`SELECT id, _source_file FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r._source_file]),
      [
        [1, null],
        [3, 'c.csv'],
      ],
    );
  });

  it('rejects an unknown schemaEvolution and source columns sharing a name', async () => {
    const { dir, table, opts } = await t.inbox();
    await assert.rejects(
      startWatching(dir, table, { ...opts, schemaEvolution: 'addEverything' as never }),
      /schemaEvolution is "addEverything"/,
    );
    await assert.rejects(startWatching(dir, table, { ...opts, sourceColumns: { file: 'src', claim: 'SRC' } }), /"SRC" is given twice/);
  });
}
