/**
 * Parquet files through a watcher on hyperd: valid files hyperd refuses land (decoded here, one
 * found out by trying), damaged ones fail alone, with what is wrong in their `.error`, and the
 * files beside them land. The ingester alone, file by file, is in conformance-parquet.test.ts.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startWatching, stopWatching } from '../../../src/api.ts';
import { silentLogger } from '../../../src/log.ts';
import { openDuckDb } from '../../helpers/conformance-parquet.ts';
import { type Hostile, miniParquet, plain } from '../../helpers/conformance-parquet-mini.ts';
import { drop } from '../../helpers/drop.ts';
import { count, hyperFixture } from '../../helpers/env.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

describe('Parquet through the watcher: no file stops the others', () => {
  const t = useWatchBench(hyperFixture, 'pw');

  it('valid files hyperd refuses land (one found out by trying), damaged ones fail alone with what is wrong', async () => {
    const { dir, table, opts } = await t.inbox();
    const duck = await openDuckDb();
    try {
      const brotli = join(dir, '..', 'brotli.parquet');
      await duck.conn.run(
        `COPY (SELECT range::INTEGER AS id, 'b' || range AS s FROM range(0, 3000)) TO '${brotli}' (FORMAT parquet, CODEC 'brotli')`,
      );
      await drop(dir, 'a-brotli.parquet', await readFile(brotli));
    } finally {
      duck.close();
    }
    const utf8 = (values: readonly string[]) => plain.bytes(values.map((v) => new TextEncoder().encode(v)));
    // A logical type from a newer spec on `id`: hyperd refuses the file (42804), found out by trying.
    const future = miniParquet(
      [
        { name: 'id', type: 1, logicalType: [{ id: 40, type: 'struct', value: [] }], data: plain.i32([5001, 5002]) },
        { name: 's', type: 6, convertedType: 0, data: utf8(['f1', 'f2']) },
      ],
      2,
    );
    await drop(dir, 'b-future.parquet', future);
    await drop(dir, 'c.csv', 'id,s\n6001,c1\n');
    const hostile = (h: Hostile) =>
      miniParquet(
        [
          { name: 'id', type: 1, data: plain.i32([1, 2]) },
          { name: 's', type: 6, convertedType: 0, data: utf8(['x', 'y']) },
        ],
        2,
        h,
      );
    await drop(dir, 'd-bad-values.parquet', hostile({ pageNumValues: 0x7fffffff, chunkNumValues: 0x7fffffff }));
    const footer = Buffer.from(hostile({}));
    footer.writeUInt32LE(0x7fffffff, footer.length - 8);
    await drop(dir, 'e-bad-footer.parquet', footer);

    const said: string[] = [];
    const logger = { ...silentLogger, info: (message: string) => void said.push(message) };
    const stats = await startWatching(dir, table, { ...opts, maxConcurrent: 2, logger });
    assert.equal(stats.filesIngested, 3, JSON.stringify(stats.lastError));
    assert.ok(
      said.some((m) => /^hyperd cannot read b-future\.parquet \(.*\); retrying with the file decoded by hyperwatch$/.test(m)),
      said.join('\n'),
    );
    assert.ok(
      said.some((m) => /decoding the Parquet file here: the database cannot read its BROTLI compression/.test(m)),
      said.join('\n'),
    );
    assert.equal(stats.filesFailed, 2);
    assert.equal(await count(t.pool, table), 3000 + 2 + 1);
    assert.deepEqual(
      [...(await t.pool.query(`SELECT id, s FROM ${table} WHERE id > 5000 ORDER BY id`))],
      [
        { id: 5001, s: 'f1' },
        { id: 5002, s: 'f2' },
        { id: 6001, s: 'c1' },
      ],
    );
    const report = async (name: string) =>
      JSON.parse(await readFile(join(dir, 'failed', `${name}.error`), 'utf8')) as { code: string; message: string; column?: string };
    const values = await report('d-bad-values.parquet');
    assert.equal(values.code, 'PARQUET_CORRUPT');
    assert.equal(values.column, 'id');
    assert.match(
      values.message,
      /d-bad-values\.parquet: the Parquet footer is damaged: column "id" of row group 0 holds 2147483647 values for the group's 2 rows/,
    );
    const bad = await report('e-bad-footer.parquet');
    assert.equal(bad.code, 'PARQUET_CORRUPT');
    assert.match(bad.message, /the footer length \(2147483647 bytes\) is larger than the file/);
    await stopWatching(dir, { registry: t.registry });
  });
});
