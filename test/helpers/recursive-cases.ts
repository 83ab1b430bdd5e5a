/**
 * `recursive: true` (run by test/src/watcher/recursive.test.ts on hyperd and on PostgreSQL): data files in
 * subfolders land, named by their relative path; `failed/`, the archive, dot-folders and symbolic
 * links to folders are left alone; two files of one name in different subfolders stay two files
 * (ledger, failed/, archive, recovery); empty subfolders go, the watched directory stays.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { it } from 'node:test';
import { openWatcher } from '../../src/api.ts';
import { replayFailed } from '../../src/producer/replay.ts';
import { fsAdapterByName } from '../../src/compose.ts';
import { newClaimId } from '../../src/protocol/names.ts';
import { csv, drop, leftovers, stagedEntries, waitFor } from './drop.ts';
import { count } from './env.ts';
import type { WatchBench } from './watch-bench.ts';

/** `drop` into a subfolder (made first): `rel` is `a/b/x.csv`. */
async function dropAt(dir: string, rel: string, content: string): Promise<void> {
  await mkdir(join(dir, dirname(rel)), { recursive: true });
  await drop(join(dir, dirname(rel)), rel.slice(rel.lastIndexOf('/') + 1), content);
}

async function ledgerNames(t: WatchBench, table: string): Promise<string[]> {
  const rows = await t.pool.query<{ file_name: string }>(
    `SELECT file_name FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}' ORDER BY file_name`,
  );
  return rows.map((r) => r.file_name);
}

/** Every file under `dir`, as relative paths, folders by their trailing `/` when empty. */
async function tree(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(join(dir, rel), { withFileTypes: true });
    if (entries.length === 0 && rel !== '') out.push(`${rel}/`);
    for (const e of entries) {
      const path = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(path);
      else out.push(path);
    }
  };
  await walk('');
  return out.sort();
}

export function recursiveCases(t: WatchBench): void {
  it('recursive: nested CSV and JSON files with their .ready land once each, a/x.csv and b/x.csv both, named by their path', async () => {
    const { dir, table, opts } = await t.inbox();
    await dropAt(
      dir,
      'a/x.csv',
      csv('id,src', [
        [1, 'a'],
        [2, 'a'],
      ]),
    );
    await dropAt(dir, 'b/x.csv', csv('id,src', [[3, 'b']]));
    await dropAt(dir, 'a/deep/er/y.jsonl', '{"id":4,"src":"deep"}\n{"id":5,"src":"deep"}\n');
    await drop(dir, 'top.csv', csv('id,src', [[6, 'top']]));
    // No rescan during the test: what comes after the start comes by the subfolders' events.
    const handle = await openWatcher(dir, table, { ...opts, recursive: true, rescanIntervalMs: 600_000 });
    assert.equal(handle.stats.filesIngested, 4, 'the start-up sweep takes the nested files');
    // Folders made after the start, and a known one: their files come by events.
    await dropAt(dir, 'c/later/z.csv', csv('id,src', [[7, 'later']]));
    await dropAt(dir, 'b/x2.csv', csv('id,src', [[8, 'b']]));
    await waitFor(() => handle.stats.filesIngested === 6, 'the files of the new folders');
    await handle.whenIdle();
    assert.equal(await count(t.pool, table), 8, 'every row once');
    const ids = await t.pool.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`);
    assert.deepEqual(
      ids.map((r) => Number(r.id)),
      [1, 2, 3, 4, 5, 6, 7, 8],
    );
    assert.deepEqual(await ledgerNames(t, table), ['a/deep/er/y.jsonl', 'a/x.csv', 'b/x.csv', 'b/x2.csv', 'c/later/z.csv', 'top.csv']);
    assert.equal(handle.stats.filesFailed, 0);
    await handle.stop();
    assert.deepEqual(await stagedEntries(dir), []);
  });

  for (const fs of ['node', 'parcel', 'poll:50']) {
    it(`recursive, --fs ${fs}: new subfolders and files in known ones come by events alone`, async () => {
      const { dir, table, opts } = await t.inbox();
      const adapter = fsAdapterByName(fs);
      assert.ok(adapter, fs);
      const handle = await openWatcher(dir, table, { ...opts, fs: adapter, recursive: true, rescanIntervalMs: 600_000 });
      await dropAt(dir, 'a/b/x.csv', csv('id', [[1]]));
      // A new folder's event has it watched and listed (a rescan): what was made in it before its watch began.
      await waitFor(() => handle.stats.filesIngested === 1, 'a/b/x.csv, by events', 10000);
      await handle.whenIdle();
      const rescans = handle.stats.rescans;
      await dropAt(dir, 'a/b/y.csv', csv('id', [[2]]));
      await dropAt(dir, 'a/z.csv', csv('id', [[3]]));
      await waitFor(() => handle.stats.filesIngested === 3, 'a/b/y.csv and a/z.csv, by events', 10000);
      await handle.stop();
      assert.equal(handle.stats.rescans, rescans, 'files in known folders come by their events, without a listing');
      assert.deepEqual(await ledgerNames(t, table), ['a/b/x.csv', 'a/b/y.csv', 'a/z.csv']);
    });
  }

  it('recursive: empty subfolders left behind are removed once orphanGraceMs passed; the watched directory stays', async () => {
    const { dir, table, opts } = await t.inbox();
    await dropAt(dir, 'p/q/r.csv', csv('id', [[1]]));
    await dropAt(dir, 'p/s.csv', csv('id', [[2]]));
    await mkdir(join(dir, 'fresh'));
    const handle = await openWatcher(dir, table, { ...opts, recursive: true, orphanGraceMs: 500 });
    assert.equal(handle.stats.filesIngested, 2);
    await waitFor(async () => !existsSync(join(dir, 'p')), 'p/ (and p/q/) to be removed', 10000);
    assert.ok(existsSync(dir), 'the watched directory itself stays');
    // A folder a producer just made waits orphanGraceMs: one made long ago and empty goes too.
    await mkdir(join(dir, 'old'));
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(join(dir, 'old'), longAgo, longAgo);
    await waitFor(async () => !existsSync(join(dir, 'old')) && !existsSync(join(dir, 'fresh')), 'old/ and fresh/ to go', 10000);
    await handle.stop();
    assert.equal(handle.stats.lostEvents, 0, 'removing a watched folder is no failure of the events');
    assert.deepEqual(await leftovers(dir), []);
    assert.equal(await count(t.pool, table), 2);
  });

  it('recursive: failed/, archive/, dot-folders and a symbolic link to a folder are left alone', async () => {
    const { dir, table, opts } = await t.inbox();
    const outside = join(dir, '..', `${table}-outside`);
    await mkdir(outside);
    await drop(outside, 'linked.csv', csv('id', [[100]]));
    await symlink(outside, join(dir, 'link'));
    await dropAt(dir, '.hidden/h.csv', csv('id', [[101]]));
    await dropAt(dir, 'archive/old.csv', csv('id', [[102]]));
    await dropAt(dir, 'failed/f.csv', csv('id', [[103]]));
    await dropAt(dir, 'a/.inner/i.csv', csv('id', [[104]]));
    await dropAt(dir, 'a/ok.csv', csv('id', [[1]]));
    const handle = await openWatcher(dir, table, { ...opts, recursive: true });
    await new Promise((r) => setTimeout(r, 600)); // a few rescans
    assert.equal(handle.stats.filesIngested, 1);
    assert.equal(handle.stats.filesFailed, 0);
    await handle.stop();
    assert.deepEqual(await ledgerNames(t, table), ['a/ok.csv']);
    assert.deepEqual(await tree(outside), ['linked.csv', 'linked.csv.ready'], 'nothing taken through the link');
    assert.deepEqual(
      (await tree(dir)).filter((p) => !p.startsWith('.hyperwatch/')),
      [
        '.hidden/h.csv',
        '.hidden/h.csv.ready',
        'a/.inner/i.csv',
        'a/.inner/i.csv.ready',
        'archive/old.csv',
        'archive/old.csv.ready',
        'failed/f.csv',
        'failed/f.csv.ready',
        'link',
      ],
    );
  });

  it('without recursive: files in subfolders are left alone, as always', async () => {
    const { dir, table, opts } = await t.inbox();
    await dropAt(dir, 'a/x.csv', csv('id', [[1]]));
    await drop(dir, 'top.csv', csv('id', [[2]]));
    const handle = await openWatcher(dir, table, opts);
    await new Promise((r) => setTimeout(r, 500));
    await handle.stop();
    assert.equal(handle.stats.filesIngested, 1);
    assert.deepEqual(await ledgerNames(t, table), ['top.csv']);
    assert.deepEqual(await tree(join(dir, 'a')), ['x.csv', 'x.csv.ready']);
  });

  it('recursive: a bad file of a subfolder fails into failed/<its path> with its .error; two of one name stay apart; replay', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'good.csv', csv('id', [[1]]));
    const handle = await openWatcher(dir, table, { ...opts, recursive: true });
    await dropAt(dir, 'a/b/bad.csv', 'id\nnot-a-number\n');
    await dropAt(dir, 'c/bad.csv', 'id\nalso-not\n');
    await waitFor(() => handle.stats.filesFailed === 2, 'both bad files to fail');
    await handle.stop();
    const failed = await tree(join(dir, 'failed'));
    assert.deepEqual(failed, ['a/b/bad.csv', 'a/b/bad.csv.error', 'a/b/bad.csv.ready', 'c/bad.csv', 'c/bad.csv.error', 'c/bad.csv.ready']);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'a', 'b', 'bad.csv.error'), 'utf8')) as Record<string, unknown>;
    assert.equal(report.file, 'a/b/bad.csv');
    assert.equal(report.failedAs, 'a/b/bad.csv');
    assert.equal(await count(t.pool, table), 1);
    // Fixed in place and replayed: back to a/b/ (gone meanwhile, as an empty folder may be), and it lands from there.
    await writeFile(join(dir, 'failed', 'a', 'b', 'bad.csv'), csv('id', [[2]]));
    await rm(join(dir, 'a'), { recursive: true, force: true });
    const replayed = await replayFailed(join(dir, 'failed', 'a', 'b', 'bad.csv'));
    assert.equal(replayed.path, join(dir, 'a', 'b', 'bad.csv'));
    assert.equal(replayed.failedAs, 'a/b/bad.csv');
    const again = await openWatcher(dir, table, { ...opts, recursive: true });
    await again.stop();
    assert.equal(again.stats.filesIngested, 1);
    assert.deepEqual(await ledgerNames(t, table), ['a/b/bad.csv', 'good.csv']);
    assert.deepEqual(await tree(join(dir, 'failed')), ['c/bad.csv', 'c/bad.csv.error', 'c/bad.csv.ready', 'a/b/'].sort());
  });

  it("recursive with readyWhen 'stable': files in subfolders are taken once they stop changing, no .ready needed", async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, recursive: true, readyWhen: 'stable', stableMs: 300 });
    await mkdir(join(dir, 'x', 'y'), { recursive: true });
    await writeFile(join(dir, 'x', 'y', 'one.csv'), csv('id', [[1], [2]]));
    await mkdir(join(dir, 'z'));
    await writeFile(join(dir, 'z', 'one.csv'), csv('id', [[3]]));
    await waitFor(() => handle.stats.filesIngested === 2, 'both nested files to land', 10000);
    await handle.stop();
    assert.deepEqual(await ledgerNames(t, table), ['x/y/one.csv', 'z/one.csv']);
    assert.equal(await count(t.pool, table), 3);
    assert.equal(handle.stats.filesFailed, 0);
  });

  it("recursive with readyWhen 'stable': a symbolic link to a folder is not followed (it fails as any link does)", async () => {
    const { dir, table, opts } = await t.inbox();
    const outside = join(dir, '..', `${table}-outside`);
    await mkdir(outside);
    await writeFile(join(outside, 'o.csv'), csv('id', [[9]]));
    await symlink(outside, join(dir, 'link'));
    await mkdir(join(dir, 'in'));
    await writeFile(join(dir, 'in', 'i.csv'), csv('id', [[1]]));
    const handle = await openWatcher(dir, table, { ...opts, recursive: true, readyWhen: 'stable', stableMs: 200 });
    await waitFor(() => handle.stats.filesIngested === 1 && handle.stats.filesFailed === 1, 'in/i.csv, and the link', 10000);
    await handle.stop();
    assert.deepEqual(await ledgerNames(t, table), ['in/i.csv']);
    // As in the watched directory without `recursive`: a link is no regular file, so it fails.
    const report = JSON.parse(await readFile(join(dir, 'failed', 'link.error'), 'utf8')) as Record<string, unknown>;
    assert.equal(report.code, 'NOT_A_REGULAR_FILE');
    assert.deepEqual(await tree(outside), ['o.csv'], 'the folder behind the link is untouched');
    assert.equal(await count(t.pool, table), 1);
  });

  it('recursive, onSuccess archive: a/x.csv and b/x.csv are archived under their paths', async () => {
    const { dir, table, opts } = await t.inbox();
    await dropAt(dir, 'a/x.csv', csv('id', [[1]]));
    await dropAt(dir, 'b/x.csv', csv('id', [[2]]));
    const handle = await openWatcher(dir, table, { ...opts, recursive: true, onSuccess: 'archive' });
    await handle.stop();
    assert.deepEqual(await tree(join(dir, 'archive')), ['a/x.csv', 'a/x.csv.ready', 'b/x.csv', 'b/x.csv.ready']);
    assert.equal(await readFile(join(dir, 'archive', 'b', 'x.csv'), 'utf8'), csv('id', [[2]]));
    // A restart does not take the archive (inside the inbox) as files to ingest.
    const again = await openWatcher(dir, table, { ...opts, recursive: true, onSuccess: 'archive' });
    await again.stop();
    assert.equal(again.stats.filesIngested, 0);
    assert.equal(await count(t.pool, table), 2);
  });

  it('recursive, skipDuplicateContent: the same content in a/ and b/ lands once, different content under one name twice', async () => {
    const { dir, table, opts } = await t.inbox();
    await dropAt(dir, 'a/x.csv', csv('id', [[1]]));
    await dropAt(dir, 'b/x.csv', csv('id', [[1]]));
    await dropAt(dir, 'c/x.csv', csv('id', [[2]]));
    const handle = await openWatcher(dir, table, { ...opts, recursive: true, skipDuplicateContent: true, maxConcurrent: 1 });
    await handle.stop();
    assert.equal(handle.stats.duplicatesSkipped, 1);
    assert.equal(handle.stats.filesIngested, 2);
    assert.equal(await count(t.pool, table), 2);
  });

  it('recursive: recovery settles staged files of subfolders by their path (committed: not again; else: ingested once)', async () => {
    const { dir, table, opts } = await t.inbox();
    await dropAt(dir, 'a/x.csv', csv('id', [[1]]));
    await (await openWatcher(dir, table, { ...opts, recursive: true })).stop();
    const [committed] = await t.pool.query<{ claim_id: string }>(
      `SELECT claim_id FROM hyperwatch_internal.ingest_log WHERE target_table = '${table}'`,
    );
    // What a crash leaves in staging: a/x.csv committed but not yet removed, b/x.csv claimed only.
    const staging = join(dir, '.hyperwatch', 'staging');
    await writeFile(join(staging, `${committed!.claim_id}^a%2Fx.csv`), csv('id', [[1]]));
    await writeFile(join(staging, `${committed!.claim_id}^a%2Fx.csv.ready`), '');
    const pending = newClaimId();
    await writeFile(join(staging, `${pending}^b%2Fx.csv`), csv('id', [[2]]));
    await writeFile(join(staging, `${pending}^b%2Fx.csv.ready`), '');
    const again = await openWatcher(dir, table, { ...opts, recursive: true });
    await again.stop();
    assert.equal(again.stats.recovered, 2);
    assert.equal(again.stats.filesIngested, 1);
    assert.equal(await count(t.pool, table), 2, 'each row once');
    assert.deepEqual(await ledgerNames(t, table), ['a/x.csv', 'b/x.csv']);
    assert.deepEqual(await stagedEntries(dir), []);
  });
}
