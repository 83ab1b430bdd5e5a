/**
 * What the Parquet conformance files share (test/scenarios/conformance/conformance-parquet*.test.ts):
 * the three paths a case's file goes through (hyperd reads it; decoded here into hyperd; decoded
 * here into PostgreSQL), their servers and DuckDB for the suite, the bounds every case keeps, and
 * how a refusal is printed.
 */
import { after, before } from 'node:test';
import type { DuckDBConnection } from '@duckdb/node-api';
import { createPostgresAdapter } from '../../adapters/db/postgres/index.ts';
import type { DbCapabilities, DbPool, IngestError } from '../../src/types.ts';
import { asReported, DECODED_HERE, openDuckDb, SERVER_READS } from './conformance-parquet.ts';
import { type DbFixture, dbFixture, tempDir, useHyperFixture } from './env.ts';
import { type PostgresServer, startPostgres } from './postgres.ts';

/** Bounds every case must keep, on a loaded 2-core machine. */
export const MAX_CASE_MS = 60_000;
export const MAX_EVENT_LOOP_STALL_MS = 1_000;
export const MAX_RSS_GROWTH_MIB = 512;

/** JavaScript's own words, which no refusal may be made of. */
export const BARE_JS = new RegExp(
  /Invalid array length|Invalid typed array length|ERR_STRING_TOO_LONG|not safe to convert|Cannot read properties|/.source +
    /is not a function|is not iterable|Maximum call stack|UNEXPECTED|undefined/.source,
);

/** Where a case's file goes: a database, and what the ingester is told it can do. */
export interface Path {
  readonly label: string;
  readonly fixture: () => DbFixture;
  readonly capabilities: DbCapabilities;
  readonly utcSession?: boolean;
}

export function describeRefusal(error: IngestError, file: string): string {
  return `refused ${error.code ?? error.kind}: ${asReported(error.message, file)}`;
}

export interface ParquetBench {
  /** The suite's folder (the hyperd fixture's root), where case files are written. */
  root(): string;
  /** The suite's hyperd pool (hyperd's own COPY TO writes some cases). */
  hyperPool(): DbPool;
  readonly paths: readonly Path[];
  /** DuckDB, which writes some cases and judges every one. */
  duckdb(): DuckDBConnection;
  /** A table name no other case of the suite uses: `${prefix}_${n}`. */
  table(prefix: string): string;
}

/**
 * The paths' servers (a hyperd and a PostgreSQL cluster) and DuckDB, started before the tests of
 * the enclosing `describe` (call this in its body) and stopped after them.
 */
export function useParquetBench(): ParquetBench {
  const fx = useHyperFixture();
  let pg: { server: PostgresServer; fixture: DbFixture } | undefined;
  let duck: Awaited<ReturnType<typeof openDuckDb>> | undefined;
  before(async () => {
    const server = await startPostgres();
    pg = { server, fixture: await dbFixture(await tempDir(), createPostgresAdapter({ url: server.url }), { ownsDb: true }) };
    duck = await openDuckDb();
  });
  after(async () => {
    duck?.close();
    await pg?.fixture.close();
    await pg?.server.stop();
  });
  const hyper = (): DbFixture => ({ root: fx.root, db: fx.db, pool: fx.pool, close: () => Promise.resolve() });
  let tables = 0;
  return {
    root: () => fx.root,
    hyperPool: () => fx.pool,
    paths: [
      { label: 'hyperd reads it', fixture: hyper, capabilities: SERVER_READS },
      { label: 'decoded here', fixture: hyper, capabilities: DECODED_HERE },
      { label: 'decoded, PostgreSQL', fixture: () => pg!.fixture, capabilities: DECODED_HERE, utcSession: true },
    ],
    duckdb: () => duck!.conn,
    table: (prefix) => `${prefix}_${++tables}`,
  };
}
