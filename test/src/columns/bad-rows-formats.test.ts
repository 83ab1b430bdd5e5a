/**
 * `onBadRows: 'skip'`, format by format, on a real embedded hyperd and a real PostgreSQL: which
 * rows of a CSV, a JSON lines file, a .json of lines, a plugin of your own and a file that is not
 * UTF-8 are left out and set aside in failed/<name>.rejected.<ext> with line and reason, the good
 * ones committed; Arrow values are typed, so an Arrow file still fails whole. The parts that need
 * no database: bad-rows-units.test.ts.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { ResultAsync } from 'neverthrow';
import Papa from 'papaparse';
import { defineIngester } from '../../../src/plugins.ts';
import { fromDbError } from '../../../src/errors.ts';
import { drop, failedEntries, leftovers, stagedEntries, waitFor } from '../../helpers/drop.ts';
import { count } from '../../helpers/env.ts';
import { badRowCases, MIXED, MIXED_BAD_LINES, MIXED_GOOD } from '../../helpers/bad-rows-bench.ts';

badRowCases(({ fx, fixture, inbox, ledgerRow }) => {
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
    const rejected = Papa.parse<Record<string, string>>(await readFile(join(dir, 'failed', 'm.csv.rejected.csv'), 'utf8'), {
      header: true,
      skipEmptyLines: true,
    }).data;
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
    const rejected = Papa.parse<Record<string, string>>(await readFile(join(dir, 'failed', 'n.csv.rejected.csv'), 'utf8'), {
      header: true,
      skipEmptyLines: true,
    }).data;
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
    const bytes = Buffer.concat([
      Buffer.from('id,name,day\n1,caf\u00e9,2024-01-01\n2,'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(',2024-01-02\nzz,c,2024-01-03\n3,d,2024-01-04\n'),
    ]);
    await drop(dir, 'u.csv', bytes);
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === 1, 'u.csv settled');
    await handle.stop();
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.deepEqual(
      (await fx.pool.query<{ name: string }>('SELECT name FROM encoding ORDER BY id')).map((r) => r.name),
      ['caf\u00e9', 'd'],
    );
    const rejected = Papa.parse<Record<string, string>>(await readFile(join(dir, 'failed', 'u.csv.rejected.csv'), 'utf8'), {
      header: true,
      skipEmptyLines: true,
    }).data;
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
});
