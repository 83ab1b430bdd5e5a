/**
 * The Parquet ingester on its own, as the Parquet test files run it: ingest contexts as a local
 * hyperd (reads the file itself) or a remote database (the file is decoded here) would give,
 * files claimed as the watcher claims them, and fixtures written by a real hyperd.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { before } from 'node:test';
import { err, type Result } from 'neverthrow';
import type { HyperAdapter } from '../../adapters/db/hyper/index.ts';
import { parquetIngester } from '../../plugins/parquet/index.ts';
import { IngestFailure, isIngestFailure } from '../../src/errors.ts';
import { claimFile, type OpenedFile } from '../../src/protocol/files.ts';
import { silentLogger } from '../../src/log.ts';
import { standardSqlType } from '../../src/columns/sql.ts';
import type { AppendResult, DbCapabilities, IngestContext, IngestError, Row } from '../../src/types.ts';
import { type LiveFixture, useHyperFixture } from './env.ts';
import { createManyTypes } from './many-types.ts';

export const LOCAL: DbCapabilities = { readsLocalFiles: true, arrowStream: true, parquet: true, durableCommit: false };
/** What PostgreSQL or a remote hyperd offers: the file must be decoded by us. */
export const REMOTE: DbCapabilities = { readsLocalFiles: false, arrowStream: false, parquet: false, durableCommit: false };

export function context(capabilities: DbCapabilities, fileState = new Map<string, unknown>(), createTable = true): IngestContext {
  return { capabilities, attempt: 1, fileState, sqlType: standardSqlType, schema: { createTable }, logger: silentLogger };
}

/** Claims `path` as the watcher does, into `<root>/staging`. */
export async function claimInto(root: string, path: string): Promise<OpenedFile> {
  const staging = join(root, 'staging');
  await mkdir(staging, { recursive: true });
  const name = basename(path);
  const outcome = await claimFile(dirname(path), name, join(staging, `${randomUUID()}-${name}`), {
    claimId: randomUUID(),
    extension: extname(name).toLowerCase(),
  });
  assert.equal(outcome.status, 'claimed');
  if (outcome.status !== 'claimed') throw new Error('not claimed');
  return outcome.file;
}

/** Every column of the many-types source, as text, so values compare exactly. */
export const AS_TEXT =
  `id, si::text AS si, i::text AS i, b::text AS b, d::text AS d, n::text AS n, n18::text AS n18, bo::text AS bo, t, dt::text ` +
  `AS dt, tm::text AS tm, ts::text AS ts, tz::text AS tz, by::text AS by, j::text AS j`;

export interface ParquetBench {
  readonly fx: LiveFixture<HyperAdapter>;
  /** A fixture written by hyperd; `options` e.g. `CODEC 'zstd'`. */
  hyperParquet(name: string, select: string, options?: string): Promise<string>;
  /** Claims a copy of `fixture` (claiming moves it) and appends it inside a transaction, rolled back on error. */
  ingest(fixture: string, table: string, ctx?: IngestContext, as?: string): Promise<Result<AppendResult, IngestError>>;
  /** Plain objects (postgres.js hands out a Result array subclass, which deepEqual tells apart). */
  select(sql: string): Promise<Row[]>;
  rows(table: string, columns: string): Promise<Row[]>;
  expectError(result: Result<AppendResult, IngestError>, kind: IngestError['kind'], code: string): IngestError;
  /** Creates table `src` of many types and writes it to `many-types.parquet`; returns its path. */
  manyTypesFile(): Promise<string>;
}

/** A hyperd database for the tests of the enclosing `describe`, and the Parquet ingester on it. */
export function useParquetBench(): ParquetBench {
  const fx = useHyperFixture();
  /** Where ingest() puts the copy of a fixture it claims. */
  const inbox = (): string => join(fx.root, 'inbox');
  before(() => mkdir(inbox(), { recursive: true }));

  async function hyperParquet(name: string, select: string, options = ''): Promise<string> {
    const path = join(fx.root, 'fixtures', name);
    await mkdir(dirname(path), { recursive: true });
    await fx.pool.query(`COPY (${select}) TO '${path}' WITH (FORMAT parquet${options ? `, ${options}` : ''})`);
    return path;
  }

  async function ingest(
    fixture: string,
    table: string,
    ctx: IngestContext = context(LOCAL),
    as = basename(fixture),
  ): Promise<Result<AppendResult, IngestError>> {
    const copy = join(inbox(), as);
    await copyFile(fixture, copy);
    const file = await claimInto(fx.root, copy);
    try {
      // As the watcher does: an error that asks for a retry gets a fresh transaction at once.
      for (let attempt = 1; ; attempt++) {
        try {
          return await fx.pool.transaction(async (conn) => {
            const result = await parquetIngester.append(conn, file, { name: table }, { ...ctx, attempt });
            if (result.isErr()) throw new IngestFailure(result.error);
            return result;
          });
        } catch (error) {
          if (isIngestFailure(error) && error.error.retry && attempt < 3) continue;
          if (isIngestFailure(error)) return err(error.error);
          throw error;
        }
      }
    } finally {
      await file.close();
    }
  }

  async function select(sql: string): Promise<Row[]> {
    return (await fx.pool.query(sql)).map((row) => ({ ...row }));
  }

  return {
    fx,
    hyperParquet,
    ingest,
    select,
    rows: (table, columns) => select(`SELECT ${columns} FROM ${table} ORDER BY id`),
    expectError(result, kind, code) {
      assert.ok(result.isErr(), `expected ${code}, got ${JSON.stringify(result.isOk() ? result.value : null)}`);
      assert.equal(result.error.code, code, result.error.message);
      assert.equal(result.error.kind, kind);
      assert.ok(result.error.hint.length > 0, 'has a hint');
      return result.error;
    },
    async manyTypesFile() {
      await createManyTypes(fx.pool, 'src');
      return hyperParquet('many-types.parquet', 'SELECT * FROM src ORDER BY id');
    },
  };
}
