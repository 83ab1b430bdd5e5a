/**
 * A PostgreSQL database other programs use, with a loader role that may write but not create
 * tables (what a DBA grants a loading job): refused at start with the grants to ask for while
 * hyperwatch's own schema and tables are missing, and while it may not reach them; once an owner
 * created them (by running hyperwatch once) and granted them, the loader runs, into a table with a serial key, a default, an identity and a
 * generated column, none of them in the file.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import postgres from 'postgres';
import { createPostgresAdapter } from '../../../../adapters/db/postgres/index.ts';
import { startWatching, stopWatching } from '../../../../src/api.ts';
import { csv, drop } from '../../../helpers/drop.ts';
import { removeDir, tempDir } from '../../../helpers/env.ts';
import { startPostgres } from '../../../helpers/postgres.ts';
import { cli } from '../../../helpers/proc.ts';

const pg = await startPostgres();
const admin = postgres(pg.url, { onnotice: () => {}, max: 1 });
/** The test's folders, removed with the server. */
const dirs: string[] = [];
after(async () => {
  await admin.end({ timeout: 1 });
  await pg.stop();
  for (const dir of dirs) await removeDir(dir);
});

function loaderUrl(): string {
  const url = new URL(pg.url);
  url.username = 'loader';
  url.password = 'loader-pw';
  return url.toString();
}

describe('a loader role without CREATE on the schema', () => {
  it('is told what to grant while hyperwatch has no tables yet; runs once an owner made them', async () => {
    await admin.unsafe(`CREATE ROLE loader LOGIN PASSWORD 'loader-pw'`);
    await admin.unsafe(
      `CREATE TABLE sales (id serial PRIMARY KEY, name text NOT NULL, amount numeric(10,2), loaded_at timestamptz NOT NULL ` +
        `DEFAULT now(), seq bigint GENERATED ALWAYS AS IDENTITY, cents bigint GENERATED ALWAYS AS ((amount * 100)::bigint) ` +
        `STORED)`,
    );
    await admin.unsafe(`GRANT SELECT, INSERT ON sales TO loader`);
    await admin.unsafe(`GRANT USAGE ON SEQUENCE sales_id_seq TO loader`);
    await admin.unsafe(`REVOKE CREATE ON SCHEMA public FROM PUBLIC`);

    const inbox = await tempDir('hyperwatch-roles-');
    dirs.push(inbox);
    await drop(
      inbox,
      'a.csv',
      csv('name,amount', [
        ['x', 1.5],
        ['y', 2],
      ]),
    );
    const refused = await cli(['watch', inbox, '--table', 'sales', '--adapter', 'postgres', '--url', loaderUrl(), '--once']).done;
    assert.notEqual(refused.code, 0);
    assert.match(
      refused.stderr,
      /may not create hyperwatch's schema hyperwatch_internal \(permission denied for database hyperwatch_test\)/,
    );
    assert.match(
      refused.stderr,
      new RegExp(
        /GRANT USAGE ON SCHEMA hyperwatch_internal TO this role and /.source +
          /GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA hyperwatch_internal/.source,
      ),
    );
    assert.equal(Number((await admin.unsafe('SELECT COUNT(*) AS n FROM sales'))[0]!.n), 0);

    // An owner runs hyperwatch once (it creates its tables), and grants them to the loader.
    const ownerDb = createPostgresAdapter({ url: pg.url });
    const ownerDir = await tempDir('hyperwatch-roles-owner-');
    dirs.push(ownerDir);
    await startWatching(ownerDir, 'sales', { db: ownerDb });
    await stopWatching(ownerDir);
    await ownerDb.close();
    // The tables exist now, but the loader may not reach them yet: told what to grant.
    const ungranted = await cli(['watch', inbox, '--table', 'sales', '--adapter', 'postgres', '--url', loaderUrl(), '--once']).done;
    assert.notEqual(ungranted.code, 0);
    assert.match(
      ungranted.stderr,
      new RegExp(
        /may not write hyperwatch's tables hyperwatch_internal\.leases and hyperwatch_internal\.fences /.source +
          /\(permission denied for schema hyperwatch_internal\)/.source,
      ),
    );
    assert.match(ungranted.stderr, /GRANT USAGE ON SCHEMA hyperwatch_internal TO this role/);
    assert.equal(Number((await admin.unsafe('SELECT COUNT(*) AS n FROM sales'))[0]!.n), 0);
    await admin.unsafe(`GRANT USAGE ON SCHEMA hyperwatch_internal TO loader`);
    await admin.unsafe(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA hyperwatch_internal TO loader`);

    const run = await cli(['watch', inbox, '--table', 'sales', '--adapter', 'postgres', '--url', loaderUrl(), '--once', '--json']).done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).stats.rowsIngested, 2);
    const rows = await admin.unsafe<{ id: number; name: string; amount: string; loaded: boolean; seq: string; cents: string }[]>(
      `SELECT id, name, amount, loaded_at IS NOT NULL AS loaded, seq, cents FROM sales ORDER BY id`,
    );
    // serial and DEFAULT, an identity and a generated column: all filled by PostgreSQL.
    assert.deepEqual(
      rows.map((r) => [r.id, r.name, r.amount, r.loaded, Number(r.seq), Number(r.cents)]),
      [
        [1, 'x', '1.50', true, 1, 150],
        [2, 'y', '2.00', true, 2, 200],
      ],
    );
    const ledger = await admin.unsafe<{ n: string }[]>(
      `SELECT COUNT(*) AS n FROM hyperwatch_internal.ingest_log WHERE target_table = 'sales'`,
    );
    assert.equal(Number(ledger[0]!.n), 1);
  });
});
