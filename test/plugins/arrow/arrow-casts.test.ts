/**
 * Arrow files whose columns need a cast into the table (a wider type, another letter case) load
 * through a temporary table on Hyper. hyperd does not always read back in full what its own
 * transaction just copied, so a large file must still land every row, exactly once.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { makeVector, RecordBatch, Table, tableToIPC } from 'apache-arrow';
import { arrowIngester } from '../../../plugins/arrow/index.ts';
import type { Logger } from '../../../src/types.ts';
import { count } from '../../helpers/env.ts';
import { usePluginBench } from '../../helpers/plugin-bench.ts';

describe('arrow ingester: columns cast into the table', () => {
  const warnings: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (m) => void warnings.push(m), error() {} };
  const bench = usePluginBench(arrowIngester, { maxAttempts: 5, logger });

  function ints(rows: number): Table {
    const ids = new Int32Array(rows);
    for (let i = 0; i < rows; i++) ids[i] = i;
    const whole = new Table({ id: makeVector(ids) }).batches[0]!;
    const parts: RecordBatch[] = [];
    for (let start = 0; start < rows; start += 65_536) parts.push(whole.slice(start, Math.min(rows, start + 65_536)));
    return new Table(parts);
  }

  for (const rows of [1_000, 1_000_000]) {
    it(`lands all ${rows.toLocaleString('en')} Int32 rows in a BIGINT column, once`, async () => {
      const name = `widen_${rows}`;
      await bench.pool.query(`CREATE TABLE ${name} (id BIGINT)`);
      const file = await bench.claim(`${name}.arrow`, tableToIPC(ints(rows), 'stream'));
      const outcome = await bench.ingest(file, name);
      assert.equal(outcome.rows, rows);
      assert.equal(await count(bench.pool, name), rows);
      const [sum] = await bench.pool.query<{ s: string; d: string }>(
        `SELECT SUM(id)::text AS s, COUNT(DISTINCT id)::text AS d FROM ${name}`,
      );
      assert.equal(sum!.s, String((rows * (rows - 1)) / 2));
      assert.equal(sum!.d, String(rows));
    });
  }
});
