/**
 * `onBadRows: 'skip'` with `maxBadRows`: bad rows left out and set aside in
 * failed/<name>.rejected.csv, the good ones committed, the ledger counting both; past the limit
 * the file fails as without the option. On a real embedded hyperd and a real PostgreSQL (the
 * parts that need no database of their own: bad-rows-units.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { ResultAsync } from 'neverthrow';
import Papa from 'papaparse';
import { createPostgresAdapter } from '../adapters/db/postgres/index.ts';
import { openWatcher } from '../src/api.ts';
import { defineIngester } from '../src/plugins.ts';
import { LEDGER_TABLE } from '../src/constants.ts';
import { fromDbError } from '../src/errors.ts';
import { readHistory } from '../src/history.ts';
import { WatcherRegistry } from '../src/registry.ts';
import type { DbAdapter, DbPool } from '../src/types.ts';
import { drop, failedEntries, leftovers, stagedEntries, waitFor } from './helpers/drop.ts';
import { count, type DbFixture, dbFixture, hyperFixture, tempDir } from './helpers/env.ts';
import { startPostgres } from './helpers/postgres.ts';

/** A file with good rows and one of each kind of bad row, and what must come of it. */
const MIXED = [
  'id,name,day',
  '1,alpha,2024-01-01',
  'x2,beta,2024-01-02', // 3: not a bigint
  '3,"multi',
  'line",2024-01-03', // 4-5: a good row over two lines
  '4,delta', // 6: too few fields
  '', // 7: blank line
  '5,echo,2024-13-45', // 8: not a date
  '6,"fox, trot",2024-01-06',
  '1e3,golf,2024-01-07', // 10: let through here, refused by both databases
  '8,hotel,2024-01-08',
].join('\n');
const MIXED_GOOD = 4;
const MIXED_BAD_LINES = [3, 6, 7, 8, 10];

function badRowCases(name: string, open: () => Promise<DbFixture>): void {
  describe(`bad rows skipped on ${name}`, () => {
    let fx: DbFixture;
    let n = 0;
    const fixture = open().then((f) => (fx = f));
    after(async () => (await fixture).close());

    async function inbox(table: string, options: Record<string, unknown>, create = true) {
      await fixture;
      const dir = join(fx.root, `inbox-${++n}`);
      await mkdir(dir);
      if (create) await fx.pool.query(`CREATE TABLE ${table} (id BIGINT, name TEXT, day DATE)`);
      const handle = await openWatcher(dir, table, { db: fx.db, registry: new WatcherRegistry(), batchFiles: 1, ...options });
      return { dir, handle };
    }

    async function ledgerRow(table: string, file: string) {
      const rows = await fx.pool.query<{ row_count: string; rows_rejected: string | null }>(`SELECT row_count, rows_rejected FROM ${LEDGER_TABLE} WHERE target_table = '${table}' AND file_name = '${file}'`);
      return rows.map((r) => [Number(r.row_count), r.rows_rejected === null ? null : Number(r.rows_rejected)]);
    }

    it('leaves bad rows out, sets them aside with line and reason, commits the good ones', async () => {
      const { dir, handle } = await inbox('mixed', { onBadRows: 'skip' });
      await drop(dir, 'm.csv', MIXED);
      await waitFor(() => handle.stats.filesIngested === 1 || handle.stats.filesFailed === 1, 'm.csv settled');
      await handle.stop();
      assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
      assert.equal(await count(fx.pool, 'mixed'), MIXED_GOOD);
      const names = await fx.pool.query<{ name: string }>('SELECT name FROM mixed ORDER BY id');
      assert.deepEqual(
        names.map((r) => r.name),
        ['alpha', 'multi\nline', 'fox, trot', 'hotel'],
      );
      assert.equal(handle.stats.rowsIngested, MIXED_GOOD);
      assert.equal(handle.stats.rowsRejected, MIXED_BAD_LINES.length);
      assert.deepEqual(await ledgerRow('mixed', 'm.csv'), [[MIXED_GOOD, MIXED_BAD_LINES.length]]);
      assert.deepEqual(await failedEntries(dir), ['m.csv.rejected.csv'], 'only the rejected rows: the file itself landed');
      assert.deepEqual(await leftovers(dir), []);
      assert.deepEqual(await stagedEntries(dir), []);
      const rejected = Papa.parse<Record<string, string>>(await readFile(join(dir, 'failed', 'm.csv.rejected.csv'), 'utf8'), { header: true, skipEmptyLines: true }).data;
      assert.deepEqual(
        rejected.map((r) => Number(r.line)),
        MIXED_BAD_LINES,
      );
      assert.deepEqual(
        rejected.map((r) => r.record),
        ['x2,beta,2024-01-02', '4,delta', '', '5,echo,2024-13-45', '1e3,golf,2024-01-07'],
      );
      assert.match(rejected[0]!.reason!, /column "id".*not a bigint/);
      assert.match(rejected[1]!.reason!, /2 field\(s\) where the header has 3/);
      assert.match(rejected[2]!.reason!, /blank line/);
      assert.match(rejected[3]!.reason!, /column "day".*not a date/);
      assert.match(rejected[4]!.reason!, /refused by the database/);
    });

    it('NULL in a NOT NULL column and a quote never closed are bad rows too', async () => {
      await fixture;
      await fx.pool.query('CREATE TABLE strictcols (id BIGINT NOT NULL, name TEXT)');
      const { dir, handle } = await inbox('strictcols', { onBadRows: 'skip' }, false);
      await drop(dir, 'n.csv', 'id,name\n1,a\n,no id\n2,b\n3,"never closed\n4,d\n');
      await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 1, 'n.csv settled');
      await handle.stop();
      assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
      assert.equal(await count(fx.pool, 'strictcols'), 2);
      const rejected = Papa.parse<Record<string, string>>(await readFile(join(dir, 'failed', 'n.csv.rejected.csv'), 'utf8'), { header: true, skipEmptyLines: true }).data;
      assert.deepEqual(
        rejected.map((r) => [Number(r.line), r.record]),
        [
          [3, ',no id'],
          [5, '3,"never closed\n4,d\n'],
        ],
      );
      assert.match(rejected[0]!.reason!, /column "id": empty \(NULL\) in a NOT NULL column/);
      assert.match(rejected[1]!.reason!, /unterminated quoted field/);
    });

    it('JSON lines: lines that are no object and values that do not convert are left out, set aside as .jsonl', async () => {
      const { dir, handle } = await inbox('jsonl', { onBadRows: 'skip' });
      const lines = [
        '{"id": 1, "name": "a", "day": "2024-01-01"}',
        '{"id": 2, "name": "b"', // 2: invalid JSON
        '42', // 3: not an object
        '{"id": "x9", "name": "c"}', // 4: not a bigint
        '',
        '{"id": 5, "name": "e", "day": "2024-13-45"}', // 6: not a date
        '{"id": 6, "name": "f", "day": "2024-01-06"}',
      ];
      await drop(dir, 'e.jsonl', `${lines.join('\n')}\n`);
      await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 1, 'e.jsonl settled');
      await handle.stop();
      assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
      assert.equal(await count(fx.pool, 'jsonl'), 2);
      assert.deepEqual(await ledgerRow('jsonl', 'e.jsonl'), [[2, 4]]);
      assert.deepEqual(await failedEntries(dir), ['e.jsonl.rejected.jsonl']);
      const rejected = (await readFile(join(dir, 'failed', 'e.jsonl.rejected.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { line: number; reason: string; record: string });
      assert.deepEqual(
        rejected.map((r) => [r.line, r.record]),
        [
          [2, '{"id": 2, "name": "b"'],
          [3, '42'],
          [4, '{"id":"x9","name":"c"}'],
          [6, '{"id":5,"name":"e","day":"2024-13-45"}'],
        ],
      );
      assert.match(rejected[0]!.reason, /invalid JSON/);
      assert.match(rejected[1]!.reason, /a number, not a JSON object/);
      assert.match(rejected[2]!.reason, /refused by the database/);
      assert.match(rejected[3]!.reason, /key "day": "2024-13-45" is not a date/);
    });

    it('a plugin of your own hands rows to ctx.badRows: the core writes them, counts them and checks the limit', async () => {
      await fixture;
      const seen: boolean[] = [];
      const lines = defineIngester({
        name: 'lines',
        extensions: ['.lines'],
        append(conn, file, table, ctx) {
          seen.push(ctx.badRows !== undefined);
          return ResultAsync.fromPromise(
            (async () => {
              const text = new TextDecoder().decode(await file.read(0, file.size));
              let rows = 0;
              for (const [i, line] of text.split('\n').entries()) {
                if (line === '') continue;
                if (!/^\d+$/.test(line)) {
                  if (!ctx.badRows) throw new Error(`line ${i + 1} is bad`);
                  await ctx.badRows.reject({ line: i + 1, reason: 'not a number', record: line });
                  continue;
                }
                rows += await conn.execute(`INSERT INTO ${table.name} (id) VALUES (${line})`);
              }
              return { rows };
            })(),
            (error) => fromDbError(error, file.name),
          );
        },
      });
      const { dir, handle } = await inbox('own', { onBadRows: 'skip', maxBadRows: 2, plugins: [lines] });
      await drop(dir, 'a.lines', '1\nx\n2\n');
      await drop(dir, 'b.lines', 'p\nq\nr\n3\n');
      await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 2, 'both settled');
      await handle.stop();
      assert.deepEqual(seen, [true, true]);
      assert.equal(await count(fx.pool, 'own'), 2, 'a.lines committed, b.lines (3 bad rows) did not');
      assert.equal(handle.stats.rowsRejected, 1);
      assert.deepEqual(await failedEntries(dir), ['a.lines.rejected.csv', 'b.lines', 'b.lines.error', 'b.lines.ready']);
      assert.equal(await readFile(join(dir, 'failed', 'a.lines.rejected.csv'), 'utf8'), 'line,reason,record\n2,not a number,x\n');
    });

    it('Arrow values are typed: a column that does not fit still fails the file, nothing is set aside', async () => {
      const { dir, handle } = await inbox('typed', { onBadRows: 'skip' });
      const ipc = tableToIPC(tableFromArrays({ id: ['one', 'two'], name: ['a', 'b'] }), 'stream');
      await drop(dir, 't.arrow', ipc);
      await waitFor(() => handle.stats.filesFailed === 1, 't.arrow failed');
      await handle.stop();
      assert.deepEqual(await failedEntries(dir), ['t.arrow', 't.arrow.error', 't.arrow.ready']);
      assert.equal(await count(fx.pool, 'typed'), 0);
    });

    it('a row that is not UTF-8 is a bad row once the file is loaded row by row', async () => {
      const { dir, handle } = await inbox('encoding', { onBadRows: 'skip' });
      const bytes = Buffer.concat([Buffer.from('id,name,day\n1,caf\u00e9,2024-01-01\n2,'), Buffer.from([0xff, 0xfe]), Buffer.from(',2024-01-02\nzz,c,2024-01-03\n3,d,2024-01-04\n')]);
      await drop(dir, 'u.csv', bytes);
      await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 1, 'u.csv settled');
      await handle.stop();
      assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
      assert.deepEqual((await fx.pool.query<{ name: string }>('SELECT name FROM encoding ORDER BY id')).map((r) => r.name), ['caf\u00e9', 'd']);
      const rejected = Papa.parse<Record<string, string>>(await readFile(join(dir, 'failed', 'u.csv.rejected.csv'), 'utf8'), { header: true, skipEmptyLines: true }).data;
      assert.deepEqual(
        rejected.map((r) => [Number(r.line), r.reason]),
        [
          [3, 'not valid UTF-8'],
          [4, 'column "id": "zz" is not a bigint'],
        ],
      );
    });

    it('a .json of lines is split into good and bad lines; a JSON array with a syntax error still fails', async () => {
      const { dir, handle } = await inbox('jsonshape', { onBadRows: 'skip' });
      await drop(dir, 'l.json', '{"id": 1, "name": "a"}\n{"id": 2,\n{"id": 3, "name": "c"}\n');
      await drop(dir, 'a.json', '[{"id": 4}, {"id": 5,}]');
      await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 2, 'both settled');
      await handle.stop();
      assert.equal(await count(fx.pool, 'jsonshape'), 2);
      assert.deepEqual(await failedEntries(dir), ['a.json', 'a.json.error', 'a.json.ready', 'l.json.rejected.jsonl']);
      assert.equal(JSON.parse(await readFile(join(dir, 'failed', 'a.json.error'), 'utf8')).code, 'JSON_SYNTAX');
      const [line] = (await readFile(join(dir, 'failed', 'l.json.rejected.jsonl'), 'utf8')).trim().split('\n');
      assert.deepEqual(JSON.parse(line!).record, '{"id": 2,');
    });

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
      const report = JSON.parse(await readFile(join(dir, 'failed', 'm.csv.error'), 'utf8')) as { code: string; message: string; line: number };
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
      assert.deepEqual((await failedEntries(dir)).filter((f) => f.includes('rejected')), ['ok.csv.rejected.csv']);
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
      const columns = async () => (await fx.pool.transaction((c) => c.describeTable({ name: LEDGER_TABLE })))?.map((c) => c.name) ?? [];
      if ((await columns()).length === 0) {
        await fx.pool.query(
          `CREATE TABLE ${LEDGER_TABLE} (claim_id TEXT NOT NULL, file_name TEXT NOT NULL, file_size BIGINT NOT NULL, row_count BIGINT NOT NULL, target_table TEXT NOT NULL, directory TEXT NOT NULL, committed_at TIMESTAMPTZ NOT NULL, checksum TEXT)`,
        );
      } else {
        await fx.pool.query(`ALTER TABLE ${LEDGER_TABLE} DROP COLUMN rows_rejected`);
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
        `INSERT INTO ${LEDGER_TABLE} (claim_id, file_name, file_size, row_count, target_table, directory, committed_at, rows_rejected) VALUES ('aaaa-1', 'done.csv', 1, 1, 'recovered', '${dir}', CURRENT_TIMESTAMP, 1)`,
      );
      await fx.pool.query(`INSERT INTO recovered VALUES (1, 'a', DATE '2024-01-01')`);
      // A commit settled but for its rejected rows (the run died after removing its files).
      await writeFile(join(staging, 'aaaa-3~gone.csv.rejected.csv'), 'line,reason,record\n2,why,x\n');
      await fx.pool.query(
        `INSERT INTO ${LEDGER_TABLE} (claim_id, file_name, file_size, row_count, target_table, directory, committed_at, rows_rejected) VALUES ('aaaa-3', 'gone.csv', 1, 0, 'recovered', '${dir}', CURRENT_TIMESTAMP, 1)`,
      );
      // A claim that never committed, with a stale rejected file of an earlier attempt.
      await writeFile(join(staging, 'aaaa-2~todo.csv'), 'id,name,day\n2,c,2024-01-03\nworse,d,2024-01-04\n');
      await writeFile(join(staging, 'aaaa-2~todo.csv.ready'), '');
      await writeFile(join(staging, 'aaaa-2~todo.csv.rejected.csv'), 'half-written garb');
      const handle = await openWatcher(dir, 'recovered', { db: fx.db, registry: new WatcherRegistry(), onBadRows: 'skip' });
      await handle.stop();
      assert.equal(await count(fx.pool, 'recovered'), 2, 'the committed row once, the uncommitted file\'s good row');
      assert.deepEqual(await stagedEntries(dir), []);
      assert.deepEqual(await failedEntries(dir), ['done.csv.rejected.csv', 'gone.csv.rejected.csv', 'todo.csv.rejected.csv']);
      assert.equal(await readFile(join(dir, 'failed', 'gone.csv.rejected.csv'), 'utf8'), 'line,reason,record\n2,why,x\n');
      assert.equal(await readFile(join(dir, 'failed', 'done.csv.rejected.csv'), 'utf8'), 'line,reason,record\n3,why,"bad,b,2024-01-02"\n');
      assert.match(await readFile(join(dir, 'failed', 'todo.csv.rejected.csv'), 'utf8'), /^line,reason,record\n3,"column ""id"": ""worse"" is not a bigint","worse,d,2024-01-04"\n$/);
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
}

badRowCases('Hyper', () => hyperFixture());

badRowCases('PostgreSQL', async () => {
  const pg = await startPostgres();
  const db: DbAdapter = createPostgresAdapter({ url: pg.url });
  const fx = await dbFixture(await tempDir('hyperwatch-pgtest-'), db, { ownsDb: true });
  return { ...fx, close: async () => (await fx.close(), await pg.stop()) } satisfies DbFixture & { pool: DbPool };
});
