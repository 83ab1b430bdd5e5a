/**
 * The sentinel protocol end to end, on a real embedded hyperd: the shared protocol cases
 * (test/helpers/protocol-suite.ts, also run on PostgreSQL), and what only Hyper does.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { startWatching, stopWatching } from '../src/api.ts';
import { csv, drop, failedEntries } from './helpers/drop.ts';
import { hyperFixture } from './helpers/env.ts';
import { protocolCases } from './helpers/protocol-suite.ts';
import { useWatchBench } from './helpers/watch-bench.ts';

describe('watcher on a real hyperd', () => {
  /** One hyperd and database for the suite; a fresh inbox and table per test. */
  const t = useWatchBench(hyperFixture, 't');

  protocolCases(t, {
    description: () => `hyper ${join(t.root, 'test.hyper')} (embedded hyperd)`,
    // Hyper writes a database to disk only when it unloads it: a checkpoint does that.
    durableCommit: false,
    badNumberMessage: /^bad.csv: invalid input syntax .*\(line 3, column 2 "amount"\)$/,
  });

  // Hyper only: the Parquet file comes from hyperd's own COPY ... TO (PostgreSQL writes no
  // Parquet), and lands in the same table as the other formats.
  it('routes every format by extension into one table; bad files of each format fail alone', async () => {
    const { dir, table, opts } = await t.inbox();
    const parquetPath = `${dir}-mixed.parquet`;
    await t.pool.query(`COPY (SELECT CAST(g AS BIGINT) AS id, 'pq-' || g AS name FROM generate_series(1, 4) g) TO '${parquetPath}' WITH (FORMAT parquet)`);
    const parquet = await readFile(parquetPath);
    const arrow = tableToIPC(tableFromArrays({ id: BigInt64Array.from([5n, 6n]), name: ['ar-5', 'ar-6'] }), 'file');
    await drop(dir, 'a.csv', csv('id,name', [[0, 'csv-0']]));
    await drop(dir, 'b.parquet', parquet);
    await drop(dir, 'c.ARROW', arrow);
    await drop(dir, 'd.jsonl', '{"id":7,"name":"js-7"}\n{"name":"js-8","id":8}\n');
    await drop(dir, 'e.json', '[{"id":9,"name":"js-9"}]');
    await drop(dir, 'bad-empty.parquet', '');
    await drop(dir, 'bad-truncated.arrow', arrow.subarray(0, Math.floor(arrow.length / 2)));
    await drop(dir, 'bad-syntax.jsonl', '{"id":10,"name":"ok"}\n{"id":11,"name":}\n');
    await drop(dir, 'bad-object.json', '{"id":12,"name":"alone"}');
    const stats = await startWatching(dir, table, { ...opts, maxConcurrent: 2 });
    assert.equal(stats.filesIngested, 5, JSON.stringify(stats.lastError));
    assert.equal(stats.filesFailed, 4);
    const rows = await t.pool.query<{ id: string; name: string }>(`SELECT id, name FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => `${r.id}:${r.name}`),
      ['0:csv-0', '1:pq-1', '2:pq-2', '3:pq-3', '4:pq-4', '5:ar-5', '6:ar-6', '7:js-7', '8:js-8', '9:js-9'],
    );
    const failed = await failedEntries(dir);
    assert.deepEqual(failed.filter((f) => f.endsWith('.error')), ['bad-empty.parquet.error', 'bad-object.json.error', 'bad-syntax.jsonl.error', 'bad-truncated.arrow.error']);
    const syntax = JSON.parse(await readFile(join(dir, 'failed', 'bad-syntax.jsonl.error'), 'utf8'));
    assert.equal(syntax.line, 2);
    assert.equal(JSON.parse(await readFile(join(dir, 'failed', 'bad-empty.parquet.error'), 'utf8')).code, 'EMPTY_FILE');
    await stopWatching(dir, { registry: t.registry });
  });
});
