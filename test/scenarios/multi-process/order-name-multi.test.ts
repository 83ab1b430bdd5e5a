/**
 * `order: 'name'` across processes: two `hyperwatch watch --mode upsert --key id --order name`
 * processes on one inbox (PostgreSQL; hyperd shared by endpoint). A large first file is claimed
 * by one of them; a small second one, with the same keys, arrives while it loads, and the other
 * process (idle) would claim it at once. Without the order kept across processes the small file commits first
 * and the large one overwrites it; with it, the second process waits for the first file's commit,
 * so the table holds the second file's values: what applying both in name order gives.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import postgres from 'postgres';
import type { DbPool } from '../../../src/types.ts';
import { drop, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { type Member, startMember, stopAll } from '../../helpers/fleet.ts';
import { cli } from '../../helpers/proc.ts';
import { type PostgresServer, startPostgres } from '../../helpers/postgres.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { type SharedHyperd, startSharedHyperd } from '../../helpers/shared-hyperd.ts';

const LEASE_MS = 5000;
/** Rows of the first file: enough that its load takes a while (seconds on PostgreSQL). */
const LARGE = 400_000;
const KEYS = 10;
const MODE = ['--mode', 'upsert', '--key', 'id', '--order', 'name', '--log-level', 'debug'];

async function scenario(
  root: string,
  db: readonly string[],
  query: (sql: string) => Promise<Record<string, unknown>[]>,
): Promise<{ members: Member[]; first: string; second: string }> {
  const dir = join(root, 'inbox');
  await mkdir(dir);
  const members = [
    startMember('a', dir, 'customers', LEASE_MS, [...db, ...MODE]),
    startMember('b', dir, 'customers', LEASE_MS, [...db, ...MODE]),
  ];
  try {
    await waitFor(() => members.every((m) => m.owner() !== undefined), 'both processes to take their lease', 30_000);
    const rows = Array.from({ length: LARGE }, (_, i) => `${i},0`).join('\n');
    await drop(dir, 'f-0001.csv', `id,batch\n${rows}\n`);
    await waitFor(async () => (await stagedEntries(dir)).some((n) => n.endsWith('~f-0001.csv')), 'f-0001.csv to be claimed', 30_000);
    const small = Array.from({ length: KEYS }, (_, i) => `${i},1`).join('\n');
    await drop(dir, 'f-0002.csv', `id,batch\n${small}\n`);
    await waitFor(
      async () =>
        (await leftovers(dir)).length === 0 && members.flatMap((m) => m.lines).filter((l) => l.message === 'ingested').length === 2,
      'both files to land',
      120_000,
    );
    const byFile = (file: string) => members.find((m) => m.lines.some((l) => l.message === 'ingested' && l.fields.file === file));
    const first = byFile('f-0001.csv')?.name ?? '?';
    const second = byFile('f-0002.csv')?.name ?? '?';
    const [stats] = await query(
      'SELECT COUNT(*) AS n, SUM(CASE WHEN batch = 1 THEN 1 ELSE 0 END) AS second, ' +
        `SUM(CASE WHEN batch = 1 AND id >= ${KEYS} THEN 1 ELSE 0 END) AS wrong FROM customers`,
    );
    assert.deepEqual(
      [Number(stats!.n), Number(stats!.second), Number(stats!.wrong)],
      [LARGE, KEYS, 0],
      `the table after both files (f-0001.csv by ${first}, f-0002.csv by ${second}): the second file's ${KEYS} rows must win`,
    );
    return { members, first, second };
  } finally {
    await stopAll(members);
  }
}

/**
 * The process that did not load the first file saw the second one while the first loaded, and
 * waited for it (then one of the two loaded the second: whichever claimed it first after the
 * commit). Without the wait it would have loaded the second at once, and the table's check fails.
 */
function assertWaited(run: { members: Member[]; first: string; second: string }): void {
  const other = run.members.find((m) => m.name !== run.first)!;
  assert.ok(
    other.lines.some((l) => l.message === 'order name: waiting for an earlier file' && l.fields.earlier === 'f-0001.csv'),
    `${other.name} (f-0001.csv was ${run.first}'s, f-0002.csv ${run.second}'s) said it waited for f-0001.csv`,
  );
}

describe("order: 'name' across processes (PostgreSQL)", { timeout: 180_000 }, () => {
  let pg: PostgresServer;
  let root: string;
  let sql: postgres.Sql;
  before(async () => {
    pg = await startPostgres();
    root = await tempDir('hyperwatch-order-multi-');
    sql = postgres(pg.url, { max: 2, onnotice: () => {} });
  });
  after(async () => {
    await sql?.end({ timeout: 5 });
    await pg?.stop();
    await removeDir(root);
  });

  it('a file claimed by the idle process waits for the earlier file another process is loading', async () => {
    const run = await scenario(root, ['--adapter', 'postgres', '--url', pg.url], (q) => sql.unsafe(q));
    assertWaited(run);
  });
});

describe("order: 'name' across processes (hyperd by endpoint)", { timeout: 180_000 }, () => {
  let shared: SharedHyperd;
  let pool: DbPool | undefined;
  before(async () => {
    shared = await startSharedHyperd('hyperwatch-order-multi-hyper-');
  });
  after(async () => {
    await pool?.close();
    await shared?.stop();
  });

  it('a file claimed by the idle process waits for the earlier file another process is loading', async () => {
    const db = ['--endpoint', shared.endpoint, '--database', shared.database];
    // The database and hyperwatch's own tables first, by one run on an empty inbox (as
    // test/scenarios/crash/mode-kill-hyper.test.ts does: two processes opening a new database at once).
    const empty = join(shared.root, 'empty');
    await mkdir(empty);
    await writeFile(join(empty, '.keep'), '');
    const made = await cli(['watch', empty, '--table', 'customers', ...db, '--once']).done;
    assert.equal(made.code, 0, made.stderr);
    pool = await shared.check.openPool({ maxConnections: 1 });
    const opened = pool;
    const run = await scenario(shared.root, db, (q) => opened.query(q));
    assertWaited(run);
  });
});
