/**
 * `onBadRows: 'skip'` and what is committed and recorded, on a real embedded hyperd and a real
 * PostgreSQL: a clean file, `maxBadRows` as a count and as a fraction (past it the file fails as
 * without the option), the default, a file that creates its table, the ledger's rows_rejected
 * (added to an old ledger), recovery of staged rejected-rows files, and no rejected-rows file
 * replaced by another of the same name.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { openWatcher } from '../../../src/api.ts';
import { LEDGER_TABLE } from '../../../src/constants.ts';
import { qualifiedName } from '../../../src/columns/sql.ts';
import { readHistory } from '../../../src/store/history.ts';
import { WatcherRegistry } from '../../../src/registry.ts';
import { drop, failedEntries, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { count } from '../../helpers/env.ts';
import { badRowCases, MIXED } from '../../helpers/bad-rows-bench.ts';

badRowCases(({ fx, fixture, inbox, ledgerRow }) => {
  it('a file without bad rows commits as before, with 0 rejected and no rejected-rows file', async () => {
    const { dir, handle } = await inbox('clean', { onBadRows: 'skip' });
    await drop(dir, 'c.csv', 'id,name,day\n1,a,2024-01-01\n2,b,2024-01-02\n');
    await waitFor(() => handle.stats.filesIngested === 1, 'c.csv');
    await handle.stop();
    assert.equal(await count(fx.pool, 'clean'), 2);
    assert.deepEqual(await ledgerRow('clean', 'c.csv'), [[2, 0]]);
    assert.deepEqual(await failedEntries(dir), []);
    assert.equal(handle.stats.rowsRejected, 0);
  });

  it('past maxBadRows (a count) the whole file fails as without the option, and nothing is set aside', async () => {
    const { dir, handle } = await inbox('capped', { onBadRows: 'skip', maxBadRows: 2 });
    await drop(dir, 'm.csv', MIXED);
    await waitFor(() => handle.stats.filesFailed === 1, 'm.csv failed');
    await handle.stop();
    assert.equal(await count(fx.pool, 'capped'), 0);
    assert.deepEqual(await failedEntries(dir), ['m.csv', 'm.csv.error', 'm.csv.ready']);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'm.csv.error'), 'utf8')) as {
      code: string;
      message: string;
      line: number;
    };
    assert.equal(report.code, 'TOO_MANY_BAD_ROWS');
    assert.match(report.message, /3 or more rows could not be loaded.*2 row\(s\).*line 3/);
    assert.equal(report.line, 3);
    assert.deepEqual(await stagedEntries(dir), []);
    assert.equal(handle.stats.rowsRejected, 0);
  });

  it('past maxBadRows as a fraction the file fails; within it, it lands', async () => {
    const { dir, handle } = await inbox('fraction', { onBadRows: 'skip', maxBadRows: 0.4 });
    await drop(dir, 'm.csv', MIXED); // 5 bad of 9 rows: 56%
    await drop(dir, 'ok.csv', 'id,name,day\n1,a,2024-01-01\n2,b,2024-01-02\nnope,c,2024-01-03\n'); // 1 of 3: 33%
    await waitFor(() => handle.stats.filesFailed + handle.stats.filesIngested === 2, 'both settled');
    await handle.stop();
    assert.equal(handle.stats.filesFailed, 1);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'm.csv.error'), 'utf8')) as { code: string; message: string };
    assert.equal(report.code, 'TOO_MANY_BAD_ROWS');
    assert.match(report.message, /5 of 9 rows/);
    assert.equal(await count(fx.pool, 'fraction'), 2);
    assert.deepEqual(
      (await failedEntries(dir)).filter((f) => f.includes('rejected')),
      ['ok.csv.rejected.csv'],
    );
  });

  it('by default (onBadRows fail) a bad row fails the file, naming its line', async () => {
    const { dir, handle } = await inbox('strict', {});
    await drop(dir, 'm.csv', MIXED);
    await waitFor(() => handle.stats.filesFailed === 1, 'm.csv failed');
    await handle.stop();
    assert.equal(await count(fx.pool, 'strict'), 0);
    assert.deepEqual(await failedEntries(dir), ['m.csv', 'm.csv.error', 'm.csv.ready']);
    const report = JSON.parse(await readFile(join(dir, 'failed', 'm.csv.error'), 'utf8')) as { code: string };
    assert.match(report.code, /^DB_22/);
  });

  it('a file that creates the table: a structural bad row is left out, a value past the sample widens its column', async () => {
    const { dir, handle } = await inbox('fresh', { onBadRows: 'skip' }, false);
    const rows = Array.from({ length: 2100 }, (_, i) => `${i},n${i}`);
    rows[2050] = '2050.5,wider'; // past the 2000-row sample: bigint widens to double
    rows[10] = '10'; // too few fields
    await drop(dir, 'f.csv', `id,name\n${rows.join('\n')}\n`);
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 1, 'f.csv settled');
    await handle.stop();
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.equal(await count(fx.pool, 'fresh'), 2099);
    const rejected = await readFile(join(dir, 'failed', 'f.csv.rejected.csv'), 'utf8');
    assert.equal(rejected, 'line,reason,record\n12,1 field(s) where the header has 2,10\n');
    assert.equal(await count(fx.pool, 'fresh', 'id = 2050.5'), 1);
  });

  it('an old ledger without rows_rejected gets the column at start', async () => {
    await fixture;
    const dir = join(fx.root, 'old-ledger');
    await mkdir(dir);
    const columns = async () => (await fx.pool.transaction((c) => c.describeTable(LEDGER_TABLE)))?.map((c) => c.name) ?? [];
    if ((await columns()).length === 0) {
      await fx.pool.query(
        `CREATE TABLE ${qualifiedName(LEDGER_TABLE)} (claim_id TEXT NOT NULL, file_name TEXT NOT NULL, file_size BIGINT NOT ` +
          `NULL, row_count BIGINT NOT NULL, target_table TEXT NOT NULL, directory TEXT NOT NULL, committed_at TIMESTAMPTZ NOT ` +
          `NULL, checksum TEXT)`,
      );
    } else {
      await fx.pool.query(`ALTER TABLE ${qualifiedName(LEDGER_TABLE)} DROP COLUMN rows_rejected`);
    }
    assert.ok(!(await columns()).includes('rows_rejected'));
    const before = await readHistory(fx.pool);
    assert.ok(before.length > 0 && before.every((e) => e.rowsRejected === null), 'history reads a ledger without the column');
    const handle = await openWatcher(dir, 'after_migration', { db: fx.db, registry: new WatcherRegistry() });
    await drop(dir, 'a.csv', 'id\n1\n');
    await waitFor(() => handle.stats.filesIngested === 1, 'a.csv');
    await handle.stop();
    assert.ok((await columns()).includes('rows_rejected'));
    assert.deepEqual(await ledgerRow('after_migration', 'a.csv'), [[1, null]]);
  });

  it('recovery: committed rows whose rejected file is still staged move it to failed/; an uncommitted claim writes it anew', async () => {
    await fixture;
    const dir = join(fx.root, 'recovery');
    const staging = join(dir, '.hyperwatch', 'staging');
    await mkdir(staging, { recursive: true });
    await fx.pool.query('CREATE TABLE recovered (id BIGINT, name TEXT, day DATE)');
    // A commit the run did not get to settle: its rows and ledger row are in, its files staged.
    await writeFile(join(staging, 'aaaa-1~done.csv'), 'id,name,day\n1,a,2024-01-01\nbad,b,2024-01-02\n');
    await writeFile(join(staging, 'aaaa-1~done.csv.ready'), '');
    await writeFile(join(staging, 'aaaa-1~done.csv.rejected.csv'), 'line,reason,record\n3,why,"bad,b,2024-01-02"\n');
    await fx.pool.query(
      `INSERT INTO ${qualifiedName(LEDGER_TABLE)} (claim_id, file_name, file_size, row_count, target_table, directory, ` +
        `committed_at, rows_rejected) VALUES ('aaaa-1', 'done.csv', 1, 1, 'recovered', '${dir}', CURRENT_TIMESTAMP, 1)`,
    );
    await fx.pool.query(`INSERT INTO recovered VALUES (1, 'a', DATE '2024-01-01')`);
    // A commit settled but for its rejected rows (the run died after removing its files).
    await writeFile(join(staging, 'aaaa-3~gone.csv.rejected.csv'), 'line,reason,record\n2,why,x\n');
    await fx.pool.query(
      `INSERT INTO ${qualifiedName(LEDGER_TABLE)} (claim_id, file_name, file_size, row_count, target_table, directory, ` +
        `committed_at, rows_rejected) VALUES ('aaaa-3', 'gone.csv', 1, 0, 'recovered', '${dir}', CURRENT_TIMESTAMP, 1)`,
    );
    // A claim that never committed, with a stale rejected file of an earlier attempt.
    await writeFile(join(staging, 'aaaa-2~todo.csv'), 'id,name,day\n2,c,2024-01-03\nworse,d,2024-01-04\n');
    await writeFile(join(staging, 'aaaa-2~todo.csv.ready'), '');
    await writeFile(join(staging, 'aaaa-2~todo.csv.rejected.csv'), 'half-written garb');
    const handle = await openWatcher(dir, 'recovered', { db: fx.db, registry: new WatcherRegistry(), onBadRows: 'skip' });
    await handle.stop();
    assert.equal(await count(fx.pool, 'recovered'), 2, "the committed row once, the uncommitted file's good row");
    assert.deepEqual(await stagedEntries(dir), []);
    assert.deepEqual(await failedEntries(dir), ['done.csv.rejected.csv', 'gone.csv.rejected.csv', 'todo.csv.rejected.csv']);
    assert.equal(await readFile(join(dir, 'failed', 'gone.csv.rejected.csv'), 'utf8'), 'line,reason,record\n2,why,x\n');
    assert.equal(await readFile(join(dir, 'failed', 'done.csv.rejected.csv'), 'utf8'), 'line,reason,record\n3,why,"bad,b,2024-01-02"\n');
    assert.match(
      await readFile(join(dir, 'failed', 'todo.csv.rejected.csv'), 'utf8'),
      /^line,reason,record\n3,"column ""id"": ""worse"" is not a bigint","worse,d,2024-01-04"\n$/,
    );
  });

  it('a second rejected-rows file of the same name never replaces the first', async () => {
    const { dir, handle } = await inbox('twice', { onBadRows: 'skip' });
    await drop(dir, 'd.csv', 'id,name,day\n1,a,2024-01-01\nx,b,2024-01-02\n');
    await waitFor(() => handle.stats.filesIngested === 1, 'first d.csv');
    await waitFor(async () => (await failedEntries(dir)).length === 1, 'first rejected file');
    await drop(dir, 'd.csv', 'id,name,day\n2,a,2024-01-01\ny,b,2024-01-02\n');
    await waitFor(() => handle.stats.filesIngested === 2, 'second d.csv');
    await handle.stop();
    const names = await failedEntries(dir);
    assert.equal(names.length, 2);
    assert.ok(names.includes('d.csv.rejected.csv'));
    const contents = await Promise.all(names.map((f) => readFile(join(dir, 'failed', f), 'utf8')));
    assert.ok(contents.some((c) => c.includes('x,b')) && contents.some((c) => c.includes('y,b')));
  });
});
