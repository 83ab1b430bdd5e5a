/**
 * `readyWhen: 'marker'` (run by test/src/watcher/ready-when-marker.test.ts on hyperd and on PostgreSQL): a folder
 * of part files, written by DuckDB as Spark writes them (Hive partition folders, `.crc` files,
 * `_committed_*`, `_SUCCESS` last), lands in one transaction; a folder holding a bad member fails
 * whole into failed/<folder>/ with one .error; a folder without its marker is left alone; a folder
 * that changes after its claim fails as CHANGED_AFTER_READY; duplicates and the archive work for
 * a folder as for a file.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, closeSync, openSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { ResultAsync } from 'neverthrow';
import { csvIngester } from '../../plugins/csv/index.ts';
import { openWatcher } from '../../src/api.ts';
import { defineIngester } from '../../src/plugins.ts';
import { newClaimId, unitStagedName } from '../../src/protocol/names.ts';
import { readHistory } from '../../src/store/history.ts';
import { csv, leftovers, waitFor } from './drop.ts';
import { count } from './env.ts';
import type { WatchBench } from './watch-bench.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs SQL on a throwaway in-memory DuckDB. */
export async function duckdb(use: (run: (sql: string) => Promise<unknown>) => Promise<void>): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    await use((sql) => conn.run(sql));
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** Every file under `dir`, relative, sorted. */
export async function filesIn(dir: string, rel = ''): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(dir, rel), { withFileTypes: true }).catch(() => [])) {
    const path = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.isDirectory()) out.push(...(await filesIn(dir, path)));
    else out.push(path);
  }
  return out.sort();
}

/**
 * A Spark-like job folder `dir/<job>`: ids `first..first+rows-1` as Parquet parts in Hive folders
 * `date=.../region=...` (DuckDB), one more CSV part of `csvRows` ids after those, Spark's `.crc`
 * and `_committed_*` files beside them, and `_SUCCESS` last (unless `marker` is false). Returns
 * the data files written, relative to the job folder.
 */
export async function sparkJob(dir: string, job: string, first: number, rows: number, csvRows: number, marker = true): Promise<string[]> {
  const out = join(dir, job);
  await duckdb(async (run) => {
    await run(
      `COPY (SELECT ${first} + i AS id, DATE '2026-12-01' + CAST(i % 2 AS INTEGER) AS date, ` +
        `CASE WHEN i % 3 = 0 THEN 'eu' ELSE 'us' END AS region, 'p' || i AS label ` +
        `FROM range(0, ${rows}) t(i)) TO '${out}' (FORMAT parquet, PARTITION_BY (date, region))`,
    );
  });
  const parquet = (await filesIn(out)).filter((f) => f.endsWith('.parquet'));
  const csvFolder = join(out, 'date=2026-12-03', 'region=eu');
  await mkdir(csvFolder, { recursive: true });
  const ids = Array.from({ length: csvRows }, (_, i) => [first + rows + i, `c${i}`]);
  await writeFile(join(csvFolder, 'part-extra.csv'), csv('id,label', ids));
  for (const f of parquet) {
    const slash = f.lastIndexOf('/');
    await writeFile(join(out, f.slice(0, slash), `.${f.slice(slash + 1)}.crc`), 'crc');
  }
  await writeFile(join(out, '_committed_1234'), '{}');
  if (marker) await writeFile(join(out, '_SUCCESS'), '');
  return [...parquet, 'date=2026-12-03/region=eu/part-extra.csv'].sort();
}

async function tableCount(t: WatchBench, table: string): Promise<number> {
  try {
    return await count(t.pool, table);
  } catch {
    return 0; // not created
  }
}

export function markerCases(t: WatchBench): void {
  it('a Spark-like job folder (Parquet parts in Hive folders, a CSV part, .crc files, _SUCCESS) lands in one transaction', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, {
      ...opts,
      readyWhen: 'marker',
      partitionColumns: true,
      sourceColumns: { file: '_file', claim: '_claim' },
    });
    // A reader polls the table all along: it must never see a part of the folder.
    const seen = new Set<number>();
    let reading = true;
    const reader = (async () => {
      while (reading) {
        seen.add(await tableCount(t, table));
        await sleep(2);
      }
    })();
    const parts = await sparkJob(dir, 'job-1', 0, 600, 5);
    assert.ok(parts.length >= 5, `DuckDB wrote ${parts.join(', ')}`);
    await waitFor(() => handle.stats.filesIngested === parts.length, 'the folder to land', 20000);
    await handle.whenIdle();
    reading = false;
    await reader;
    const total = 605;
    seen.add(await tableCount(t, table));
    assert.deepEqual(
      [...seen].filter((n) => n !== 0 && n !== total),
      [],
      `a reader saw ${[...seen].join(', ')} rows`,
    );
    assert.equal(await count(t.pool, table), total);
    const rows = await t.pool.query<{ id: string; date: unknown; region: string; label: string; _file: string; _claim: string }>(
      `SELECT id, CAST(date AS TEXT) AS date, region, label, _file, _claim FROM ${table} ORDER BY id`,
    );
    assert.equal(rows.length, total);
    for (const [i, r] of rows.entries()) {
      assert.equal(Number(r.id), i, 'every id once');
      if (i < 600) {
        assert.equal(String(r.date), i % 2 === 0 ? '2026-12-01' : '2026-12-02', `row ${i}'s date`);
        assert.equal(r.region, i % 3 === 0 ? 'eu' : 'us', `row ${i}'s region`);
        assert.equal(r.label, `p${i}`);
        assert.match(r._file, new RegExp(`^job-1/date=${String(r.date)}/region=${r.region}/[^/]+\\.parquet$`));
      } else {
        assert.deepEqual([String(r.date), r.region, r.label], ['2026-12-03', 'eu', `c${i - 600}`]);
        assert.equal(r._file, 'job-1/date=2026-12-03/region=eu/part-extra.csv');
      }
    }
    assert.equal(new Set(rows.map((r) => r._claim)).size, 1, 'one claim for the folder');
    // The ledger: one row per data file, one claim id, one commit; history lists them.
    const history = (await readHistory(t.pool, { table })).filter((h) => h.file.startsWith('job-1/'));
    assert.deepEqual(
      history.map((h) => h.file).sort(),
      parts.map((p) => `job-1/${p}`),
    );
    assert.equal(new Set(history.map((h) => h.claimId)).size, 1);
    assert.equal(history[0]!.claimId, rows[0]!._claim);
    assert.equal(new Set(history.map((h) => h.committedAt)).size, 1, 'one commit');
    assert.equal(
      history.reduce((a, h) => a + h.rows, 0),
      total,
    );
    assert.equal(handle.stats.filesFailed, 0);
    await handle.stop();
    assert.deepEqual(await leftovers(dir), [], 'the folder is removed');
  });

  it('a folder holding a file of an unknown extension, a symbolic link or a FIFO fails whole, nothing lands', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT)`);
    const handle = await openWatcher(dir, table, { ...opts, readyWhen: 'marker' });
    const bad: Record<string, (folder: string) => Promise<void>> = {
      'bad-ext': (f) => writeFile(join(f, 'sub', 'notes.xyz'), 'what'),
      'bad-link': (f) => symlink(join(dir, 'elsewhere.csv'), join(f, 'sub', 'link.csv')),
      'bad-fifo': async (f) => {
        execFileSync('mkfifo', [join(f, 'sub', 'pipe.csv')]);
      },
    };
    await writeFile(join(dir, 'elsewhere.csv'), 'id\n7\n');
    for (const [name, add] of Object.entries(bad)) {
      const folder = join(dir, name);
      await mkdir(join(folder, 'sub'), { recursive: true });
      await writeFile(join(folder, 'a.csv'), csv('id', [[1], [2]]));
      await writeFile(join(folder, 'sub', 'b.csv'), csv('id', [[3]]));
      await add(folder);
      await writeFile(join(folder, '_SUCCESS'), '');
    }
    await waitFor(() => handle.stats.filesFailed === 3, 'three folders to fail', 15000);
    await handle.whenIdle();
    assert.equal(await count(t.pool, table), 0, 'nothing landed');
    assert.equal(handle.stats.filesIngested, 0);
    const failed = (await readdir(join(dir, 'failed'))).sort();
    assert.deepEqual(failed, ['bad-ext', 'bad-ext.error', 'bad-fifo', 'bad-fifo.error', 'bad-link', 'bad-link.error']);
    const member = { 'bad-ext': 'bad-ext/sub/notes.xyz', 'bad-link': 'bad-link/sub/link.csv', 'bad-fifo': 'bad-fifo/sub/pipe.csv' };
    const code = { 'bad-ext': 'UNKNOWN_EXTENSION', 'bad-link': 'NOT_A_REGULAR_FILE', 'bad-fifo': 'NOT_A_REGULAR_FILE' };
    for (const name of Object.keys(bad) as (keyof typeof member)[]) {
      const report = JSON.parse(await readFile(join(dir, 'failed', `${name}.error`), 'utf8'));
      assert.equal(report.code, code[name], name);
      assert.equal(report.file, member[name], `${name}: the report names the member`);
      assert.match(report.message, new RegExp(`nothing of folder ${name} was committed`));
      assert.equal(report.folder, name);
      // The whole folder is there, as dropped.
      const kept = await filesIn(join(dir, 'failed', name));
      assert.ok(kept.includes('a.csv') && kept.includes('sub/b.csv') && kept.includes('_SUCCESS'), `${name}: ${kept.join(', ')}`);
    }
    assert.deepEqual((await readHistory(t.pool, { table })).length, 0, 'no ledger row');
    await handle.stop();
    assert.deepEqual(await leftovers(dir), ['elsewhere.csv']);
  });

  it('a folder without its marker is left alone; it lands once the marker comes', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, readyWhen: 'marker', marker: '_DONE' });
    await mkdir(join(dir, 'job', 'x'), { recursive: true });
    await writeFile(join(dir, 'job', 'x', 'a.csv'), csv('id', [[1], [2]]));
    await writeFile(join(dir, 'job', '_SUCCESS'), ''); // not this watcher's marker
    await writeFile(join(dir, 'loose.csv'), csv('id', [[9]]));
    await sleep(1500); // several rescans
    assert.equal(handle.stats.filesIngested, 0);
    assert.equal(await tableCount(t, table), 0);
    assert.deepEqual(await filesIn(join(dir, 'job')), ['_SUCCESS', 'x/a.csv'], 'untouched');
    assert.equal(handle.stats.ignored, 1, 'the loose file is left alone, and counted');
    await writeFile(join(dir, 'job', '_DONE'), '');
    await waitFor(() => handle.stats.filesIngested === 1, 'the folder to land', 10000);
    assert.equal(await count(t.pool, table), 2);
    await handle.stop();
    assert.deepEqual(await leftovers(dir), ['loose.csv']);
  });

  it('a folder written to after its claim fails as CHANGED_AFTER_READY, nothing landing', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT)`);
    let claimed = false;
    const slow = defineIngester({
      name: 'csv-slow',
      extensions: ['.csv'],
      append(conn, file, target, ctx) {
        claimed = true;
        return ResultAsync.fromSafePromise(sleep(400)).andThen(() => csvIngester.append(conn, file, target, ctx));
      },
    });
    const handle = await openWatcher(dir, table, { ...opts, readyWhen: 'marker', plugins: [slow] });
    await mkdir(join(dir, 'grow'));
    const path = join(dir, 'grow', 'a.csv');
    await writeFile(path, csv('id', [[1], [2]]));
    // The producer keeps its file open and writes on after the marker, as a job that wrote _SUCCESS too early.
    const fd = openSync(path, 'a');
    try {
      await writeFile(join(dir, 'grow', '_SUCCESS'), '');
      await waitFor(() => claimed, 'the folder to be claimed', 10000);
      appendFileSync(fd, '3\n');
    } finally {
      closeSync(fd);
    }
    await waitFor(() => handle.stats.filesFailed === 1, 'the folder to fail', 10000);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'grow.error'), 'utf8'));
    assert.equal(report.code, 'CHANGED_AFTER_READY');
    assert.match(report.message, /folder grow changed after its _SUCCESS appeared/);
    assert.equal(await count(t.pool, table), 0);
    assert.deepEqual(await filesIn(join(dir, 'failed', 'grow')), ['_SUCCESS', 'a.csv']);
    await handle.stop();
  });

  it('skipDuplicateContent: a folder whose files already landed lands as duplicates; archive keeps the folders whole', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, readyWhen: 'marker', skipDuplicateContent: true, onSuccess: 'archive' });
    const job = async (name: string, extra: boolean) => {
      await mkdir(join(dir, name, 'p'), { recursive: true });
      await writeFile(join(dir, name, 'p', 'a.csv'), csv('id', [[1], [2]]));
      await writeFile(join(dir, name, 'b.csv'), csv('id', [[3]]));
      if (extra) await writeFile(join(dir, name, 'c.csv'), csv('id', [[4]]));
      await writeFile(join(dir, name, '_SUCCESS'), '');
    };
    await job('first', false);
    await waitFor(() => handle.stats.filesIngested === 2, 'the first folder', 10000);
    await job('again', true);
    await waitFor(() => handle.stats.duplicatesSkipped === 2 && handle.stats.filesIngested === 3, 'the second folder', 10000);
    await handle.whenIdle();
    const ids = await t.pool.query<{ id: string }>(`SELECT id FROM ${table} ORDER BY id`);
    assert.deepEqual(
      ids.map((r) => Number(r.id)),
      [1, 2, 3, 4],
      'each content once',
    );
    await handle.stop();
    assert.deepEqual(await leftovers(dir), ['archive']);
    assert.deepEqual(await filesIn(join(dir, 'archive')), [
      'again/_SUCCESS',
      'again/b.csv',
      'again/c.csv',
      'again/p/a.csv',
      'first/_SUCCESS',
      'first/b.csv',
      'first/p/a.csv',
    ]);
  });

  it('recovery: a dead owner’s claimed folders are taken over whole; the ledger says: committed, removed; else ingested', async () => {
    const { dir, table, opts } = await t.inbox();
    const options = { ...opts, readyWhen: 'marker' as const, sourceColumns: { claim: '_claim' } };
    const first = await openWatcher(dir, table, options);
    await mkdir(join(dir, 'job-a'));
    await writeFile(join(dir, 'job-a', 'a.csv'), csv('id', [[1], [2]]));
    await writeFile(join(dir, 'job-a', '_SUCCESS'), '');
    await waitFor(() => first.stats.filesIngested === 1, 'job-a to land', 10000);
    await first.stop();
    const [landed] = await readHistory(t.pool, { table });
    // What a process killed after that commit, before removing the folder, leaves; and folders it
    // had claimed but not committed, one of them inside a folder it had itself taken over from another dead process.
    const dead = join(dir, '.hyperwatch', 'staging', 'dead-owner');
    const staged = async (folder: string, name: string, ids: number[]) => {
      await mkdir(join(folder, name, 'sub'), { recursive: true });
      await writeFile(
        join(folder, name, 'sub', 'x~y.csv'),
        csv(
          'id',
          ids.map((i) => [i]),
        ),
      );
      await writeFile(join(folder, name, '_SUCCESS'), '');
    };
    await staged(dead, unitStagedName(landed!.claimId, 'job-a'), [1, 2]);
    const b = newClaimId();
    const c = newClaimId();
    await staged(dead, unitStagedName(b, 'job-b'), [3, 4]);
    await staged(join(dead, '.from-older-owner'), unitStagedName(c, 'job-c'), [5]);
    const second = await openWatcher(dir, table, options);
    await waitFor(() => second.stats.filesIngested === 2, 'job-b and job-c to land', 15000);
    await second.whenIdle();
    const rows = await t.pool.query<{ id: string; _claim: string }>(`SELECT id, _claim FROM ${table} ORDER BY id`);
    assert.deepEqual(
      rows.map((r) => [Number(r.id), r._claim]),
      [
        [1, landed!.claimId],
        [2, landed!.claimId],
        [3, b],
        [4, b],
        [5, c],
      ],
      'the committed folder not again; the others under their own claim ids',
    );
    assert.equal(second.stats.recovered, 3);
    assert.equal(second.stats.filesFailed, 0);
    const history = await readHistory(t.pool, { table });
    assert.deepEqual(history.map((h) => h.file).sort(), ['job-a/a.csv', 'job-b/sub/x~y.csv', 'job-c/sub/x~y.csv']);
    await second.stop();
    assert.deepEqual(await filesIn(join(dir, '.hyperwatch', 'staging')), [], 'staging empty');
    assert.deepEqual(await leftovers(dir), []);
  });

  it('one connection (maxConcurrent 1), the table already there: folder after folder lands, none waiting for ever', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT)`);
    const handle = await openWatcher(dir, table, { ...opts, readyWhen: 'marker', maxConcurrent: 1 });
    for (let j = 0; j < 6; j++) {
      await mkdir(join(dir, `j${j}`));
      await writeFile(join(dir, `j${j}`, 'a.csv'), csv('id', [[j * 2], [j * 2 + 1]]));
      await writeFile(join(dir, `j${j}`, '_SUCCESS'), '');
    }
    await waitFor(() => handle.stats.filesIngested === 6, 'six folders to land', 15000);
    assert.equal(await count(t.pool, table), 12);
    await handle.stop();
    assert.deepEqual(await leftovers(dir), []);
  });
}
