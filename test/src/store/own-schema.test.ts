/**
 * hyperwatch's own tables in their schema, `hyperwatch_internal`, on the embedded hyperd and on
 * PostgreSQL: a fresh database holds only the user's table in the user's schema; a database an
 * earlier version wrote (its tables in `public`, made with that version's DDL) is moved at start
 * with every ledger row kept and exactly-once holding across it; several processes starting at
 * once move it once; `history` reads the ledger before and after.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openWatcher } from '../../../src/api.ts';
import { readHistory } from '../../../src/store/history.ts';
import { silentLogger } from '../../../src/log.ts';
import { prepareOwnTables } from '../../../src/store/own-layout.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import { csv, drop, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { count, removeDir, tempDir } from '../../helpers/env.ts';
import { ledgerClaims, makeOldLayout, oldInbox, tablesIn } from '../../helpers/old-layout.ts';
import { embeddedTarget, postgresTarget, type Target } from '../../helpers/own-schema-targets.ts';
import { cli } from '../../helpers/proc.ts';

const OWN = ['fences', 'ingest_log', 'leases'];

const targets: [string, () => Promise<Target>][] = [
  ['embedded hyperd', async () => embeddedTarget()],
  ['PostgreSQL', postgresTarget],
];

for (const [name, makeTarget] of targets) {
  let target: Target | undefined;
  const t = (): Target => target!;
  describe(`hyperwatch's own tables, on ${name}`, () => {
    before(async () => {
      target = await makeTarget();
    });
    after(async () => {
      await target?.stop();
    });

    it("a fresh database: the user's table alone in public, the ledger, leases and fences in hyperwatch_internal; history \
lists the files", async () => {
      const fresh = await t().fresh();
      try {
        const dir = join(fresh.root, 'inbox');
        await mkdir(dir);
        await drop(dir, 'a.csv', csv('id', [[1], [2]]));
        await drop(dir, 'b.csv', csv('id', [[3]]));
        const handle = await openWatcher(dir, 'events', { db: fresh.adapter(), registry: new WatcherRegistry() });
        assert.equal(handle.stats.filesIngested, 2, `${t().name}: ${JSON.stringify(handle.stats.lastError)}`);
        // While it runs: its lease row is in hyperwatch_internal.leases.
        assert.equal(await count(fresh.pool, 'hyperwatch_internal.leases'), 1);
        await handle.stop();
        assert.deepEqual(await tablesIn(fresh.pool, 'public'), ['events']);
        assert.deepEqual(await tablesIn(fresh.pool, 'hyperwatch_internal'), OWN);
        assert.equal(await count(fresh.pool, 'public.events'), 3);
        assert.deepEqual(
          (await readHistory(fresh.pool)).map((e) => [e.file, e.table, e.rows]),
          [
            ['a.csv', 'events', 2],
            ['b.csv', 'events', 1],
          ],
        );
      } finally {
        await fresh.close();
      }
    });

    it("an earlier version's tables in public are moved at start: every ledger row kept, its committed staged claim not \
ingested again, its uncommitted one once", async () => {
      const fresh = await t().fresh();
      try {
        const old = await oldInbox(fresh.pool, fresh.root);
        // Before any start of this version, history reads the old ledger.
        assert.equal((await readHistory(fresh.pool)).length, old.ledgerRows);
        const handle = await openWatcher(old.dir, 'events', { db: fresh.adapter(), registry: new WatcherRegistry(), leaseMs: 1000 });
        // The dead process's folder is taken over once its lease (moved with the rest) is seen expired.
        await waitFor(async () => (await stagedEntries(old.dir)).length === 0, "the dead process's claims to settle", 30000);
        // Its lease goes after its claims have settled, in a step of its own: a stop in between
        // leaves it for the next check (it is expired and has no folder), so it is awaited here.
        await waitFor(
          async () => (await count(fresh.pool, 'hyperwatch_internal.leases', "host = 'old-host'")) === 0,
          "the dead process's lease to go",
          30000,
        );
        await handle.stop();
        assert.deepEqual(await tablesIn(fresh.pool, 'public'), ['events']);
        assert.deepEqual(await tablesIn(fresh.pool, 'hyperwatch_internal'), OWN);
        const ids = (await fresh.pool.query<{ id: string }>('SELECT id FROM public.events ORDER BY id')).map((r) => Number(r.id));
        assert.deepEqual(
          ids,
          [...old.ids].sort((a, b) => a - b),
          'every id once',
        );
        const claims = await ledgerClaims(fresh.pool);
        assert.equal(claims.length, old.ledgerRows + 1, 'the old rows and the one of the claim ingested now');
        assert.equal(new Set(claims).size, claims.length);
        assert.ok(claims.includes(old.committedClaim) && claims.includes(old.uncommittedClaim));
        const history = await readHistory(fresh.pool);
        assert.equal(history.length, old.ledgerRows + 1);
        assert.equal(history.filter((e) => e.file === 'x.csv').length, 1);
        assert.equal(handle.stats.takenOver, 2);
        assert.equal(handle.stats.filesIngested, 1, 'y.csv only');
        // The dead process's lease went with the takeover, ours with the stop.
        assert.equal(await count(fresh.pool, 'hyperwatch_internal.leases'), 0);
        assert.equal(await count(fresh.pool, 'hyperwatch_internal.fences'), 0);
        assert.deepEqual(await leftovers(old.dir), []);
      } finally {
        await fresh.close();
      }
    });

    it('a ledger of the first versions (without rows_rejected and owner) moves too, those columns NULL', async () => {
      const fresh = await t().fresh();
      try {
        const at = new Date(Date.now() - 3_600_000).toISOString();
        await makeOldLayout(fresh.pool, {
          ledgerColumns: 'first',
          ledger: [{ claimId: 'c-1', file: 'first.csv', rows: 7, table: 'events', directory: '/in', committedAt: at }],
        });
        const result = await prepareOwnTables(fresh.pool, { log: silentLogger });
        assert.deepEqual(result?.rows, { 'public.hyperwatch_fences': 0, 'public.hyperwatch_leases': 0, 'public.hyperwatch_ingest_log': 1 });
        assert.deepEqual(await tablesIn(fresh.pool, 'public'), []);
        const [entry] = await readHistory(fresh.pool);
        assert.deepEqual(
          [entry?.file, entry?.rows, entry?.rowsRejected, entry?.owner, entry?.committedAt],
          ['first.csv', 7, null, null, at],
        );
        // Done once: the next start finds nothing to move.
        assert.equal(await prepareOwnTables(fresh.pool, { log: silentLogger }), undefined);
      } finally {
        await fresh.close();
      }
    });

    it('several processes starting at once on an old database move it once', async () => {
      const fresh = await t().fresh();
      try {
        const ledger = Array.from({ length: 2000 }, (_, i) => ({
          claimId: `c-${i}`,
          file: `f${i}.csv`,
          rows: 1,
          table: 'events',
          directory: '/in',
          committedAt: new Date(Date.now() - i * 60_000).toISOString(),
          owner: 'o',
        }));
        await makeOldLayout(fresh.pool, {
          ledger,
          leases: [{ owner: 'o', directory: '/in', table: 'events', expiredMsAgo: 1000, slots: 10 }],
        });
        // Each "process" with a connection pool of its own, as separate processes have.
        const adapters = Array.from({ length: 5 }, () => fresh.adapter());
        const pools = await Promise.all(adapters.map((db) => db.openPool({ maxConnections: 1 })));
        try {
          const results = await Promise.all(pools.map((pool) => prepareOwnTables(pool, { log: silentLogger })));
          const movers = results.filter(
            (r) => r !== undefined && r.rows['public.hyperwatch_ingest_log'] !== undefined && r.rows['public.hyperwatch_ingest_log'] > 0,
          );
          assert.equal(movers.length, 1, JSON.stringify(results));
        } finally {
          for (const pool of pools) await pool.close();
        }
        const claims = await ledgerClaims(fresh.pool);
        assert.equal(claims.length, 2000);
        assert.equal(new Set(claims).size, 2000);
        assert.equal(await count(fresh.pool, 'hyperwatch_internal.fences'), 10);
        assert.equal(await count(fresh.pool, 'hyperwatch_internal.leases'), 1);
        assert.deepEqual(await tablesIn(fresh.pool, 'public'), []);
      } finally {
        await fresh.close();
      }
    });
  });
}

describe('a Tableau-style extract on hyperd', () => {
  it('--table Extract.Extract: the schema Extract is made and holds the table alone, public holds nothing, query and history read it', {
    timeout: 120_000,
  }, async () => {
    const root = await tempDir('hyperwatch-extract-');
    try {
      const dir = join(root, 'inbox');
      await mkdir(dir);
      const database = join(root, 'extract.hyper');
      await drop(
        dir,
        'a.csv',
        csv('id,name', [
          [1, 'ann'],
          [2, 'bob'],
        ]),
      );
      await drop(dir, 'b.csv', csv('id,name', [[3, 'cy']]));
      const run = await cli(['watch', dir, '--table', 'Extract.Extract', '--database', database, '--once', '--json']).done;
      assert.equal(run.code, 0, run.stderr);
      assert.equal(JSON.parse(run.stdout).stats.filesIngested, 2);
      const query = async (sql: string) => {
        const q = await cli(['query', '--database', database, '--json', sql]).done;
        assert.equal(q.code, 0, q.stderr);
        return JSON.parse(q.stdout) as Record<string, string>[];
      };
      assert.deepEqual(await query('SELECT id, name FROM "Extract"."Extract" ORDER BY id'), [
        { id: '1', name: 'ann' },
        { id: '2', name: 'bob' },
        { id: '3', name: 'cy' },
      ]);
      const tables = await query(
        `SELECT n.nspname || '.' || c.relname AS t FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid
          WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_temp') ORDER BY 1`,
      );
      assert.deepEqual(
        tables.map((r) => r.t),
        ['Extract.Extract', 'hyperwatch_internal.fences', 'hyperwatch_internal.ingest_log', 'hyperwatch_internal.leases'],
      );
      const history = await cli(['history', '--database', database, '--json']).done;
      assert.equal(history.code, 0, history.stderr);
      assert.deepEqual(
        (JSON.parse(history.stdout) as { file: string; table: string }[]).map((e) => [e.file, e.table]),
        [
          ['a.csv', 'Extract.Extract'],
          ['b.csv', 'Extract.Extract'],
        ],
      );
    } finally {
      await removeDir(root);
    }
  });
});
