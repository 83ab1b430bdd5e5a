/**
 * The sentinel protocol, files that fail (run by protocol-suite.ts on every database): each goes
 * to failed/ with a .error naming what is wrong (a malformed CSV, an empty file, an orphan
 * sentinel, a symlink, an unknown extension, a poison file), never over an earlier failure, while
 * the other files land; files that are not ready are left alone; bad rows skipped in a group.
 */
import assert from 'node:assert/strict';
import { readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { ResultAsync } from 'neverthrow';
import { csvIngester } from '../../plugins/csv/index.ts';
import { openWatcher, startWatching, stopWatching } from '../../src/api.ts';
import { fromDbError } from '../../src/errors.ts';
import { POISON_FILE_ATTEMPTS } from '../../src/watcher/retry.ts';
import { defineIngester } from '../../src/plugins.ts';
import { csv, drop, failedEntries, leftovers, stagedEntries, waitFor } from './drop.ts';
import { count } from './env.ts';
import type { WatchBench } from './watch-bench.ts';
import type { ProtocolExpectations } from './protocol-suite.ts';

export function failureCases(t: WatchBench, expect: ProtocolExpectations): void {
  it('moves a malformed CSV to failed/ with a .error naming code, line and column, while the good ones land', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(
      dir,
      'good1.csv',
      csv('id,amount', [
        [1, 10],
        [2, 20],
      ]),
    );
    await drop(dir, 'good2.csv', csv('id,amount', [[3, 30]]));
    const handle = await openWatcher(dir, table, opts);
    await drop(dir, 'bad.csv', 'id,amount\n4,40\n5,not-a-number\n');
    await drop(dir, 'good3.csv', csv('id,amount', [[6, 60]]));
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 4, 'all files settled');
    assert.equal(handle.stats.filesIngested, 3);
    assert.deepEqual(await leftovers(dir), []);
    assert.equal(await count(t.pool, table), 4);
    assert.equal(await count(t.pool, table, 'id IN (4, 5)'), 0, 'nothing of the bad file');
    assert.deepEqual(await failedEntries(dir), ['bad.csv', 'bad.csv.error', 'bad.csv.ready']);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'bad.csv.error'), 'utf8'));
    assert.equal(report.file, 'bad.csv');
    assert.equal(report.kind, 'data');
    assert.equal(report.code, 'DB_22P02');
    assert.equal(report.sqlState, '22P02');
    assert.equal(report.line, 3);
    assert.equal(report.column, 2);
    assert.match(report.message, expect.badNumberMessage);
    assert.match(report.hint, /replay/);
    assert.ok(!Number.isNaN(Date.parse(report.time)));
    assert.equal(await readFile(join(dir, 'failed', 'bad.csv'), 'utf8'), 'id,amount\n4,40\n5,not-a-number\n');
    const summary = await stopWatching(dir, { registry: t.registry });
    assert.equal(summary.stats.filesFailed, 1);
    assert.equal(summary.stats.lastError?.file, 'bad.csv');
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('fails an empty file with EMPTY_FILE and keeps going', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'empty.csv', '');
    await drop(dir, 'ok.csv', csv('id', [[1]]));
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 1);
    assert.equal(stats.filesIngested, 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'empty.csv.error'), 'utf8'));
    assert.equal(report.code, 'EMPTY_FILE');
    assert.equal(report.kind, 'data');
    assert.equal(await count(t.pool, table), 1);
    await stopWatching(dir, { registry: t.registry });
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('reports a .ready whose data file never appears, after the grace period', async () => {
    const { dir, table, opts } = await t.inbox();
    await writeFile(join(dir, 'ghost.csv.ready'), '');
    const handle = await openWatcher(dir, table, { ...opts, orphanGraceMs: 300 });
    assert.equal(handle.stats.filesFailed, 0, 'not reported before the grace period');
    await waitFor(() => handle.stats.orphans === 1, 'orphan report');
    assert.deepEqual(await failedEntries(dir), ['ghost.csv.error', 'ghost.csv.ready']);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'ghost.csv.error'), 'utf8'));
    assert.equal(report.code, 'ORPHAN_READY');
    assert.deepEqual(await leftovers(dir), []);
    await handle.stop();
  });

  it('ingests a data file that arrives after its sentinel, within the grace period', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, orphanGraceMs: 10000 });
    await writeFile(join(dir, 'late.csv.ready'), '');
    await new Promise((r) => setTimeout(r, 100));
    await writeFile(join(dir, '.late.tmp'), csv('id', [[7]]));
    await rename(join(dir, '.late.tmp'), join(dir, 'late.csv'));
    await waitFor(() => handle.stats.filesIngested === 1, 'late file');
    assert.equal(await count(t.pool, table), 1);
    assert.equal(handle.stats.orphans, 0);
    await handle.stop();
  });

  it('sends a symlinked data file to failed/ with a security error, never reading its target', async () => {
    const { dir, table, opts } = await t.inbox();
    const secret = `${dir}-secret.csv`;
    await writeFile(secret, csv('id', [[666]]));
    await symlink(secret, join(dir, 'evil.csv'));
    await writeFile(join(dir, 'evil.csv.ready'), '');
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'evil.csv.error'), 'utf8'));
    assert.equal(report.kind, 'security');
    assert.match(report.message, /symbolic link/);
    assert.equal((await t.pool.query(`SELECT 1 FROM pg_catalog.pg_class WHERE relname = '${table}'`)).length, 0);
    await stopWatching(dir, { registry: t.registry });
  });

  it('never overwrites an earlier failure of the same name', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'x.csv', 'id\nnot-a-number-1\n');
    const handle = await openWatcher(dir, table, { ...opts, createTable: false });
    await drop(dir, 'x.csv', 'id\nsecond\n');
    await waitFor(() => handle.stats.filesFailed === 2, 'two failures');
    const names = await failedEntries(dir);
    assert.equal(names.filter((f) => f.endsWith('.csv')).length, 2, names.join(' '));
    assert.equal(names.filter((f) => f.endsWith('.csv.error')).length, 2, names.join(' '));
    const contents = await Promise.all(names.filter((f) => f.endsWith('.csv')).map((f) => readFile(join(dir, 'failed', f), 'utf8')));
    assert.deepEqual(contents.sort(), ['id\nnot-a-number-1\n', 'id\nsecond\n']);
    await handle.stop();
  });

  it('sends an unknown extension to failed/ with the list of known ones', async () => {
    const { dir, table, opts } = await t.inbox();
    await drop(dir, 'notes.xyz', 'hello');
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesFailed, 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'notes.xyz.error'), 'utf8'));
    assert.equal(report.code, 'UNKNOWN_EXTENSION');
    assert.match(report.message, /\.csv/);
    await stopWatching(dir, { registry: t.registry });
  });

  it('ignores dot-files and *.tmp files, and data files without a sentinel', async () => {
    const { dir, table, opts } = await t.inbox();
    await writeFile(join(dir, '.hidden.csv'), 'id\n1\n');
    await writeFile(join(dir, '.hidden.csv.ready'), '');
    await writeFile(join(dir, 'part.csv.tmp'), 'id\n1\n');
    await writeFile(join(dir, 'pending.csv'), 'id\n1\n');
    const stats = await startWatching(dir, table, opts);
    assert.equal(stats.filesIngested + stats.filesFailed, 0);
    assert.deepEqual(await leftovers(dir), ['.hidden.csv', '.hidden.csv.ready', 'part.csv.tmp', 'pending.csv']);
    await stopWatching(dir, { registry: t.registry });
  });

  it('sends a poison file (every attempt closes its connection while the database answers) to failed/ after 3 attempts; the \
others land', async () => {
    const { dir, table, opts } = await t.inbox();
    let poisonAttempts = 0;
    const poisonous = defineIngester({
      name: 'csv-poisonous',
      extensions: ['.csv'],
      append(conn, file, target, ctx) {
        if (!file.name.startsWith('poison')) return csvIngester.append(conn, file, target, ctx);
        poisonAttempts++;
        // A NUL inside a query's text is a protocol error: the server drops the connection.
        return ResultAsync.fromPromise(conn.query('SELECT 1\u0000'), (error) => fromDbError(error, file.name)).map(() => ({ rows: 0 }));
      },
    });
    // The table exists: the initial sweep takes the four files as one group, and the group is split.
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT)`);
    for (const [i, name] of ['a.csv', 'poison.csv', 'b.csv', 'c.csv'].entries()) await drop(dir, name, csv('id', [[i]]));
    const handle = await openWatcher(dir, table, { ...opts, plugins: [poisonous], retryDelayMs: { initial: 20, max: 100 } });
    await waitFor(() => handle.stats.filesFailed === 1 && handle.stats.filesIngested === 3, 'three files in, the poison file failed');
    assert.equal(await count(t.pool, table), 3);
    assert.ok(poisonAttempts >= POISON_FILE_ATTEMPTS, `${poisonAttempts} attempts`);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'poison.csv.error'), 'utf8'));
    assert.equal(report.code, 'POISON_FILE');
    assert.equal(report.kind, 'data');
    assert.equal(report.file, 'poison.csv');
    assert.match(report.message, new RegExp(`${POISON_FILE_ATTEMPTS} attempts .*connection closing`));
    assert.match(report.hint, /replay/);
    assert.deepEqual(await failedEntries(dir), ['poison.csv', 'poison.csv.error', 'poison.csv.ready']);
    // Nothing is stuck: the next file lands.
    await drop(dir, 'd.csv', csv('id', [[9]]));
    await waitFor(() => handle.stats.filesIngested === 4, 'd.csv');
    await handle.stop();
    assert.deepEqual(await leftovers(dir), []);
    assert.deepEqual(await stagedEntries(dir), []);
  });

  it('onBadRows skip: a bad file among small ones ready together keeps its good rows, its bad ones set aside', async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, onBadRows: 'skip' });
    await drop(dir, 'first.csv', csv('id,amount', [[0, 0]]));
    await waitFor(() => handle.stats.filesIngested === 1, 'first.csv creates the table');
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        drop(dir, `s${i}.csv`, i === 4 ? 'id,amount\n41,1\n42,lots\n43\n44,4\n' : csv('id,amount', [[i * 10 + 1, i]])),
      ),
    );
    await waitFor(() => handle.stats.filesIngested === 11, '10 more files');
    await handle.stop();
    assert.equal(handle.stats.filesFailed, 0);
    assert.equal(handle.stats.rowsRejected, 2);
    assert.equal(await count(t.pool, table), 1 + 9 + 2);
    assert.deepEqual(await failedEntries(dir), ['s4.csv.rejected.csv']);
    assert.equal(
      await readFile(join(dir, 'failed', 's4.csv.rejected.csv'), 'utf8'),
      'line,reason,record\n3,"column ""amount"": ""lots"" is not a bigint","42,lots"\n4,1 field(s) where the header has 2,43\n',
    );
    const [ledger] = await t.pool.query<{ row_count: string; rows_rejected: string }>(
      `SELECT row_count, rows_rejected FROM hyperwatch_internal.ingest_log WHERE target_table = $1 AND file_name = 's4.csv'`,
      [table],
    );
    assert.deepEqual([Number(ledger!.row_count), Number(ledger!.rows_rejected)], [2, 2]);
    const others = await t.pool.query<{ rows_rejected: string | null }>(
      `SELECT rows_rejected FROM hyperwatch_internal.ingest_log WHERE target_table = $1 AND file_name <> 's4.csv'`,
      [table],
    );
    assert.deepEqual(
      new Set(others.map((r) => (r.rows_rejected === null ? null : Number(r.rows_rejected)))),
      new Set([0]),
      'files of a group: 0 rejected, not unknown',
    );
    assert.deepEqual(await stagedEntries(dir), []);
  });
}
