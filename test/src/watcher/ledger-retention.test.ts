/**
 * `ledgerRetention`: a watcher removes its directory's ledger rows older than the retention at
 * start, on the embedded hyperd and on PostgreSQL, and keeps every row recovery or a takeover may
 * still ask about (a claim staged in any folder, a process that still holds a lease), rows of
 * other directories, and recent ones; a kept row then settles its claim (not ingested again).
 * A bad value is refused by the API, the CLI (exit 2) and a serve config.
 */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openWatcher, WatchConfigError } from '../../../src/api.ts';
import { parseDuration } from '../../../src/util/duration.ts';
import { silentLogger } from '../../../src/log.ts';
import { ledgerRetentionProblem } from '../../../src/options/checks.ts';
import { prepareOwnTables } from '../../../src/store/own-layout.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import { ConfigError, validateConfig } from '../../../src/serve/config.ts';
import { stagedClaims } from '../../../src/watcher/retention.ts';
import type { DbPool } from '../../../src/types.ts';
import { csv, drop, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { count, removeDir, tempDir } from '../../helpers/env.ts';
import { embeddedTarget, postgresTarget, type Target } from '../../helpers/own-schema-targets.ts';
import { cli } from '../../helpers/proc.ts';

describe('ledgerRetention values', () => {
  it('takes durations such as 90d, 12h, 30m, 1d12h; refuses anything else', () => {
    assert.equal(parseDuration('90d'), 90 * 86_400_000);
    assert.equal(parseDuration('12h'), 12 * 3_600_000);
    assert.equal(parseDuration('30m'), 30 * 60_000);
    assert.equal(parseDuration('1d12h'), 36 * 3_600_000);
    for (const ok of ['90d', '12h', '30m', '45s', '2w', '1D']) assert.equal(ledgerRetentionProblem(ok), undefined, ok);
    for (const bad of ['0d', '90', 'd', '-1d', '1.5d', '90 days', '', 90])
      assert.match(ledgerRetentionProblem(bad) ?? '', /not a duration such as "90d"/, String(bad));
  });

  it('a bad value: the API refuses it, the CLI exits 2 naming the flag, a serve config names the field', async () => {
    const dir = await tempDir('hyperwatch-retention-bad-');
    try {
      await assert.rejects(
        openWatcher(dir, 't', { ledgerRetention: '90 days', registry: new WatcherRegistry() }),
        (e: unknown) => e instanceof WatchConfigError && /ledgerRetention is "90 days", not a duration/.test(e.message),
      );
      const run = await cli(['watch', dir, '--table', 't', '--database', join(dir, 'x.hyper'), '--ledger-retention', '5x', '--once']).done;
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /--ledger-retention is "5x", not a duration such as "90d", "12h" or "30m"/);
      for (const [value, problem] of [
        ['soon', /is "soon", not a duration/],
        ['0d', /is "0d", not a duration/],
      ] as const) {
        const error = await validateConfig({ watchers: [{ dir, table: 't', ledgerRetention: value }] }, 'c.json', {
          baseDir: dir,
          env: {},
        }).catch((e: unknown) => e);
        assert.ok(error instanceof ConfigError, String(error));
        assert.deepEqual(
          error.issues.map((i) => i.path),
          ['watchers[0].ledgerRetention'],
        );
        assert.match(error.issues[0]!.problem, problem);
      }
      const accepted = await validateConfig({ watchers: [{ dir, table: 't', ledgerRetention: '90d' }] }, 'c.json', {
        baseDir: dir,
        env: {},
      });
      assert.equal(accepted.watchers[0]!.ledgerRetention, '90d');
    } finally {
      await removeDir(dir);
    }
  });

  it("stagedClaims lists every claim under staging: any owner's folder, folders taken over inside them, loose claims", async () => {
    const root = await tempDir('hyperwatch-retention-staged-');
    try {
      await mkdir(join(root, 'a', '.from-b'), { recursive: true });
      await writeFile(join(root, 'a', 'c1~x.csv'), '');
      await writeFile(join(root, 'a', 'c1~x.csv.ready'), '');
      await writeFile(join(root, 'a', '.from-b', 'c2~y.csv.rejected.csv'), '');
      await writeFile(join(root, 'c3~loose.csv'), '');
      await writeFile(join(root, 'a', '.ledger-t1.csv'), '');
      assert.deepEqual([...((await stagedClaims(root)) ?? [])].sort(), ['c1', 'c2', 'c3']);
      assert.deepEqual([...((await stagedClaims(join(root, 'missing'))) ?? ['?'])], []);
    } finally {
      await removeDir(root);
    }
  });
});

const DAY = 86_400_000;

/** A ledger row committed `agoMs` ago by the database's clock. */
async function ledgerRow(pool: DbPool, claim: string, directory: string, agoMs: number, owner: string | null): Promise<void> {
  await pool.query(
    `INSERT INTO hyperwatch_internal.ingest_log (claim_id, file_name, file_size, row_count, target_table, directory, ` +
      `committed_at, checksum, rows_rejected, owner)
     VALUES ('${claim}', '${claim}.csv', 10, 1, 'events', '${directory}', CURRENT_TIMESTAMP - INTERVAL ` +
      `'${Math.floor(agoMs / 1000)} seconds', NULL, NULL, ${owner === null ? 'NULL' : `'${owner}'`})`,
  );
}

/** A lease row of another live process, expiring in `inMs`, with its fence rows. */
async function liveLease(pool: DbPool, owner: string, directory: string, inMs: number): Promise<void> {
  await pool.query(
    `INSERT INTO hyperwatch_internal.leases (owner, host, pid, directory, target_table, token, started_at, renewed_at, ` +
      `expires_at, taken_by, holding)
     VALUES ('${owner}', 'other-host', 1, '${directory}', 'events', 1, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, ` +
      `CURRENT_TIMESTAMP + INTERVAL '${Math.floor(inMs / 1000)} seconds', NULL, 1)`,
  );
  await pool.query(`INSERT INTO hyperwatch_internal.fences (owner, slot, token, uses) VALUES ('${owner}', 0, 1, 0)`);
}

async function claimsIn(pool: DbPool): Promise<string[]> {
  return (await pool.query<{ claim_id: string }>('SELECT claim_id FROM hyperwatch_internal.ingest_log ORDER BY claim_id')).map(
    (r) => r.claim_id,
  );
}

const targets: [string, () => Promise<Target>][] = [
  ['embedded hyperd', async () => embeddedTarget()],
  ['PostgreSQL', postgresTarget],
];

for (const [name, makeTarget] of targets) {
  describe(`ledgerRetention, on ${name}`, () => {
    let target: Target | undefined;
    before(async () => {
      target = await makeTarget();
    });
    after(async () => {
      await target?.stop();
    });

    it("removes old rows of its directory at start; keeps staged claims', live processes', other directories' and recent ones; \
a kept row settles its claim later", {
      timeout: 120_000,
    }, async () => {
      const fresh = await target!.fresh();
      try {
        const dir = join(fresh.root, 'inbox');
        await mkdir(dir);
        await prepareOwnTables(fresh.pool, { log: silentLogger });
        await fresh.pool.query('CREATE TABLE public.events (id BIGINT)');
        // Another process, alive (its lease runs for an hour), holds in its folder a claim that a
        // process now gone committed 100 days ago and that it took over but has not settled yet.
        const alive = 'other-host-77-cafe';
        await liveLease(fresh.pool, alive, dir, 3_600_000);
        const folder = join(dir, '.hyperwatch', 'staging', alive);
        await mkdir(folder, { recursive: true });
        await writeFile(join(folder, 'staged-old~s.csv'), 'id\n500\n');
        await writeFile(join(folder, 'staged-old~s.csv.ready'), '');
        await fresh.pool.query('INSERT INTO public.events VALUES (500)');
        await ledgerRow(fresh.pool, 'staged-old', dir, 100 * DAY, 'gone-1');
        await ledgerRow(fresh.pool, 'settled-old', dir, 100 * DAY, 'gone-1');
        await ledgerRow(fresh.pool, 'settled-old-no-owner', dir, 100 * DAY, null);
        await ledgerRow(fresh.pool, 'live-process-old', dir, 100 * DAY, alive);
        await ledgerRow(fresh.pool, 'other-dir-old', '/somewhere/else', 100 * DAY, 'gone-1');
        await ledgerRow(fresh.pool, 'recent', dir, 29 * DAY, 'gone-1');
        await drop(dir, 'new.csv', csv('id', [[1]]));

        const handle = await openWatcher(dir, 'events', {
          db: fresh.adapter(),
          registry: new WatcherRegistry(),
          ledgerRetention: '30d',
          leaseMs: 1000,
        });
        await handle.whenIdle();
        const claims = await claimsIn(fresh.pool);
        assert.ok(
          !claims.includes('settled-old') && !claims.includes('settled-old-no-owner'),
          `old settled rows removed: ${claims.join(', ')}`,
        );
        for (const kept of ['staged-old', 'live-process-old', 'other-dir-old', 'recent'])
          assert.ok(claims.includes(kept), `${kept} kept: ${claims.join(', ')}`);
        assert.equal(claims.length, 5, `the four kept and new.csv's: ${claims.join(', ')}`);
        const newClaim = claims.find((c) => !['staged-old', 'live-process-old', 'other-dir-old', 'recent'].includes(c));

        // The other process dies: its lease expires, this watcher takes its folder over, and the
        // kept row says the staged claim was committed: removed, not ingested again.
        await fresh.pool.query(
          `UPDATE hyperwatch_internal.leases SET expires_at = CURRENT_TIMESTAMP - INTERVAL '1 seconds' WHERE owner = '${alive}'`,
        );
        await waitFor(async () => (await stagedEntries(dir)).length === 0, "the dead process's claim to settle", 30000);
        await handle.stop();
        assert.equal(handle.stats.takenOver, 1);
        assert.equal(await count(fresh.pool, 'public.events', 'id = 500'), 1, 'the committed claim was not ingested again');
        assert.equal(await count(fresh.pool, 'public.events'), 2);

        // Without ledgerRetention nothing goes, however old.
        const again = await openWatcher(dir, 'events', { db: fresh.adapter(), registry: new WatcherRegistry() });
        await again.whenIdle();
        await again.stop();
        assert.ok((await claimsIn(fresh.pool)).includes('live-process-old'));

        // With it again: the claim is settled and its process gone, so their rows go now.
        const third = await openWatcher(dir, 'events', { db: fresh.adapter(), registry: new WatcherRegistry(), ledgerRetention: '30d' });
        await third.whenIdle();
        await third.stop();
        assert.deepEqual(
          (await claimsIn(fresh.pool)).filter((c) => c !== newClaim),
          ['other-dir-old', 'recent'],
        );
      } finally {
        await fresh.close();
      }
    });
  });
}
