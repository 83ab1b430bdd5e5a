/**
 * The seed files, made at run time by writers other than hyperwatch: DuckDB (Parquet in four
 * codecs, CSV, JSON lines and arrays), arrow-rs through parquet-wasm (Parquet v1 and v2 pages,
 * dictionaries), apache-arrow (Arrow IPC file and stream, dictionaries, nested and decimal
 * columns) and hyperd's own `COPY ... TO` (Parquet and an Arrow stream). Small on purpose (a few
 * hundred rows): a mutant is about the bytes that say how to read the rest, not about volume.
 */
import { readFile as readBuffer } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  Dictionary,
  Field,
  Int32,
  List,
  makeVector,
  Table,
  tableToIPC,
  Utf8,
  vectorFromArray,
  Float64,
  TimestampMicrosecond,
  Decimal,
  Bool,
} from 'apache-arrow';
import { Compression, Table as WasmTable, WriterPropertiesBuilder, WriterVersion, writeParquet } from 'parquet-wasm';
import type { DbPool } from '../src/types.ts';
import type { Seed } from './mutate.ts';

const ROWS = 300;

/** A copy, not a Node Buffer: `Buffer#slice` shares memory, and the mutations must never change a seed. */
const readFile = async (path: string): Promise<Uint8Array> => new Uint8Array(await readBuffer(path));

/** The rows every writer writes: integers, text with quotes and commas, decimals, dates, timestamps, NULLs. */
const DUCK_SELECT = `SELECT i AS id, 'name ' || i || CASE WHEN i % 7 = 0 THEN ', "q"' ELSE '' END AS name,
  CASE WHEN i % 5 = 0 THEN NULL ELSE (i * 1.25)::DECIMAL(12,3) END AS amount, (i * 123456789012.5)::DECIMAL(30,4) AS wide,
  DATE '2024-01-01' + i AS day, TIMESTAMP '2024-01-01 00:00:00' + i * INTERVAL '61 seconds' AS at,
  i % 3 = 0 AS flag, CASE WHEN i % 4 = 0 THEN NULL ELSE [i, i + 1] END AS list
  FROM (SELECT range::INTEGER AS i FROM range(0, ${ROWS}))`;

async function duckdbSeeds(dir: string): Promise<Seed[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const seeds: Seed[] = [];
  try {
    for (const codec of ['snappy', 'gzip', 'zstd', 'uncompressed']) {
      const path = join(dir, `duckdb-${codec}.parquet`);
      await conn.run(`COPY (${DUCK_SELECT}) TO '${path}' (FORMAT parquet, CODEC '${codec}', ROW_GROUP_SIZE 100)`);
      seeds.push({ name: `duckdb-${codec}.parquet`, format: 'parquet', bytes: await readFile(path) });
    }
    // Without the list column: hyperd reads these itself (the checks before a server read).
    const flat = DUCK_SELECT.replace(/,\s*CASE WHEN i % 4 = 0 THEN NULL ELSE \[i, i \+ 1\] END AS list/, '');
    for (const codec of ['snappy', 'gzip']) {
      const path = join(dir, `duckdb-flat-${codec}.parquet`);
      await conn.run(`COPY (${flat}) TO '${path}' (FORMAT parquet, CODEC '${codec}', ROW_GROUP_SIZE 100)`);
      seeds.push({ name: `duckdb-flat-${codec}.parquet`, format: 'parquet', bytes: await readFile(path) });
    }
    const csv = join(dir, 'duckdb.csv');
    await conn.run(`COPY (${flat}) TO '${csv}' (FORMAT csv, HEADER)`);
    seeds.push({ name: 'duckdb.csv', format: 'csv', bytes: await readFile(csv) });
    const jsonl = join(dir, 'duckdb.jsonl');
    await conn.run(`COPY (${DUCK_SELECT}) TO '${jsonl}' (FORMAT json)`);
    seeds.push({ name: 'duckdb.jsonl', format: 'json', bytes: await readFile(jsonl) });
    const array = join(dir, 'duckdb-array.json');
    await conn.run(`COPY (${DUCK_SELECT}) TO '${array}' (FORMAT json, ARRAY true)`);
    seeds.push({ name: 'duckdb-array.json', format: 'json', bytes: await readFile(array) });
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  return seeds;
}

/** An Arrow table of the types the Arrow seeds and arrow-rs's Parquet carry. */
function arrowTable(): Table {
  const rows = Array.from({ length: ROWS }, (_, i) => i);
  const words = ['alpha', 'beta', 'gamma', 'delta'];
  return new Table({
    id: vectorFromArray(rows, new Int32()),
    name: vectorFromArray(
      rows.map((i) => (i % 6 === 0 ? null : `n${i} "x", y`)),
      new Utf8(),
    ),
    word: makeVector({
      type: new Dictionary(new Utf8(), new Int32()),
      data: Int32Array.from(rows, (i) => i % 4),
      dictionary: vectorFromArray(words, new Utf8()),
    }),
    score: vectorFromArray(
      rows.map((i) => (i % 5 === 0 ? null : i / 7)),
      new Float64(),
    ),
    at: vectorFromArray(
      rows.map((i) => Date.UTC(2024, 0, 1) + i * 61_000),
      new TimestampMicrosecond(),
    ),
    amount: makeVector({ type: new Decimal(2, 12, 128), data: Uint32Array.from(rows.flatMap((i) => [i * 125, 0, 0, 0])) }),
    flag: vectorFromArray(
      rows.map((i) => i % 3 === 0),
      new Bool(),
    ),
    list: vectorFromArray(
      rows.map((i) => (i % 4 === 0 ? null : [i, i + 1])),
      new List(new Field('item', new Int32(), true)),
    ),
  });
}

function apacheArrowSeeds(): Seed[] {
  const table = arrowTable();
  return [
    { name: 'apache-arrow-file.arrow', format: 'arrow', bytes: tableToIPC(table, 'file') },
    { name: 'apache-arrow-stream.arrows', format: 'arrow', bytes: tableToIPC(table, 'stream') },
  ];
}

function parquetWasmSeeds(): Seed[] {
  // arrow-rs takes the table without its dictionary and decimal columns (kept simple and certain to write).
  const table = arrowTable();
  const plain = new Table({
    id: table.getChild('id')!,
    name: table.getChild('name')!,
    score: table.getChild('score')!,
    at: table.getChild('at')!,
    flag: table.getChild('flag')!,
    list: table.getChild('list')!,
  });
  const ipc = tableToIPC(plain, 'stream');
  const out: Seed[] = [];
  const variants: [string, Compression, WriterVersion, boolean][] = [
    ['snappy-v1', Compression.SNAPPY, WriterVersion.V1, true],
    ['zstd-v2', Compression.ZSTD, WriterVersion.V2, true],
    ['gzip-v1-plain', Compression.GZIP, WriterVersion.V1, false],
    ['lz4raw-v2', Compression.LZ4_RAW, WriterVersion.V2, false],
  ];
  for (const [name, compression, version, dictionary] of variants) {
    const props = new WriterPropertiesBuilder()
      .setCompression(compression)
      .setWriterVersion(version)
      .setDictionaryEnabled(dictionary)
      .setMaxRowGroupSize(100)
      .build();
    out.push({ name: `arrow-rs-${name}.parquet`, format: 'parquet', bytes: writeParquet(WasmTable.fromIPCStream(ipc), props) });
  }
  return out;
}

async function hyperSeeds(dir: string, pool: DbPool): Promise<Seed[]> {
  const select =
    "SELECT g AS id, 'h' || g AS name, (g * 0.5)::NUMERIC(10,2) AS amount, DATE '2024-01-01' + g AS day " +
    `FROM generate_series(1, ${ROWS}) g`;
  const parquet = join(dir, 'hyperd.parquet');
  const arrow = join(dir, 'hyperd.arrows');
  await pool.query(`COPY (${select}) TO '${parquet}' WITH (FORMAT parquet)`);
  await pool.query(`COPY (${select}) TO '${arrow}' WITH (FORMAT arrowstream)`);
  return [
    { name: 'hyperd.parquet', format: 'parquet', bytes: await readFile(parquet) },
    { name: 'hyperd.arrows', format: 'arrow', bytes: await readFile(arrow) },
  ];
}

/** Every seed, in a fixed order (the run's determinism depends on it). */
export async function makeSeeds(dir: string, pool: DbPool): Promise<Seed[]> {
  return [...(await duckdbSeeds(dir)), ...parquetWasmSeeds(), ...apacheArrowSeeds(), ...(await hyperSeeds(dir, pool))];
}
