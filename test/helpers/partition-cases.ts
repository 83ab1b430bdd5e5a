/**
 * `partitionColumns` (run by test/src/columns/partition-columns.test.ts on hyperd and on PostgreSQL): Hive-style
 * `key=value` folders written by DuckDB at test time, and by hand for CSV, JSON and Arrow, become
 * typed columns; a folder that is not `key=value` fails the file with nothing landing; a new key
 * adds a column under schema evolution.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { openWatcher } from '../../src/api.ts';
import { csv } from './drop.ts';
import { columnsOf, count } from './env.ts';
import type { WatchBench } from './watch-bench.ts';

/** Every data file under `dir` gets its `.ready` (what a producer adds after DuckDB wrote the folders). */
async function readyAll(dir: string): Promise<string[]> {
  const files: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(dir, rel), { withFileTypes: true })) {
      const path = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(path);
      else if (!e.name.endsWith('.ready')) files.push(path);
    }
  };
  await walk('');
  for (const f of files) await writeFile(join(dir, `${f}.ready`), '');
  return files.sort();
}

async function duckdb<T>(use: (run: (sql: string) => Promise<unknown>) => Promise<T>): Promise<T> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  try {
    return await use((sql) => conn.run(sql));
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** One column's type among `name type` entries, lower-cased. */
function typeOf(columns: readonly string[] | undefined, name: string): string | undefined {
  const entry = columns?.find((c) => c.split(' ')[0] === name);
  return entry?.slice(name.length + 1).toLowerCase();
}

const PARTITIONED = { recursive: true, partitionColumns: true } as const;

export function partitionCases(t: WatchBench): void {
  // DuckDB writes no JSON with PARTITION_BY: JSON lines in partition folders are in the evolution case below.
  for (const format of ['parquet', 'csv'] as const) {
    it(`partitionColumns: DuckDB's Hive folders (${format}, PARTITION_BY (date, region)): date a DATE, region a TEXT`, async () => {
      const { dir, table, opts } = await t.inbox();
      const out = join(dir, 'export');
      await duckdb((run) =>
        run(
          `COPY (SELECT i AS id, DATE '2026-12-01' + CAST(i % 2 AS INTEGER) AS date, ` +
            `CASE WHEN i % 3 = 0 THEN 'eu' ELSE 'us' END AS region ` +
            `FROM range(0, 12) t(i)) TO '${out}' (FORMAT ${format}, PARTITION_BY (date, region))`,
        ),
      );
      const files = await readyAll(dir);
      assert.ok(files.length >= 4, `DuckDB wrote ${files.join(', ')}`);
      assert.ok(
        files.every((f) => /^export\/date=2026-12-0[12]\/region=(eu|us)\/[^/]+$/.test(f)),
        files.join(', '),
      );
      // `export/` is not key=value: the partitions start below it, so it is watched as the inbox.
      const handle = await openWatcher(out, table, { ...opts, ...PARTITIONED });
      await handle.stop();
      assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
      assert.equal(handle.stats.filesIngested, files.length);
      const columns = await columnsOf(t.pool, table);
      assert.equal(typeOf(columns, 'date'), 'date', columns?.join(', '));
      assert.equal(typeOf(columns, 'region'), 'text', columns?.join(', '));
      const rows = await t.pool.query<{ id: string; date: string; region: string }>(
        `SELECT id, CAST(date AS TEXT) AS date, region FROM ${table} ORDER BY id`,
      );
      assert.deepEqual(
        rows.map((r) => [Number(r.id), r.date, r.region]),
        Array.from({ length: 12 }, (_, i) => [i, i % 2 === 0 ? '2026-12-01' : '2026-12-02', i % 3 === 0 ? 'eu' : 'us']),
      );
    });
  }

  it('partitionColumns: Arrow, CSV and Parquet; an integer key a BIGINT, escapes decoded, __HIVE_DEFAULT_PARTITION__ NULL', async () => {
    const { dir, table, opts } = await t.inbox();
    const folder = join(dir, 'year=2026', 'city=New%20York%2FNY', 'note=__HIVE_DEFAULT_PARTITION__');
    await mkdir(folder, { recursive: true });
    await writeFile(join(folder, 'part-0.arrow'), tableToIPC(tableFromArrays({ id: Int32Array.from([1, 2]) }), 'file'));
    await writeFile(join(folder, 'part-0.arrow.ready'), '');
    const other = join(dir, 'year=2025', 'city=Z%C3%BCrich', 'note=a%3Db');
    await mkdir(other, { recursive: true });
    await writeFile(join(other, 'p.csv'), csv('id', [[3]]));
    await writeFile(join(other, 'p.csv.ready'), '');
    // Parquet: where hyperd reads the file itself, the values are constants of its INSERT ... SELECT.
    const third = join(dir, 'year=2024', 'city=Oslo', 'note=__HIVE_DEFAULT_PARTITION__');
    await mkdir(third, { recursive: true });
    await duckdb((run) => run(`COPY (SELECT 4 AS id) TO '${join(third, 'q.parquet')}' (FORMAT parquet)`));
    await writeFile(join(third, 'q.parquet.ready'), '');
    // CSV: where hyperd reads it itself, an INSERT BULK ... SELECT with the NULL among its constants.
    const fourth = join(dir, 'year=2023', 'city=Rome', 'note=__HIVE_DEFAULT_PARTITION__');
    await mkdir(fourth, { recursive: true });
    await writeFile(join(fourth, 'r.csv'), csv('id', [[5]]));
    await writeFile(join(fourth, 'r.csv.ready'), '');
    const handle = await openWatcher(dir, table, { ...opts, ...PARTITIONED, maxConcurrent: 1 });
    await handle.stop();
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.equal(handle.stats.filesIngested, 4);
    const columns = await columnsOf(t.pool, table);
    assert.equal(typeOf(columns, 'year'), 'bigint', columns?.join(', '));
    const rows = await t.pool.query<{ id: string; year: string; city: string; note: string | null }>(
      `SELECT id, year, city, note FROM ${table} ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.id), Number(r.year), r.city, r.note]),
      [
        [1, 2026, 'New York/NY', null],
        [2, 2026, 'New York/NY', null],
        [3, 2025, 'Zürich', 'a=b'],
        [4, 2024, 'Oslo', null],
        [5, 2023, 'Rome', null],
      ],
    );
  });

  it('partitionColumns: a folder that is not key=value fails the file, naming the folder and the fix; nothing of it lands', async () => {
    const { dir, table, opts } = await t.inbox();
    await mkdir(join(dir, 'day=1'), { recursive: true });
    await writeFile(join(dir, 'day=1', 'ok.csv'), csv('id', [[1]]));
    await writeFile(join(dir, 'day=1', 'ok.csv.ready'), '');
    await mkdir(join(dir, 'day=2', 'misc'), { recursive: true });
    await writeFile(join(dir, 'day=2', 'misc', 'bad.csv'), csv('id', [[2]]));
    await writeFile(join(dir, 'day=2', 'misc', 'bad.csv.ready'), '');
    const handle = await openWatcher(dir, table, { ...opts, ...PARTITIONED, maxConcurrent: 1 });
    await handle.stop();
    assert.equal(handle.stats.filesIngested, 1);
    assert.equal(handle.stats.filesFailed, 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'day=2', 'misc', 'bad.csv.error'), 'utf8')) as Record<string, string>;
    assert.equal(report.code, 'PARTITION_NOT_KEY_VALUE');
    assert.match(report.message!, /folder "misc" is not a partition folder key=value/);
    assert.match(report.hint!, /partitionColumns/);
    assert.equal(await count(t.pool, table), 1, 'only ok.csv');
    assert.equal(await count(t.pool, table, 'id = 2'), 0);
  });

  it('partitionColumns with schemaEvolution addColumns: a file with a new key adds its column', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, ...PARTITIONED, schemaEvolution: 'addColumns' });
    await mkdir(join(dir, 'a=1'), { recursive: true });
    await writeFile(join(dir, 'a=1', 'x.csv'), csv('id', [[1]]));
    await writeFile(join(dir, 'a=1', 'x.csv.ready'), '');
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (handle.stats.filesIngested === 1) {
          clearInterval(timer);
          resolve();
        }
      }, 10);
    });
    await mkdir(join(dir, 'a=2', 'b=2026-01-31'), { recursive: true });
    await writeFile(join(dir, 'a=2', 'b=2026-01-31', 'y.jsonl'), '{"id":2}\n');
    await writeFile(join(dir, 'a=2', 'b=2026-01-31', 'y.jsonl.ready'), '');
    await handle.rescan();
    await handle.whenIdle();
    await handle.stop();
    assert.equal(handle.stats.filesIngested, 2, JSON.stringify(handle.stats.lastError));
    const columns = await columnsOf(t.pool, table);
    assert.equal(typeOf(columns, 'b'), 'date', columns?.join(', '));
    const rows = await t.pool.query<{ id: string; a: string; b: string | null }>(
      `SELECT id, a, CAST(b AS TEXT) AS b FROM ${table} ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.id), Number(r.a), r.b]),
      [
        [1, 1, null],
        [2, 2, '2026-01-31'],
      ],
    );
  });

  it('partitionColumns without recursive is refused, saying to give both', async () => {
    const { dir, table, opts } = await t.inbox();
    await assert.rejects(openWatcher(dir, table, { ...opts, partitionColumns: true }), /partitionColumns needs recursive: true/);
  });
}
