/**
 * The move of an earlier version's tables killed half way, on a hyperd started by hand (as
 * `--endpoint` shares one: what the killed process committed stays in it) and on PostgreSQL: a
 * child process (test/fixtures/move-child.ts) SIGKILLs itself right after each step of the move,
 * inside its transaction too, and in another round is SIGKILLed at random moments, again and
 * again; and several children start at once. After every kill each ledger row is in the old
 * table or the new one, exactly once; then a watcher starts, finishes the move, and settles the
 * dead process's staged claims: nothing lost, nothing twice.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { openWatcher } from '../../../src/api.ts';
import { readHistory } from '../../../src/store/history.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import { testScript } from '../../helpers/dist.ts';
import { stagedEntries, waitFor } from '../../helpers/drop.ts';
import { ledgerClaims, makeOldLayout, type OldInbox, oldInbox, tablesIn } from '../../helpers/old-layout.ts';
import { type ChildSpec, type FreshDatabase, hyperdTarget, postgresTarget, type Target } from '../../helpers/own-schema-targets.ts';

/** Every step a move goes through, in order (see src/store/own-layout.ts). */
const STEPS = [
  'tables ready',
  'copied public.hyperwatch_fences',
  'copied public.hyperwatch_leases',
  'copied public.hyperwatch_ingest_log',
  'rows moved',
  'dropped public.hyperwatch_fences',
  'dropped public.hyperwatch_leases',
];

interface ChildRun {
  readonly output: () => string;
  /** Resolves once it printed `opened` (about to move). */
  readonly opened: Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

function moveChild(spec: ChildSpec, stopAt?: string): ChildRun {
  const child = spawn(process.execPath, [...testScript('test/fixtures/move-child.ts'), JSON.stringify(spec), ...(stopAt ? [stopAt] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const opened = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', () => {
      if (out.includes('opened\n')) resolve();
    });
    void exited.then(() =>
      out.includes('opened\n') ? resolve() : reject(new Error(`the child exited before opening the database: ${out}`)),
    );
  });
  opened.catch(() => {});
  return { output: () => out, opened, exited, kill: () => child.kill('SIGKILL') };
}

/** The rows of the ledger, old and new: each claim exactly once, whatever moment the kill came. */
async function assertLedgerWhole(fresh: FreshDatabase, old: OldInbox, when: string): Promise<void> {
  const claims = await ledgerClaims(fresh.pool);
  assert.equal(claims.length, old.ledgerRows, `${when}: ledger rows, old and new together`);
  assert.equal(new Set(claims).size, old.ledgerRows, `${when}: no claim twice`);
}

/** A watcher finishes the move and the dead process's claims: everything there once. */
async function assertSettledByWatcher(fresh: FreshDatabase, old: OldInbox): Promise<void> {
  const handle = await openWatcher(old.dir, 'events', { db: fresh.adapter(), registry: new WatcherRegistry(), leaseMs: 1000 });
  try {
    await waitFor(async () => (await stagedEntries(old.dir)).length === 0, "the dead process's claims to settle", 30000);
  } finally {
    await handle.stop();
  }
  assert.deepEqual(await tablesIn(fresh.pool, 'public'), ['events'], 'the old tables are gone');
  assert.deepEqual(await tablesIn(fresh.pool, 'hyperwatch_internal'), ['fences', 'ingest_log', 'leases']);
  const ids = (await fresh.pool.query<{ id: string }>('SELECT id FROM public.events ORDER BY id')).map((r) => Number(r.id));
  assert.deepEqual(
    ids,
    [...old.ids].sort((a, b) => a - b),
    'every id once',
  );
  const claims = await ledgerClaims(fresh.pool);
  assert.equal(claims.length, old.ledgerRows + 1);
  assert.equal(new Set(claims).size, claims.length);
  assert.equal((await readHistory(fresh.pool)).filter((e) => e.file === 'x.csv').length, 1);
}

const targets: [string, () => Promise<Target>][] = [
  ['a hyperd shared as --endpoint shares one', hyperdTarget],
  ['PostgreSQL', postgresTarget],
];

for (const [name, makeTarget] of targets) {
  describe(`the move killed half way, on ${name}`, () => {
    let target: Target | undefined;
    before(async () => {
      target = await makeTarget();
    });
    after(async () => {
      await target?.stop();
    });

    for (const step of STEPS) {
      it(`SIGKILLed right after "${step}": every row once, and the next start finishes it`, { timeout: 120_000 }, async () => {
        const fresh = await target!.fresh();
        try {
          const old = await oldInbox(fresh.pool, fresh.root);
          const run = moveChild(fresh.spec, step);
          const exit = await run.exited;
          assert.equal(exit.signal, 'SIGKILL', run.output());
          assert.ok(run.output().includes(`at ${step}\n`), run.output());
          await assertLedgerWhole(fresh, old, `killed after ${step}`);
          await assertSettledByWatcher(fresh, old);
        } finally {
          await fresh.close();
        }
      });
    }

    it('SIGKILLed at random moments, start after start, until one finishes: every row once after each', { timeout: 300_000 }, async () => {
      const fresh = await target!.fresh();
      try {
        // Enough rows that the move takes a while to be killed in.
        const old = await oldInbox(fresh.pool, fresh.root, 5000);
        let seed = 7;
        const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
        /** Per start: the last step it reached before the kill, or `done`. */
        const outcomes: string[] = [];
        for (let round = 0; round < 40; round++) {
          const run = moveChild(fresh.spec);
          await run.opened;
          // Later and later: early rounds die around the start of the move, later ones inside or after it.
          // The move can take under 60 ms here (PostgreSQL, the child compiled), so the first
          // rounds' kills come within 20 ms and 80 ms of its start.
          await new Promise((r) => setTimeout(r, Math.floor(random() * (20 + 60 * round))));
          run.kill();
          const exit = await run.exited;
          const steps = [...run.output().matchAll(/^step (.*)$/gm)].map((m) => m[1]!);
          outcomes.push(exit.code === 0 ? 'done' : `killed after ${steps.at(-1) ?? 'opening'}`);
          await assertLedgerWhole(fresh, old, `round ${round} (${outcomes.at(-1)})`);
          if (exit.code === 0) break;
        }
        console.log(`# ${name}: ${outcomes.join('; ')}`);
        assert.equal(outcomes.at(-1), 'done', outcomes.join('; '));
        assert.ok(outcomes.length >= 3, `a few kills landed before the move was done: ${outcomes.join('; ')}`);
        await assertSettledByWatcher(fresh, old);
      } finally {
        await fresh.close();
      }
    });

    it('four processes starting at once on an old database: all start, the rows move once', { timeout: 120_000 }, async () => {
      const fresh = await target!.fresh();
      try {
        const ledger = Array.from({ length: 5000 }, (_, i) => ({
          claimId: `c-${i}`,
          file: `f${i}.csv`,
          rows: 1,
          table: 'events',
          directory: '/in',
          committedAt: new Date(Date.now() - i * 60_000).toISOString(),
          owner: 'o',
        }));
        await makeOldLayout(fresh.pool, { ledger });
        const runs = Array.from({ length: 4 }, () => moveChild(fresh.spec));
        const exits = await Promise.all(runs.map((r) => r.exited));
        assert.deepEqual(
          exits.map((e) => e.code),
          [0, 0, 0, 0],
          runs.map((r) => r.output()).join('\n'),
        );
        const moved = runs.map((r) => JSON.parse(/^done (.*)$/m.exec(r.output())![1]!) as { rows: Record<string, number> } | null);
        assert.equal(
          moved.filter((m) => (m?.rows['public.hyperwatch_ingest_log'] ?? 0) > 0).length,
          1,
          runs.map((r) => r.output()).join('\n'),
        );
        const claims = await ledgerClaims(fresh.pool);
        assert.equal(claims.length, 5000);
        assert.equal(new Set(claims).size, 5000);
        assert.deepEqual(await tablesIn(fresh.pool, 'public'), []);
      } finally {
        await fresh.close();
      }
    });
  });
}
