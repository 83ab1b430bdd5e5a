/**
 * CSV with source columns on hyperd, where the server reads the claimed file itself
 * (`INSERT BULK INTO ... SELECT ..., 'name' FROM external(...)`): large files land whole with
 * every row named, several bulk loads share one transaction, a failed file or group leaves none
 * of its rows behind, and errors name the line and the column. Real hyperd, real watcher.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startWatching, stopWatching } from '../../../src/api.ts';
import type { WatchOptions } from '../../../src/options.ts';
import type { WatcherStats } from '../../../src/observe/stats.ts';
import { drop } from '../../helpers/drop.ts';
import { count, hyperFixture } from '../../helpers/env.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

/** `rows` data lines `id,name,amount` with ids from `first`; the name field is quoted and holds a comma. */
function bigCsv(rows: number, first = 0, bad?: { line: number; amount: string }): string {
  const lines = ['id,name,amount'];
  for (let i = 0; i < rows; i++) {
    // Line numbers count the header as line 1.
    const amount = bad && bad.line === i + 2 ? bad.amount : ((first + i) * 0.5).toFixed(1);
    lines.push(`${first + i},"n ${(first + i) % 97}, x",${amount}`);
  }
  return `${lines.join('\n')}\n`;
}

async function report(dir: string, name: string): Promise<{ code: string; message: string; hint: string; line?: number; column?: string }> {
  return JSON.parse(await readFile(join(dir, 'failed', `${name}.error`), 'utf8'));
}

describe('CSV with source columns, read by hyperd itself', () => {
  const t = useWatchBench(() => hyperFixture(), 'csv_source_');
  const once = async (dir: string, table: string, options: WatchOptions): Promise<WatcherStats> => {
    await startWatching(dir, table, options);
    return (await stopWatching(dir, { registry: t.registry })).stats;
  };
  // Past the first bulk chunk hyperd keeps (about 82,000 rows): a partial load would show.
  const N = 150_000;

  it('large files land whole, each row with its own file name and claim, several of them in one run', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'one.csv', bigCsv(N, 0));
    await drop(dir, 'it\'s "two".csv', bigCsv(N, N));
    await drop(dir, 'three.tsv', `id\tname\tamount\n${Array.from({ length: 1000 }, (_, i) => `${2 * N + i}\tt${i}\t${i}.5`).join('\n')}\n`);
    const stats = await once(dir, table, { ...opts, sourceColumns: { file: '_source_file', claim: '_claim_id' } });
    assert.equal(stats.filesFailed, 0, JSON.stringify(stats.lastError));
    assert.equal(stats.rowsIngested, 2 * N + 1000);
    assert.equal(await count(t.pool, table), 2 * N + 1000);
    assert.equal(await count(t.pool, table, `_source_file = 'one.csv' AND id < ${N}`), N);
    assert.equal(await count(t.pool, table, `_source_file = 'it''s "two".csv' AND id >= ${N} AND id < ${2 * N}`), N);
    assert.equal(await count(t.pool, table, `_source_file = 'three.tsv' AND id >= ${2 * N}`), 1000);
    const ledger = await t.pool.query<{ claim_id: string; file_name: string; row_count: string | number }>(
      `SELECT claim_id, file_name, row_count FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}'`,
    );
    assert.equal(ledger.length, 3);
    for (const entry of ledger) {
      assert.equal(await count(t.pool, table, `_claim_id = '${entry.claim_id}'`), Number(entry.row_count), entry.file_name);
    }
    // The quoted field with a comma arrived as it was written.
    const sample = await t.pool.query<{ name: string }>(`SELECT name FROM ${table} WHERE id = 98`);
    assert.equal(sample[0]?.name, 'n 1, x');
  });

  it('a value that does not convert fails the file naming its line and column, and leaves none of its rows; the fixed file \
then loads once', async () => {
    const { dir, table, opts } = await t.inbox();
    const options = { ...opts, sourceColumns: { file: '_source_file' } };
    await drop(dir, 'seed.csv', bigCsv(10, 0));
    assert.equal((await once(dir, table, options)).filesIngested, 1);
    const line = N - 5;
    await drop(dir, 'big.csv', bigCsv(N, 1000, { line, amount: 'lots' }));
    const failed = await once(dir, table, options);
    assert.equal(failed.filesFailed, 1);
    const error = await report(dir, 'big.csv');
    assert.match(error.message, new RegExp(`line:? ?${line}\\b`));
    assert.match(error.message, /amount/);
    assert.equal(await count(t.pool, table, `_source_file = 'big.csv'`), 0);
    await drop(dir, 'big.csv', bigCsv(N, 1000));
    assert.equal((await once(dir, table, options)).filesIngested, 1);
    assert.equal(await count(t.pool, table, `_source_file = 'big.csv'`), N);
    assert.equal(await count(t.pool, table), N + 10);
  });

  it('a group of small files with a bad one: the good ones are loaded exactly once, each row with its own name', async () => {
    const { dir, table, opts } = await t.inbox();
    const options = { ...opts, sourceColumns: { file: '_source_file' } };
    await drop(dir, 'seed.csv', bigCsv(1, 0));
    assert.equal((await once(dir, table, options)).filesIngested, 1);
    for (let i = 0; i < 6; i++) await drop(dir, `g${i}.csv`, i === 3 ? bigCsv(3, 100 * i, { line: 3, amount: 'x' }) : bigCsv(3, 100 * i));
    const stats = await once(dir, table, { ...options, batchFiles: 10 });
    assert.equal(stats.filesIngested, 5, JSON.stringify(stats.lastError));
    assert.equal(stats.filesFailed, 1);
    for (let i = 0; i < 6; i++) assert.equal(await count(t.pool, table, `_source_file = 'g${i}.csv'`), i === 3 ? 0 : 3, `g${i}.csv`);
    assert.equal(await count(t.pool, table), 16);
  });

  it('with bad rows skipped and columns added, the good rows of a large file are named too', async () => {
    const { dir, table, opts } = await t.inbox();
    const options = {
      ...opts,
      sourceColumns: { file: '_source_file' },
      onBadRows: 'skip' as const,
      maxBadRows: 5,
      schemaEvolution: 'addColumns' as const,
    };
    await drop(dir, 'seed.csv', 'id,name\n1,a\n');
    assert.equal((await once(dir, table, options)).filesIngested, 1);
    await drop(dir, 'wide.csv', bigCsv(N, 10, { line: N - 100, amount: 'none' }));
    const stats = await once(dir, table, options);
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.equal(stats.columnsAdded, 1);
    assert.equal(await count(t.pool, table, `_source_file = 'wide.csv'`), N - 1);
    assert.equal(await count(t.pool, table, `_source_file = 'wide.csv' AND amount IS NOT NULL`), N - 1);
  });
});
