/**
 * The FS adapter contract, run on every adapter this runtime has: node:fs watch, @parcel/watcher,
 * polling, and Deno.watchFs on Deno. An adapter that cannot run here is reported as skipped with
 * the reason, never left out silently.
 */
import assert from 'node:assert/strict';
import { appendFile, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { after, before, describe, it } from 'node:test';
import { denoFsAdapter, isDenoRuntime } from '../../../adapters/fs/deno/index.ts';
import { nodeFsAdapter } from '../../../adapters/fs/node/index.ts';
import { pollFsAdapter } from '../../../adapters/fs/poll/index.ts';
import type { FsAdapter, FsSubscription } from '../../../src/types.ts';
import { drop, waitFor } from '../../helpers/drop.ts';

function runtimeName(): string {
  if (isDenoRuntime()) return 'Deno';
  if ((process.versions as Record<string, string | undefined>).bun) return 'Bun';
  return 'Node.js';
}

/** @parcel/watcher is a native module: load it only to learn whether it works here. */
async function parcelFactory(): Promise<{ make?: () => FsAdapter; unavailable?: string }> {
  try {
    const { parcelFsAdapter } = await import('../../../adapters/fs/parcel/index.ts');
    return { make: () => parcelFsAdapter() };
  } catch (error) {
    return { unavailable: `@parcel/watcher does not load on ${runtimeName()} ${process.platform}-${process.arch}: ${String(error)}` };
  }
}

interface Candidate {
  readonly name: string;
  readonly make?: () => FsAdapter;
  /** Why the adapter cannot run in this runtime (the suite is then reported as skipped). */
  readonly unavailable?: string;
}

const parcel = await parcelFactory();
const candidates: Candidate[] = [
  { name: 'node-fs', make: () => nodeFsAdapter() },
  { name: 'parcel', ...parcel },
  { name: 'poll', make: () => pollFsAdapter({ intervalMs: 25 }) },
  isDenoRuntime()
    ? { name: 'deno', make: () => denoFsAdapter() }
    : { name: 'deno', unavailable: `Deno.watchFs exists only on Deno, this is ${runtimeName()}` },
];

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Long enough for every adapter to have reported (parcel batches ~50 ms, poll runs every 25 ms). */
const QUIET_MS = 300;

for (const candidate of candidates) {
  if (!candidate.make) {
    describe(`FS adapter contract: ${candidate.name}`, () => {
      it(`cannot run here: ${candidate.unavailable}`, { skip: candidate.unavailable ?? true }, () => {});
    });
    continue;
  }
  const make = candidate.make;

  describe(`FS adapter contract: ${candidate.name}`, () => {
    let root: string;
    let n = 0;
    const open: FsSubscription[] = [];

    /** A fresh watched directory and a subscription that records every name reported. */
    async function watch(): Promise<{ dir: string; outside: string; seen: string[]; errors: unknown[]; sub: FsSubscription }> {
      const dir = join(root, `w${++n}`);
      const outside = join(root, `o${n}`);
      await mkdir(dir);
      await mkdir(outside);
      const seen: string[] = [];
      const errors: unknown[] = [];
      const sub = await make().subscribe(
        dir,
        (names) => seen.push(...names),
        (error) => errors.push(error),
      );
      open.push(sub);
      // parcel starts its backend thread asynchronously; give every adapter a moment.
      await sleep(50);
      return { dir, outside, seen, errors, sub };
    }

    before(async () => {
      root = await mkdtemp(join(tmpdir(), 'hyperwatch-fs-contract-'));
    });
    after(async () => {
      await Promise.all(open.map((s) => s.close()));
      await rm(root, { recursive: true, force: true });
    });

    it('declares a name and whether it may lose events', () => {
      const adapter = make();
      assert.equal(typeof adapter.name, 'string');
      assert.ok(adapter.name.length > 0);
      assert.equal(typeof adapter.mayLoseEvents, 'boolean');
    });

    it('reports a file renamed into the directory, by its bare name', async () => {
      const { dir, outside, seen } = await watch();
      await writeFile(join(outside, 'moved.csv'), 'id\n1\n');
      await rename(join(outside, 'moved.csv'), join(dir, 'moved.csv'));
      await waitFor(() => seen.includes('moved.csv'), 'moved.csv to be reported', 5000);
      for (const name of seen) assert.ok(!name.includes('/') && !name.includes('\\'), `bare names only, got ${name}`);
    });

    it('reports both files of a protocol drop (temp file, rename, then the sentinel)', async () => {
      const { dir, seen } = await watch();
      await drop(dir, 'batch-1.csv', 'id\n1\n');
      await waitFor(() => seen.includes('batch-1.csv') && seen.includes('batch-1.csv.ready'), 'batch-1.csv and its .ready', 5000);
    });

    it('reports a file created in place, and again when it changes', async () => {
      const { dir, seen } = await watch();
      await writeFile(join(dir, 'grow.csv'), 'id\n');
      await waitFor(() => seen.includes('grow.csv'), 'grow.csv to be reported', 5000);
      await sleep(QUIET_MS);
      const before = seen.filter((s) => s === 'grow.csv').length;
      await appendFile(join(dir, 'grow.csv'), '1\n2\n');
      await waitFor(() => seen.filter((s) => s === 'grow.csv').length > before, 'the change to grow.csv to be reported', 5000);
    });

    it('reports 100 files renamed in at once, each of them', async () => {
      const { dir, outside, seen } = await watch();
      const names = Array.from({ length: 100 }, (_, i) => `many-${i}.csv`);
      await Promise.all(names.map((name) => writeFile(join(outside, name), 'x\n')));
      await Promise.all(names.map((name) => rename(join(outside, name), join(dir, name))));
      await waitFor(() => names.every((name) => seen.includes(name)), 'all 100 files to be reported', 5000);
    });

    it('does not report entries of a subdirectory (the watch is not recursive)', async () => {
      const { dir, seen } = await watch();
      await mkdir(join(dir, 'failed'));
      await sleep(QUIET_MS);
      await writeFile(join(dir, 'failed', 'inner.csv'), 'x\n');
      await writeFile(join(dir, 'top.csv'), 'x\n');
      await waitFor(() => seen.includes('top.csv'), 'top.csv to be reported', 5000);
      await sleep(QUIET_MS);
      assert.ok(!seen.includes('inner.csv'), `reported a subdirectory's entry: ${JSON.stringify(seen)}`);
    });

    it('reports nothing after close, and close resolves', async () => {
      const { dir, outside, seen, sub } = await watch();
      await sub.close();
      await writeFile(join(outside, 'late.csv'), 'x\n');
      await rename(join(outside, 'late.csv'), join(dir, 'late.csv'));
      await sleep(QUIET_MS);
      assert.deepEqual(seen, []);
    });

    it('fails a subscription to a directory that does not exist', async () => {
      const errors: unknown[] = [];
      let sub: FsSubscription;
      try {
        sub = await make().subscribe(
          join(root, 'missing'),
          () => {},
          (error) => errors.push(error),
        );
      } catch {
        return; // rejected: the contract
      }
      try {
        // Tolerated for node:fs watch on Deno only: there fs.watch() returns a watcher and emits
        // ENOENT as an 'error' event a tick later (Node.js and Bun throw at once).
        assert.ok(candidate.name === 'node-fs' && isDenoRuntime(), `${candidate.name} resolved a subscription to a missing directory`);
        await waitFor(() => errors.length > 0, 'ENOENT reported through onError', 1000);
      } finally {
        await sub.close();
      }
    });

    it('reports no error on a healthy directory', async () => {
      const { dir, errors } = await watch();
      await drop(dir, 'ok.csv', 'id\n1\n');
      await sleep(QUIET_MS);
      assert.deepEqual(errors, []);
    });
  });
}
