/**
 * The conformance suite's cases (files other writers make, and damaged ones), the bounds each
 * must keep, and the checks every refusal must pass, shared by the ingester-level and the
 * watcher-level runs.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Table, tableFromIPC } from 'apache-arrow';
import type { DbPool, IngestError, Logger } from '../../src/types.ts';
import { bigDamagedStream, type Damaged, damagedStreams, unknownTypeStreams } from './conformance-arrow-damage.ts';
import { streamToFile, toBigEndian } from './conformance-arrow-ipc.ts';
import {
  allNullTable,
  apacheArrowCompressed,
  arrowRsStream,
  compressedIpc,
  deltaDictionaryStream,
  dictionaryTable,
  inBatches,
  ipc,
  largeOffsetsTable,
  manyTypes,
  nestedTable,
  plainTable,
  rewrittenTable,
  sharedDictionaryTable,
  viewTable,
} from './conformance-arrow-writers.ts';

export const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
/** Longest the event loop may be held while one case is read. */
export const LOOP_BOUND_MS = 1000;
/** Most the process may grow (peak RSS over the start) while one case is read. */
export const MEMORY_BOUND = 512 * 1024 * 1024;
export const REFUSAL_CODES =
  /^(ARROW_CORRUPT|ARROW_TRUNCATED|ARROW_NOT_IPC|ARROW_UNSUPPORTED|ARROW_UNSUPPORTED_TYPE|ARROW_BATCH_TOO_LARGE|EMPTY_FILE)$/;

export interface Case {
  readonly name: string;
  readonly bytes: () => Uint8Array | Promise<Uint8Array>;
  /** The writer's data (to land), or the refusal expected. */
  readonly judge?: (bytes: Uint8Array) => Table;
  readonly refuse?: { readonly code: RegExp; readonly column?: string };
}

const writerData = (table: () => Table) => () => table();
export const ownReading = (bytes: Uint8Array): Table => tableFromIPC(bytes);

export function validCases(): Case[] {
  const cases: Case[] = [];
  const lands = (name: string, table: () => Table, bytes: (t: Table) => Uint8Array | Promise<Uint8Array>): void => {
    cases.push({ name, bytes: () => bytes(table()), judge: writerData(table) });
  };
  lands(
    'apache-arrow stream, one batch of 200k rows',
    () => plainTable(200_000),
    (t) => ipc(t, 'stream'),
  );
  lands(
    'apache-arrow file, one batch of 200k rows to rewrite (dictionary, list, large text, ns)',
    () => rewrittenTable(200_000),
    (t) => ipc(t, 'file'),
  );
  lands(
    'apache-arrow file, 100 batches of 500 rows',
    () => inBatches(plainTable(50_000), 500),
    (t) => ipc(t, 'file'),
  );
  lands('apache-arrow stream, dictionary replaced per batch', dictionaryTable, (t) => ipc(t, 'stream'));
  cases.push({
    name: 'stream with a delta dictionary',
    bytes: () => deltaDictionaryStream().bytes,
    judge: () => deltaDictionaryStream().table,
  });
  lands('apache-arrow file, one dictionary over 3 batches', sharedDictionaryTable, (t) => ipc(t, 'file'));
  lands('apache-arrow stream, nested list/struct/map', nestedTable, (t) => ipc(t, 'stream'));
  lands('apache-arrow file, large offsets (LargeUtf8, LargeBinary, LargeList)', largeOffsetsTable, (t) => ipc(t, 'file'));
  lands('apache-arrow stream, Utf8View and BinaryView', viewTable, (t) => ipc(t, 'stream'));
  lands('apache-arrow stream, all-null columns', allNullTable, (t) => ipc(t, 'stream'));
  lands(
    'apache-arrow stream, no record batches',
    () => plainTable(0),
    (t) => ipc(t, 'stream'),
  );
  lands(
    'apache-arrow file, no record batches',
    () => plainTable(0),
    (t) => ipc(t, 'file'),
  );
  lands('apache-arrow file, many types', manyTypes, (t) => ipc(t, 'file'));
  lands('apache-arrow stream ended by closing (no end-of-stream marker)', manyTypes, (t) => ipc(t, 'stream').slice(0, -8));
  for (const codec of ['lz4', 'zstd'] as const) {
    lands(
      `apache-arrow file, ${codec} body compression, 4 batches`,
      () => inBatches(plainTable(40_000), 10_000),
      (t) => compressedIpc(t, codec, 'file'),
    );
    lands(`apache-arrow stream, ${codec} body compression, many types`, manyTypes, (t) => compressedIpc(t, codec, 'stream'));
  }
  lands('big-endian stream, many types', manyTypes, (t) => toBigEndian(ipc(t, 'stream')));
  lands('big-endian file, many types', manyTypes, (t) => streamToFile(toBigEndian(ipc(t, 'stream'))));
  lands('big-endian stream, nested list/struct/map', nestedTable, (t) => toBigEndian(ipc(t, 'stream')));
  lands('big-endian stream, dictionary', dictionaryTable, (t) => toBigEndian(ipc(t, 'stream')));
  lands('big-endian stream, large offsets', largeOffsetsTable, (t) => toBigEndian(ipc(t, 'stream')));
  lands(
    'big-endian stream, 3 batches of 10k rows',
    () => inBatches(plainTable(30_000), 10_000),
    (t) => toBigEndian(ipc(t, 'stream')),
  );
  cases.push({ name: 'arrow-rs stream (via parquet-wasm), 20k rows', bytes: () => arrowRsStream(plainTable(20_000)), judge: ownReading });
  cases.push({ name: 'arrow-rs stream (via parquet-wasm), nested', bytes: () => arrowRsStream(nestedTable()), judge: ownReading });
  return cases;
}

export function refusedCases(): Case[] {
  const big: Damaged = {
    name: '1M rows in 16 batches, the last with a string offset past its data',
    bytes: bigDamagedStream(),
    code: /^ARROW_CORRUPT$/,
    column: 'name',
  };
  const jsCompressed: Damaged = {
    name: "apache-arrow JS's own LZ4 writer (compressed size in each buffer's prefix)",
    bytes: apacheArrowCompressed(manyTypes()),
    code: /^ARROW_CORRUPT$/,
  };
  return [...damagedStreams(), big, jsCompressed, ...unknownTypeStreams()].map((d) => ({
    name: d.name,
    bytes: () => d.bytes,
    refuse: { code: d.code, ...(d.column === undefined ? {} : { column: d.column }) },
  }));
}

/**
 * A file as Hyper writes it, 100k rows of common types: `COPY ... TO ... (FORMAT arrowstream)`
 * (a stream without the end-of-stream marker) or `(FORMAT arrowfile)`.
 */
export async function hyperWritten(pool: DbPool, dir: string, name: string, format: 'arrowstream' | 'arrowfile'): Promise<Uint8Array> {
  const path = join(dir, name);
  await pool.query(
    `COPY (SELECT g AS id, g * 1.5 AS amount, CAST(g AS DOUBLE PRECISION) / 7 AS ratio, 'name ' || g AS name, g % 3 = 0 AS flag,
            CASE WHEN g % 5 = 0 THEN NULL ELSE g END AS maybe, DATE '2024-01-01' + CAST(g % 400 AS INTEGER) AS day,
            TIMESTAMP '2024-02-29 12:00:00' + g * INTERVAL '1 second' AS at, CAST(g AS NUMERIC(18,3)) / 8 AS money,
            g * INTERVAL '1 day 1.5 seconds' AS span
     FROM generate_series(1, 100000) AS s(g)) TO '${path}' WITH (FORMAT ${format})`,
  );
  return new Uint8Array(await readFile(path));
}

/** Whether the bytes end with the 8-byte end-of-stream marker. */
export function endsWithMarker(bytes: Uint8Array): boolean {
  const tail = bytes.subarray(bytes.length - 8);
  return tail.length === 8 && tail.every((b, i) => b === [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0][i]);
}

/** What every refusal must be: a code that says corrupt or unsupported (the case's own), the file, the column, no bare JS text. */
export function checkRefusal(label: string, c: Case, error: IngestError, fileName: string): void {
  assert.match(error.code, REFUSAL_CODES, `${label}: ${error.code} ${error.message}`);
  assert.match(error.code, c.refuse!.code, `${label}: ${error.code} ${error.message}`);
  assert.ok(error.message.startsWith(`${fileName}: `), `${label}: the message names the file: ${error.message}`);
  assert.ok(error.hint.length > 0);
  assert.doesNotMatch(
    error.message,
    /Cannot read properties|Invalid array length|ERR_STRING_TOO_LONG|not safe to convert|undefined|NaN/,
    `${label}: ${error.message}`,
  );
  if (c.refuse!.column !== undefined) {
    assert.equal(error.column, c.refuse!.column, `${label}: ${error.message}`);
    assert.ok(error.message.includes(`"${c.refuse!.column}"`), `${label}: the message names the column: ${error.message}`);
  }
}
