/**
 * "Files as other tools write them": the same 1,000,000 rows (`id, ts, name, amount`) written at
 * bench time by the writers users' files come from, not by the bench's own generator:
 * apache-arrow (an IPC *file* holding one huge record batch), arrow-rs through parquet-wasm
 * (Parquet), DuckDB (a spreadsheet-style CSV with a header, and Parquet) and hyperd (an Arrow IPC
 * *stream*, `COPY ... TO ... WITH (FORMAT arrowstream)`). Every file holds the same rows.
 */
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { makeVector, RecordBatchFileWriter, Table, TimestampMicrosecond, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { Table as WasmTable, writeParquet } from 'parquet-wasm';
import { quoteIdent, quoteLiteral } from '../../src/columns/sql.ts';
import type { SetFile } from './format-set.ts';
import { type Server, withSession } from './server.ts';

/** Columns of the other writers' files, with the Hyper types of their pre-created tables. */
export const OTHER_COLUMNS: readonly (readonly [name: string, type: string])[] = [
  ['id', 'BIGINT'],
  ['ts', 'TIMESTAMP'],
  ['name', 'TEXT'],
  ['amount', 'DOUBLE PRECISION'],
];

/** One record batch of `rows` rows: what a program that builds its table in memory writes. */
function oneBatch(rows: number): Table {
  const ids = new BigInt64Array(rows);
  const ts: number[] = new Array(rows);
  const names: string[] = new Array(rows);
  const amounts = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    ids[i] = BigInt(i + 1);
    // Milliseconds since the epoch (apache-arrow's input for timestamps): one row a second from 2026-01-01.
    ts[i] = 1_767_225_600_000 + i * 1000;
    names[i] = `name-${(i * 7919) % 1000}`;
    amounts[i] = ((i * 104_729) % 2_000_000) / 100 - 5000;
  }
  return new Table({
    id: makeVector(ids),
    ts: vectorFromArray(ts, new TimestampMicrosecond()),
    name: vectorFromArray(names, new Utf8()),
    amount: makeVector(amounts),
  });
}

/**
 * Writes the set into `dir`; `database` is a database of `server` the bench may use for a
 * scratch table (hyperd writes the stream from rows it loaded).
 */
export async function writeOtherFiles(dir: string, rows: number, server: Server, database: string): Promise<SetFile[]> {
  const table = oneBatch(rows);
  const arrowFile = join(dir, 'other-apache-arrow.arrow');
  await writeFile(arrowFile, await new RecordBatchFileWriter().writeAll(table).toUint8Array());
  const wasmParquet = join(dir, 'other-arrow-rs.parquet');
  // parquet-wasm's defaults (arrow-rs: Snappy, dictionary pages, 1M-row row groups).
  await writeFile(wasmParquet, writeParquet(WasmTable.fromIPCStream(tableToIPC(table, 'stream'))));

  const csv = join(dir, 'other-duckdb.csv');
  const duckParquet = join(dir, 'other-duckdb.parquet');
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    await conn.run(`SET TimeZone = 'UTC'`);
    await conn.run(`CREATE TABLE src AS SELECT * FROM read_parquet(${quoteLiteral(wasmParquet)}) ORDER BY id`);
    await conn.run(`COPY src TO ${quoteLiteral(csv)} (HEADER)`);
    await conn.run(`COPY src TO ${quoteLiteral(duckParquet)} (FORMAT parquet)`);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }

  const hyperStream = join(dir, 'other-hyperd.arrows');
  await withSession(server, database, async (sql) => {
    const scratch = 'bench_other_source';
    await sql.unsafe(`DROP TABLE IF EXISTS ${quoteIdent(scratch)}`);
    await sql.unsafe(`CREATE TABLE ${quoteIdent(scratch)} (${OTHER_COLUMNS.map(([n, t]) => `${quoteIdent(n)} ${t}`).join(', ')})`);
    await sql.unsafe(`INSERT INTO ${quoteIdent(scratch)} SELECT * FROM external(${quoteLiteral(duckParquet)}, FORMAT => 'parquet')`);
    await sql.unsafe(`COPY (SELECT * FROM ${quoteIdent(scratch)} ORDER BY id) TO ${quoteLiteral(hyperStream)} WITH (FORMAT arrowstream)`);
    await sql.unsafe(`DROP TABLE ${quoteIdent(scratch)}`);
  });

  const files = [
    { key: 'csv-duckdb', format: 'csv', writer: 'DuckDB COPY TO (HEADER)', path: csv, ext: '.csv' },
    { key: 'parquet-duckdb', format: 'parquet', writer: 'DuckDB COPY TO (FORMAT parquet)', path: duckParquet, ext: '.parquet' },
    {
      key: 'parquet-arrow-rs',
      format: 'parquet',
      writer: 'arrow-rs (parquet-wasm writeParquet, defaults)',
      path: wasmParquet,
      ext: '.parquet',
    },
    { key: 'arrow-file-apache-arrow', format: 'arrow-file', writer: 'apache-arrow, one 1M-row batch', path: arrowFile, ext: '.arrow' },
    {
      key: 'arrow-stream-hyperd',
      format: 'arrow-stream',
      writer: 'hyperd COPY TO (FORMAT arrowstream)',
      path: hyperStream,
      ext: '.arrows',
    },
  ] as const;
  return Promise.all(
    files.map(async (f) => ({ ...f, set: 'other' as const, rows, bytes: (await stat(f.path)).size, columns: OTHER_COLUMNS })),
  );
}
