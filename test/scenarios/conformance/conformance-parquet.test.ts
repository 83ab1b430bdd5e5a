/**
 * Parquet conformance: files written at test time by other writers (DuckDB, arrow-rs through
 * parquet-wasm, hyperd's COPY TO, hand-written ones), each ingested by the real Parquet
 * ingester into a real hyperd on both paths (hyperd reads the file; the file is decoded here and
 * streamed) and, decoded here, into a real PostgreSQL, and compared value by value with DuckDB's
 * own reading of the file.
 *
 * Prints one line per case and path: `case | path | landed N rows, values match` or
 * `... | refused CODE: message`, with the time, the longest event-loop stall and memory growth.
 * Malformed files are in conformance-parquet-malformed.test.ts, Parquet files through a watcher in
 * conformance-parquet-watcher.test.ts.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { IngestError } from '../../../src/types.ts';
import {
  asReported,
  ensureDirOf,
  firstDifference,
  ingestFile,
  judge,
  landed,
  measured,
  type Outcome,
} from '../../helpers/conformance-parquet.ts';
import {
  BARE_JS,
  describeRefusal,
  MAX_CASE_MS,
  MAX_EVENT_LOOP_STALL_MS,
  MAX_RSS_GROWTH_MIB,
  useParquetBench,
} from '../../helpers/conformance-parquet-bench.ts';
import { duckdbCases, type Expectation, hyperCases, type WriterCase } from '../../helpers/conformance-parquet-cases.ts';
import { parquetWasmCases } from '../../helpers/conformance-parquet-wasm.ts';
import { handWrittenCases } from '../../helpers/conformance-parquet-hand.ts';

function checkRefusal(error: IngestError, expected: Extract<Expectation, { refused: unknown }>['refused'], file: string): void {
  assert.equal(error.kind, expected.kind, error.message);
  assert.equal(error.code, expected.code, error.message);
  if (expected.column !== undefined) assert.equal(error.column, expected.column, error.message);
  assert.match(asReported(error.message, file), expected.mentions);
  assert.doesNotMatch(error.message, BARE_JS);
}

describe('Parquet conformance: files other writers make', () => {
  const bench = useParquetBench();
  const duckdb = () => bench.duckdb();

  async function run(c: WriterCase): Promise<void> {
    const path = join(bench.root(), 'cases', `${c.name.replace(/[^a-z0-9]+/gi, '-')}.parquet`);
    await ensureDirOf(path);
    await c.write(path);
    const expected = 'lands' in c.expect ? (c.stated ?? (await judge(duckdb(), c.judgeVia ? await c.judgeVia(path) : path))) : undefined;
    for (const { label, fixture, capabilities, utcSession } of bench.paths) {
      const table = bench.table('case');
      const db = fixture();
      const run = await measured(() => ingestFile(db.pool, db.root, path, table, capabilities, (t) => db.db.sqlType(t)));
      const outcome: Outcome = run.value;
      let line: string;
      if (outcome.ok) {
        assert.ok(expected, `${c.name} (${label}) should have been refused, but landed ${outcome.rows} rows`);
        const difference = firstDifference(expected, await landed(db.pool, table, expected, { utcSession }));
        line = difference ? `landed ${outcome.rows} rows, VALUES DIFFER: ${difference}` : `landed ${outcome.rows} rows, values match`;
        if (capabilities.readsLocalFiles) line += ` (${outcome.via})`;
        console.log(
          `${c.name} | ${label} | ${line} | ${run.ms.toFixed(0)} ms, stall ${run.maxBlockMs.toFixed(0)} ms, ` +
            `+${run.rssGrowthMiB.toFixed(0)} MiB`,
        );
        assert.equal(difference, undefined, `${c.name} (${label})`);
        assert.equal(outcome.rows, expected.rows.length);
      } else {
        line = describeRefusal(outcome.error, path);
        console.log(
          `${c.name} | ${label} | ${line} | ${run.ms.toFixed(0)} ms, stall ${run.maxBlockMs.toFixed(0)} ms, ` +
            `+${run.rssGrowthMiB.toFixed(0)} MiB`,
        );
        assert.ok('refused' in c.expect, `${c.name} (${label}) should land but was ${line}`);
        checkRefusal(outcome.error, c.expect.refused, path);
      }
      assert.ok(run.ms < MAX_CASE_MS, `${c.name} (${label}) took ${run.ms} ms`);
      assert.ok(run.maxBlockMs < MAX_EVENT_LOOP_STALL_MS, `${c.name} (${label}) stalled the event loop ${run.maxBlockMs} ms`);
      assert.ok(run.rssGrowthMiB < MAX_RSS_GROWTH_MIB, `${c.name} (${label}) grew memory by ${run.rssGrowthMiB} MiB`);
    }
  }

  describe('DuckDB', () => {
    for (const c of duckdbCases(duckdb)) it(c.name, () => run(c));
  });
  describe('arrow-rs (parquet-wasm)', () => {
    for (const c of parquetWasmCases()) it(c.name, () => run(c));
  });
  describe('hyperd', () => {
    for (const c of hyperCases(() => bench.hyperPool())) it(c.name, () => run(c));
  });
  describe('hand-written (Spark and newer spec features)', () => {
    for (const c of handWrittenCases()) it(c.name, () => run(c));
  });
});
