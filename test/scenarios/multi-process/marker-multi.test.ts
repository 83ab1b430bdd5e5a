/**
 * `--ready marker` with two `hyperwatch watch` processes on one inbox, one SIGKILLed while
 * folders keep coming (the scenario: test/helpers/marker-multi.ts), into a real PostgreSQL (a
 * throwaway cluster for this file) and into one Hyper database through one shared hyperd
 * (`--endpoint`), as several writers of a `.hyper` file run.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { join } from 'node:path';
import postgres from 'postgres';
import type { DbPool } from '../../../src/types.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { hyperdStanding } from '../../helpers/hyperd-log.ts';
import { markerMultiScenario } from '../../helpers/marker-multi.ts';
import { type PostgresServer, startPostgres } from '../../helpers/postgres.ts';
import { cli } from '../../helpers/proc.ts';
import { type SharedHyperd, startSharedHyperd } from '../../helpers/shared-hyperd.ts';

const SCENARIO = 'two processes share 40 job folders without duplicates; one SIGKILLed, its claimed folders are taken over whole';

describe('two processes on one inbox, --ready marker (PostgreSQL)', { timeout: 180_000 }, () => {
  let pg: PostgresServer;
  let root: string;
  let sql: postgres.Sql;
  before(async () => {
    pg = await startPostgres();
    root = await tempDir('hyperwatch-marker-multi-');
    sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await pg?.stop();
    await removeDir(root);
  });

  it(SCENARIO, async () => {
    await markerMultiScenario({
      root,
      db: ['--adapter', 'postgres', '--url', pg.url],
      query: (text) => sql.unsafe(text),
    });
  });
});

describe('two processes on one inbox, --ready marker (one shared hyperd, --endpoint)', { timeout: 180_000 }, () => {
  let shared: SharedHyperd;
  let pool: DbPool;
  before(async () => {
    shared = await startSharedHyperd('hyperwatch-marker-multi-hyper-');
  });
  after(async () => {
    await pool?.close();
    await shared?.stop();
  });

  it(SCENARIO, async () => {
    const { root, endpoint, database, logDir } = shared;
    const db = ['--endpoint', endpoint, '--database', database];
    // The database and hyperwatch's own tables made first, by one run on an empty inbox, as
    // test/scenarios/crash/mode-kill-hyper.test.ts does: processes first opening a new database
    // at once can crash hyperd.
    const empty = join(root, 'empty');
    await mkdir(empty);
    const made = await cli(['watch', empty, '--table', 'events', ...db, '--once']).done;
    assert.equal(made.code, 0, made.stderr);
    pool = await shared.check.openPool({ maxConnections: 1 });
    await markerMultiScenario({ root, db, query: (text) => pool.query(text), explain: () => hyperdStanding(logDir) });
  });
});
