/**
 * The Parquet conformance suite's machinery: files written at test time by other writers (DuckDB,
 * arrow-rs through parquet-wasm, hyperd's own COPY TO), ingested by the real Parquet ingester into
 * a real hyperd, and compared value by value with DuckDB's own reading of the same file.
 *
 * Values are compared as text in one canonical spelling per type: DuckDB's `CAST(... AS VARCHAR)`
 * (with `to_json` for nested values, `hex` for bytes) on one side, the database's `::text` on the
 * other, both normalised in `canonical` below (trailing fraction zeros, `+00`, `t`/`f`, ...).
 */
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { parquetIngester } from '../../plugins/parquet/index.ts';
import { isIngestFailure } from '../../src/errors.ts';
import { claimFile } from '../../src/protocol/files.ts';
import { silentLogger } from '../../src/log.ts';
import { quoteIdent } from '../../src/columns/sql.ts';
import { type Hold, holdProbe } from './loop-hold.ts';
import type { DbCapabilities, DbPool, IngestContext, IngestError, LogicalType } from '../../src/types.ts';

export const SERVER_READS: DbCapabilities = { readsLocalFiles: true, arrowStream: true, parquet: true, durableCommit: false };
/** What PostgreSQL or a remote hyperd offers: the file is decoded here and streamed. */
export const DECODED_HERE: DbCapabilities = { readsLocalFiles: false, arrowStream: false, parquet: false, durableCommit: false };

/** DuckDB in memory, instants printed in UTC: the writer of most cases and the judge of all. */
export async function openDuckDb(): Promise<{ conn: DuckDBConnection; close(): void }> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  await conn.run(`SET TimeZone = 'UTC'`);
  return {
    conn,
    close() {
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/** How a DuckDB column type is compared. */
export type Category = 'blob' | 'bool' | 'decimal' | 'real' | 'double' | 'temporal' | 'json' | 'text';

function categoryOf(duckType: string): Category {
  if (/\[\d*\]$|^STRUCT|^MAP|^UNION/.test(duckType)) return 'json';
  if (duckType === 'BLOB') return 'blob';
  if (duckType === 'BOOLEAN') return 'bool';
  if (duckType.startsWith('DECIMAL')) return 'decimal';
  if (duckType === 'FLOAT') return 'real';
  if (duckType === 'DOUBLE') return 'double';
  if (/^(DATE|TIME|TIMESTAMP)/.test(duckType)) return 'temporal';
  return 'text';
}

/** The DuckDB expression that spells one column canonically (see the file comment). */
function judgeExpression(name: string, duckType: string): string {
  const c = `"${name.replaceAll('"', '""')}"`;
  switch (categoryOf(duckType)) {
    case 'json':
      return `CAST(to_json(${c}) AS VARCHAR)`;
    case 'blob':
      return `lower(hex(${c}))`;
    case 'temporal':
      // The database keeps microseconds: nanoseconds are cut to them (toward zero after 1970;
      // DuckDB's own casts round, so its text is cut after the sixth digit of the fraction).
      if (duckType === 'TIMESTAMP_NS') return `regexp_replace(CAST(${c} AS VARCHAR), '(\\.\\d{6})\\d+', '\\1')`;
      if (duckType.startsWith('TIMESTAMP_')) return `CAST(CAST(${c} AS TIMESTAMP) AS VARCHAR)`;
      return duckType === 'TIME_NS' ? `regexp_replace(CAST(${c} AS VARCHAR), '(\\.\\d{6})\\d+', '\\1')` : `CAST(${c} AS VARCHAR)`;
    default:
      return `CAST(${c} AS VARCHAR)`;
  }
}

const TEMPORAL = /^(-?\d{4,}-\d\d-\d\d)?( ?(\d\d:\d\d:\d\d)(\.\d+)?)?(\+00(:00)?)?( \(?BC\)?)?$/;

/** One value in the spelling both sides are compared in. */
function canonical(value: string | null, category: Category): string | null {
  if (value === null) return null;
  switch (category) {
    case 'blob':
      return value.replace(/^\\x/, '').toLowerCase();
    case 'bool':
      return value === 't' || value === 'true' ? 'true' : value === 'f' || value === 'false' ? 'false' : value;
    case 'decimal':
      return value.includes('.') ? value.replace(/0+$/, '').replace(/\.$/, '').replace(/^-0$/, '0') : value;
    case 'real':
    case 'double': {
      if (/^-?(inf|infinity)$/i.test(value)) return value.startsWith('-') ? '-Infinity' : 'Infinity';
      if (/^nan$/i.test(value)) return 'NaN';
      const n = Number(value);
      return Number.isNaN(n) ? value : n.toPrecision(category === 'real' ? 6 : 15);
    }
    case 'temporal':
      return temporal(value);
    case 'json':
      return JSON.stringify(canonicalJson(JSON.parse(value)));
    default:
      return value;
  }
}

function temporal(value: string): string {
  const m = TEMPORAL.exec(value);
  if (!m) return value;
  const fraction = (m[4] ?? '').replace(/0+$/, '').replace(/^\.$/, '');
  return `${m[1] ?? ''}${m[1] && m[3] ? ' ' : ''}${m[3] ?? ''}${fraction}${m[7] ? ' BC' : ''}`;
}

/** Nested values: numbers as numbers (bigints arrive as such), timestamps in `temporal`'s spelling. */
function canonicalJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalJson);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonicalJson(v)]));
  if (typeof value === 'string' && TEMPORAL.test(value) && /\d/.test(value)) return temporal(value);
  if (typeof value === 'number') return Number(value.toPrecision(15));
  return value;
}

export interface JudgedFile {
  readonly columns: readonly { readonly name: string; readonly category: Category }[];
  /** Each row's canonical values, rows sorted. */
  readonly rows: readonly (readonly (string | null)[])[];
}

/** DuckDB's reading of the file, canonical. */
export async function judge(duck: DuckDBConnection, path: string): Promise<JudgedFile> {
  const source = `read_parquet('${path.replaceAll("'", "''")}')`;
  const described = (await duck.runAndReadAll(`DESCRIBE SELECT * FROM ${source}`)).getRowObjectsJson();
  const columns = described.map((r) => ({ name: String(r['column_name']), type: String(r['column_type']) }));
  const select = columns.map((c) => judgeExpression(c.name, c.type)).join(', ');
  const rows = (await duck.runAndReadAll(`SELECT ${select} FROM ${source}`)).getRowsJson() as (string | null)[][];
  const categories = columns.map((c) => ({ name: c.name, category: categoryOf(c.type) }));
  return { columns: categories, rows: sortRows(rows.map((row) => row.map((v, i) => canonical(v, categories[i]!.category)))) };
}

/** Rows a case states itself (for a file no reader here takes whole), canonical like `judge`'s. */
export function stated(columns: readonly (readonly [string, Category])[], rows: readonly (readonly (string | null)[])[]): JudgedFile {
  const categories = columns.map(([name, category]) => ({ name, category }));
  return { columns: categories, rows: sortRows(rows.map((row) => row.map((v, i) => canonical(v, categories[i]!.category)))) };
}

/** What landed in the table, canonical, in the judge's column order. */
export async function landed(
  pool: DbPool,
  table: string,
  expected: JudgedFile,
  options: { utcSession?: boolean } = {},
): Promise<(string | null)[][]> {
  const select = expected.columns.map((c, i) => `${quoteIdent(c.name)}::text AS c${i}`).join(', ');
  const rows = await pool.transaction(async (conn) => {
    // PostgreSQL prints instants in the session's zone: UTC, as DuckDB's are.
    if (options.utcSession) await conn.execute(`SET LOCAL TimeZone = 'UTC'`);
    return conn.query<Record<string, string | null>>(`SELECT ${select} FROM ${quoteIdent(table)}`);
  });
  return sortRows(rows.map((row) => expected.columns.map((c, i) => canonical(row[`c${i}`] ?? null, c.category))));
}

function sortRows<T extends readonly (string | null)[]>(rows: T[]): T[] {
  const key = (row: T) => JSON.stringify(row);
  return rows
    .map((row) => [key(row), row] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, row]) => row);
}

/** The first difference between what the writer's reading says and what landed, or undefined. */
export function firstDifference(expected: JudgedFile, actual: readonly (readonly (string | null)[])[]): string | undefined {
  if (actual.length !== expected.rows.length) return `${actual.length} rows landed where the file has ${expected.rows.length}`;
  for (const [r, row] of expected.rows.entries()) {
    for (const [i, value] of row.entries()) {
      if (actual[r]![i] !== value)
        return (
          `column "${expected.columns[i]!.name}" (sorted row ${r}): landed ${JSON.stringify(actual[r]![i])}, the file ` +
          `says ${JSON.stringify(value)}`
        );
    }
  }
  return undefined;
}

/** `via`: how the rows came in on a database that reads files: `hyperd` or why they were decoded here. */
export type Outcome =
  | { readonly ok: true; readonly rows: number; readonly via: string }
  | { readonly ok: false; readonly error: IngestError };

/**
 * Claims a copy of `path` and appends it with the real Parquet ingester, as the watcher does:
 * one transaction per attempt, a fresh one at once when the error asks for a retry.
 */
export async function ingestFile(
  pool: DbPool,
  root: string,
  path: string,
  table: string,
  capabilities: DbCapabilities,
  sqlType: (type: LogicalType) => string,
): Promise<Outcome> {
  const inbox = join(root, 'inbox');
  const staging = join(root, 'staging');
  await mkdir(inbox, { recursive: true });
  await mkdir(staging, { recursive: true });
  const name = `${randomUUID()}${extname(path)}`;
  await copyFile(path, join(inbox, name));
  const claimed = claimFile(inbox, name, join(staging, name), { claimId: randomUUID(), extension: extname(name) });
  if (claimed.status !== 'claimed') throw new Error(`could not claim ${basename(path)}: ${claimed.status}`);
  const file = claimed.file;
  const fileState = new Map<string, unknown>();
  // The ingester says at info level when, and why, it decodes a file hyperd could have read.
  let via = capabilities.readsLocalFiles ? 'hyperd' : 'decoded here';
  const logger = { ...silentLogger, info: (message: string) => void (via = message.replace(/[0-9a-f-]{36}\.parquet/g, 'the file')) };
  try {
    for (let attempt = 1; ; attempt++) {
      const ctx: IngestContext = { capabilities, attempt, fileState, sqlType, schema: { createTable: true }, logger };
      try {
        const rows = await pool.transaction(async (conn) => {
          const result = await parquetIngester.append(conn, file, { name: table }, ctx);
          if (result.isErr()) throw result.error;
          return result.value.rows;
        });
        return { ok: true, rows, via };
      } catch (error) {
        const failure = isIngestFailure(error) ? error.error : (error as IngestError);
        if (failure.retry && attempt < 3) continue;
        if (typeof failure.kind !== 'string') throw error;
        return { ok: false, error: failure };
      }
    }
  } finally {
    await file.close();
  }
}

/** The staged name (a random UUID) replaced by the case's file name, for the report. */
export function asReported(message: string, caseFile: string): string {
  return message.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.parquet/g, basename(caseFile));
}

export async function ensureDirOf(path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
}

/**
 * Runs `work` while watching the event loop and the process's memory (helpers/loop-hold.ts): the
 * longest the loop was held (`maxBlockMs`, the main thread's own CPU time between two ticks of a
 * 10 ms timer) and the peak RSS above the start.
 */
export async function measured<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; maxBlockMs: number; rssGrowthMiB: number }> {
  const stop = holdProbe();
  const started = performance.now();
  let hold: Hold | undefined;
  try {
    const value = await work();
    const ms = performance.now() - started;
    hold = stop();
    return { value, ms, maxBlockMs: hold.heldMs, rssGrowthMiB: hold.growth / 2 ** 20 };
  } finally {
    if (hold === undefined) stop();
  }
}
