/**
 * Conformance of the Arrow reader with files other writers make, at test time: Hyper's own
 * `COPY ... TO (FORMAT arrowstream)`, apache-arrow JS, arrow-rs (through parquet-wasm), LZ4 and
 * ZSTD body compression from real compressors, big-endian copies, and damaged files. Each case is
 * loaded into a real hyperd through the Arrow ingester, as the watcher runs it, through ARROWSTREAM
 * and through CSV (the path of databases without ARROWSTREAM), and then:
 * - a case meant to land must land with the writer's rows and values (the writer's data read back
 *   with apache-arrow is the judge);
 * - a case meant to be refused must be refused with its code, naming the column where it is in one,
 *   and land nothing;
 * - no case may hold the event loop for a second or more, nor grow the process by `MEMORY_BOUND`.
 * One line per case and path is printed as a report.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type Table, tableFromIPC } from 'apache-arrow';
import { arrowIngester } from '../plugins/arrow/index.ts';
import type { Logger } from '../src/types.ts';
import { damagedStreams, unknownTypeStreams } from './helpers/conformance-arrow-damage.ts';
import { toBigEndian } from './helpers/conformance-arrow-ipc.ts';
import { expectedRows, judge } from './helpers/conformance-arrow-judge.ts';
import {
  allNullTable, arrowRsStream, compressedIpc, dictionaryTable, inBatches, ipc, largeOffsetsTable, manyTypes, nestedTable, plainTable, rewrittenTable, sharedDictionaryTable,
} from './helpers/conformance-arrow-writers.ts';
import { usePluginBench } from './helpers/plugin-bench.ts';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
/** Longest the event loop may be held while one case is read. */
const LOOP_BOUND_MS = 1000;
/** Most the process may grow (peak RSS over the start) while one case is read. */
const MEMORY_BOUND = 512 * 1024 * 1024;
const REFUSAL_CODES = /^(ARROW_CORRUPT|ARROW_TRUNCATED|ARROW_NOT_IPC|ARROW_UNSUPPORTED|ARROW_UNSUPPORTED_TYPE|ARROW_BATCH_TOO_LARGE|EMPTY_FILE)$/;

interface Case {
  readonly name: string;
  readonly bytes: () => Uint8Array | Promise<Uint8Array>;
  /** The writer's data (to land), or the refusal expected. */
  readonly judge?: (bytes: Uint8Array) => Table;
  readonly refuse?: { readonly code: RegExp; readonly column?: string };
}

/** Samples the event loop's longest pause and the peak RSS until stopped. */
function probe(): () => { gapMs: number; growth: number } {
  const start = process.memoryUsage().rss;
  let peak = start;
  let last = performance.now();
  let gap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  return () => {
    clearInterval(timer);
    gap = Math.max(gap, performance.now() - last);
    return { gapMs: gap, growth: Math.max(peak, process.memoryUsage().rss) - start };
  };
}

const writerData = (table: () => Table) => () => table();
const ownReading = (bytes: Uint8Array): Table => tableFromIPC(bytes);

function validCases(): Case[] {
  const cases: Case[] = [];
  const lands = (name: string, table: () => Table, bytes: (t: Table) => Uint8Array | Promise<Uint8Array>): void => {
    cases.push({ name, bytes: () => bytes(table()), judge: writerData(table) });
  };
  lands('apache-arrow stream, one batch of 200k rows', () => plainTable(200_000), (t) => ipc(t, 'stream'));
  lands('apache-arrow file, one batch of 200k rows to rewrite (dictionary, list, large text, ns)', () => rewrittenTable(200_000), (t) => ipc(t, 'file'));
  lands('apache-arrow file, 100 batches of 500 rows', () => inBatches(plainTable(50_000), 500), (t) => ipc(t, 'file'));
  lands('apache-arrow stream, dictionary replaced per batch', dictionaryTable, (t) => ipc(t, 'stream'));
  lands('apache-arrow file, one dictionary over 3 batches', sharedDictionaryTable, (t) => ipc(t, 'file'));
  lands('apache-arrow stream, nested list/struct/map', nestedTable, (t) => ipc(t, 'stream'));
  lands('apache-arrow file, large offsets (LargeUtf8, LargeBinary, LargeList)', largeOffsetsTable, (t) => ipc(t, 'file'));
  lands('apache-arrow stream, all-null columns', allNullTable, (t) => ipc(t, 'stream'));
  lands('apache-arrow stream, no record batches', () => plainTable(0), (t) => ipc(t, 'stream'));
  lands('apache-arrow file, no record batches', () => plainTable(0), (t) => ipc(t, 'file'));
  lands('apache-arrow file, many types', manyTypes, (t) => ipc(t, 'file'));
  lands('apache-arrow stream ended by closing (no end-of-stream marker)', manyTypes, (t) => ipc(t, 'stream').slice(0, -8));
  for (const codec of ['lz4', 'zstd'] as const) {
    lands(`apache-arrow file, ${codec} body compression, 4 batches`, () => inBatches(plainTable(40_000), 10_000), (t) => compressedIpc(t, codec, 'file'));
    lands(`apache-arrow stream, ${codec} body compression, many types`, manyTypes, (t) => compressedIpc(t, codec, 'stream'));
  }
  lands('big-endian stream, many types', manyTypes, (t) => toBigEndian(ipc(t, 'stream')));
  lands('big-endian stream, nested list/struct/map', nestedTable, (t) => toBigEndian(ipc(t, 'stream')));
  lands('big-endian stream, dictionary', dictionaryTable, (t) => toBigEndian(ipc(t, 'stream')));
  lands('big-endian stream, large offsets', largeOffsetsTable, (t) => toBigEndian(ipc(t, 'stream')));
  lands('big-endian stream, 3 batches of 10k rows', () => inBatches(plainTable(30_000), 10_000), (t) => toBigEndian(ipc(t, 'stream')));
  cases.push({ name: 'arrow-rs stream (via parquet-wasm), 20k rows', bytes: () => arrowRsStream(plainTable(20_000)), judge: ownReading });
  cases.push({ name: 'arrow-rs stream (via parquet-wasm), nested', bytes: () => arrowRsStream(nestedTable()), judge: ownReading });
  return cases;
}

function refusedCases(): Case[] {
  return [...damagedStreams(), ...unknownTypeStreams()].map((d) => ({ name: d.name, bytes: () => d.bytes, refuse: { code: d.code, ...(d.column === undefined ? {} : { column: d.column }) } }));
}

describe('Arrow conformance: files other writers make', () => {
  const bench = usePluginBench(arrowIngester, { maxAttempts: 3, logger: quiet });
  const report: string[] = [];
  after(() => console.log(`Arrow conformance report (case [path] | outcome):\n${report.join('\n')}`));
  let serial = 0;

  async function check(c: Case, bytes: Uint8Array, claimName?: string): Promise<void> {
    for (const path of ['arrowstream', 'csv'] as const) {
      const table = `conf_${++serial}`;
      const name = claimName && path === 'arrowstream' ? claimName : `conf-${serial}.arrow`;
      const file = claimName && path === 'arrowstream' ? await bench.claim(name) : await bench.claim(name, bytes);
      const stop = probe();
      const outcome = await bench.ingest(file, table, { remote: path === 'csv' });
      const { gapMs, growth } = stop();
      const bounds = `loop gap ${gapMs.toFixed(0)} ms, +${(growth / 1048576).toFixed(0)} MiB`;
      const label = `${c.name} [${path}]`;
      if (outcome.error) {
        report.push(`${label} | refused ${outcome.error.code}: ${outcome.error.message} (${bounds})`);
      } else {
        report.push(`${label} | landed ${outcome.rows} rows${c.judge ? '' : ' (expected a refusal)'} (${bounds})`);
      }
      assert.ok(gapMs < LOOP_BOUND_MS, `${label}: the event loop was held ${gapMs.toFixed(0)} ms`);
      assert.ok(growth < MEMORY_BOUND, `${label}: the process grew by ${(growth / 1048576).toFixed(0)} MiB`);
      if (c.judge) {
        assert.equal(outcome.error, undefined, `${label}: refused ${outcome.error?.code}: ${outcome.error?.message}`);
        const rows = await rowsOf(table);
        const verdict = judge(expectedRows(c.judge(bytes)), rows);
        report[report.length - 1] = `${label} | landed ${outcome.rows} rows, ${verdict.ok ? 'values match' : `VALUES DIFFER: ${verdict.detail}`} (${bounds})`;
        assert.ok(verdict.ok, `${label}: ${verdict.detail}`);
      } else {
        const error = outcome.error;
        assert.ok(error, `${label}: landed ${outcome.rows} rows of a file that must be refused`);
        assert.match(error.code, REFUSAL_CODES, `${label}: ${error.code} ${error.message}`);
        assert.match(error.code, c.refuse!.code, `${label}: ${error.code} ${error.message}`);
        assert.match(error.message, new RegExp(`^${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: `), `${label}: the message names the file`);
        assert.ok(error.hint.length > 0);
        assert.doesNotMatch(error.message, /Cannot read properties|Invalid array length|ERR_STRING_TOO_LONG|not safe to convert|undefined|NaN/, `${label}: ${error.message}`);
        if (c.refuse!.column !== undefined) {
          assert.equal(error.column, c.refuse!.column, `${label}: ${error.message}`);
          assert.match(error.message, new RegExp(`"${c.refuse!.column}"`), `${label}: the message names the column`);
        }
        assert.equal(await tableRows(table), 0, `${label}: rows landed`);
      }
    }
  }

  async function rowsOf(table: string): Promise<Record<string, string | null>[]> {
    const columns = await bench.pool.transaction((conn) => conn.describeTable({ name: table }));
    assert.ok(columns, `table ${table} exists`);
    const list = columns.map((c) => `"${c.name}"::text AS "${c.name}"`).join(', ');
    return (await bench.pool.query<Record<string, string | null>>(`SELECT ${list} FROM "${table}"`)).map((row) => ({ ...row }));
  }

  async function tableRows(table: string): Promise<number> {
    const columns = await bench.pool.transaction((conn) => conn.describeTable({ name: table }));
    if (!columns) return 0;
    const rows = await bench.pool.query<{ n: string }>(`SELECT COUNT(*)::text AS n FROM "${table}"`);
    return Number(rows[0]!.n);
  }

  it("lands Hyper's own Arrow streams (COPY ... TO, no end-of-stream marker)", async () => {
    const path = join(bench.inbox, 'hyper-written.arrows');
    await bench.pool.query(
      `COPY (SELECT g AS id, g * 1.5 AS amount, CAST(g AS DOUBLE PRECISION) / 7 AS ratio, 'name ' || g AS name, g % 3 = 0 AS flag,
              CASE WHEN g % 5 = 0 THEN NULL ELSE g END AS maybe, DATE '2024-01-01' + CAST(g % 400 AS INTEGER) AS day,
              TIMESTAMP '2024-02-29 12:00:00' + g * INTERVAL '1 second' AS at, CAST(g AS NUMERIC(18,3)) / 8 AS money
       FROM generate_series(1, 100000) AS s(g)) TO '${path}' WITH (FORMAT arrowstream)`,
    );
    const bytes = new Uint8Array(await readFile(path));
    const eos = bytes.subarray(bytes.length - 8);
    const hasMarker = eos.every((b, i) => b === [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0][i]);
    report.push(`hyper COPY TO arrowstream: ${bytes.length} bytes, ${hasMarker ? 'with' : 'without'} an end-of-stream marker`);
    await check({ name: 'hyper COPY TO arrowstream, 100k rows', bytes: () => bytes, judge: ownReading }, bytes, 'hyper-written.arrows');
  });

  for (const c of validCases()) {
    it(`lands: ${c.name}`, async () => {
      await check(c, await c.bytes());
    });
  }

  for (const c of refusedCases()) {
    it(`refuses: ${c.name}`, async () => {
      await check(c, await c.bytes());
    });
  }
});
