/**
 * One throwaway PostgreSQL cluster for a test file, and the adapter on it, closed after the
 * file's tests. Started with top-level await, before any test is registered: the contract kits
 * take their `db` when they are registered. startPostgres also stops it at process exit,
 * whatever happens.
 */
import { after } from 'node:test';
import { createPostgresAdapter, type PostgresAdapter } from '../../adapters/db/postgres/index.ts';
import { type DbFixture, dbFixture, tempDir } from './env.ts';
import { type PostgresServer, startPostgres } from './postgres.ts';

export interface PostgresForFile {
  readonly pg: PostgresServer;
  readonly db: PostgresAdapter;
  /** A temp directory for inboxes and a pool of its own on the file's cluster; the adapter stays open for the other suites. */
  pgFixture(): Promise<DbFixture>;
}

export async function postgresForFile(): Promise<PostgresForFile> {
  const pg = await startPostgres();
  const db = createPostgresAdapter({ url: pg.url });
  after(async () => {
    await db.close();
    await pg.stop();
  });
  return { pg, db, pgFixture: async () => dbFixture(await tempDir('hyperwatch-pgtest-'), db, { ownsDb: false }) };
}
