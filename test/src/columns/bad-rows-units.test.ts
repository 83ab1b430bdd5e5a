/**
 * `onBadRows: 'skip'` and `maxBadRows`, the parts that need no database of their own: the limit,
 * the CSV record splitter, the value checks, the CLI flags, the serve config and /metrics.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { csvRecords } from '../../../plugins/csv/records.ts';
import { valueCheck } from '../../../plugins/shared/value-check.ts';
import { openWatcher } from '../../../src/api.ts';
import { parseMaxBadRows, pastLimit } from '../../../src/columns/bad-rows.ts';
import { ConfigError, validateConfig } from '../../../src/serve/config.ts';
import { renderMetrics } from '../../../src/serve/metrics.ts';
import { parseSqlType } from '../../../src/columns/sql-types.ts';
import { emptyStats } from '../../../src/observe/stats.ts';
import { drop } from '../../helpers/drop.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { cli, usageError } from '../../helpers/proc.ts';

describe('bad rows: the pure parts', () => {
  it('maxBadRows is a count from 1 up (or 0), a fraction below 1, else an error', () => {
    assert.deepEqual(parseMaxBadRows(100), { limit: { count: 100 } });
    assert.deepEqual(parseMaxBadRows('0.01'), { limit: { fraction: 0.01 } });
    assert.deepEqual(parseMaxBadRows('0'), { limit: { count: 0 } });
    assert.deepEqual(parseMaxBadRows(undefined), { limit: undefined });
    assert.ok('error' in parseMaxBadRows('2.5'));
    assert.ok('error' in parseMaxBadRows('-1'));
    assert.ok('error' in parseMaxBadRows('lots'));
    assert.equal(pastLimit({ count: 2 }, 2, 0), false);
    assert.equal(pastLimit({ count: 2 }, 3, 100), true);
    assert.equal(pastLimit({ fraction: 0.1 }, 1, 9), false, '1 of 10 is 10%, not past it');
    assert.equal(pastLimit({ fraction: 0.1 }, 2, 9), true);
    assert.equal(pastLimit(undefined, 1000, 0), false);
  });

  it('openWatcher refuses an unknown onBadRows and a maxBadRows that is no count or fraction', async () => {
    await assert.rejects(openWatcher('.', 't', { onBadRows: 'sometimes' as 'skip' }), /onBadRows must be 'fail' or 'skip'/);
    await assert.rejects(openWatcher('.', 't', { onBadRows: 'skip', maxBadRows: 1.5 }), /maxBadRows above 1 must be a whole number/);
  });

  it('splits records as COPY does: quoted line breaks, "" escapes, CRLF, the line each starts on', async () => {
    async function* text() {
      yield '\uFEFFa,b\r\n1,"x\r\ny"\r\n2,"q""';
      yield 'uote"\n\n3,\n4,"open\nstill';
    }
    const records = [];
    for await (const r of csvRecords(text(), ',')) records.push(r);
    assert.deepEqual(
      records.map((r) => [r.line, r.fields, r.quoted, r.unterminated]),
      [
        [1, ['a', 'b'], [false, false], false],
        [2, ['1', 'x\r\ny'], [false, true], false],
        [4, ['2', 'q"uote'], [false, true], false],
        [5, [''], [false], false],
        [6, ['3', ''], [false, false], false],
        [7, ['4', 'open\nstill'], [false, true], true],
      ],
    );
    assert.equal(records[1]!.text, '1,"x\r\ny"');
  });

  it('turns away only values both databases refuse', () => {
    const bigint = valueCheck(parseSqlType('bigint'), true);
    assert.equal(bigint(' 12 ', false), undefined);
    assert.equal(bigint('', false), undefined, 'NULL');
    assert.match(bigint('', true) ?? '', /not a bigint/, '"" is an empty string, not NULL');
    assert.match(bigint('abc', false) ?? '', /not a bigint/);
    assert.match(bigint('9223372036854775808', false) ?? '', /out of range/);
    assert.equal(bigint('1.0', false), undefined, 'Hyper takes it: left to the database');
    assert.match(bigint('x2', false) ?? '', /not a bigint/);
    assert.match(valueCheck(parseSqlType('integer'), true)('3000000000', false) ?? '', /out of range/);
    assert.match(valueCheck(parseSqlType('integer'), false)('', false) ?? '', /NOT NULL/);
    const date = valueCheck(parseSqlType('date'), true);
    assert.match(date('2024-02-30', false) ?? '', /not a date/);
    assert.match(date('N/A', false) ?? '', /not a date/);
    assert.equal(date('01/02/2024', false), undefined);
    assert.match(valueCheck(parseSqlType('double precision'), true)('1,5', false) ?? '', /not a number/);
    assert.equal(valueCheck(parseSqlType('double precision'), true)('-Infinity', false), undefined);
    assert.match(valueCheck(parseSqlType('numeric(5,2)'), true)('1234.5', false) ?? '', /more than 3 digit/);
    assert.match(valueCheck(parseSqlType('boolean'), true)('2', false) ?? '', /not a boolean/);
    assert.equal(valueCheck(parseSqlType('text'), true)('anything', false), undefined);
  });
});

describe('bad rows in the CLI, the serve config and /metrics', () => {
  let root: string;
  const ready = tempDir('hyperwatch-badrows-cli-').then((d) => (root = d));
  after(() => ready.then(removeDir));

  it('watch --on-bad-rows skip --max-bad-rows: bad rows left out, counted in the summary, exit 0', async () => {
    await ready;
    const inbox = join(root, 'inbox');
    await mkdir(inbox);
    await drop(inbox, 'a.csv', 'id,name\n1,a\nnope,b\n3,c\n');
    const run = await cli([
      'watch',
      inbox,
      '--table',
      'people',
      '--database',
      join(root, 'cli.hyper'),
      '--once',
      '--json',
      '--quiet',
      '--on-bad-rows',
      'skip',
      '--max-bad-rows',
      '5',
    ]).done;
    assert.equal(run.code, 0, run.stderr);
    const summary = JSON.parse(run.stdout) as { stats: { rowsIngested: number; rowsRejected: number; filesFailed: number } };
    assert.equal(summary.stats.filesFailed, 0);
    assert.equal(summary.stats.rowsRejected, 0, 'a new table: "nope" makes id TEXT, nothing is bad');
    await drop(inbox, 'b.csv', 'id,name\n4,d\n5,e,extra\n');
    const again = await cli(['watch', inbox, '--table', 'people', '--database', join(root, 'cli.hyper'), '--once', '--on-bad-rows', 'skip'])
      .done;
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /rows rejected: +1 /);
    assert.deepEqual((await readdir(join(inbox, 'failed'))).sort(), ['b.csv.rejected.csv']);
    const history = await cli(['history', '--database', join(root, 'cli.hyper'), '--json']).done;
    assert.equal(history.code, 0, history.stderr);
    const entries = JSON.parse(history.stdout) as { file: string; rows: number; rowsRejected: number | null }[];
    assert.deepEqual(
      entries.map((e) => [e.file, e.rows, e.rowsRejected]),
      [
        ['a.csv', 3, 0],
        ['b.csv', 1, 1],
      ],
    );
    const text = await cli(['history', '--database', join(root, 'cli.hyper')]).done;
    assert.match(text.stdout, /\| b\.csv +\| people +\| 1 +\| 1 /);
    const help = await cli(['watch', '--help']).done;
    assert.match(help.stdout, /--on-bad-rows <fail\|skip>/);
    assert.match(help.stdout, /--max-bad-rows <n\|fraction>/);
  });

  for (const [label, args, message] of [
    ['an unknown --on-bad-rows', ['--on-bad-rows', 'maybe'], /--on-bad-rows is fail or skip/],
    ['a --max-bad-rows that is no count', ['--on-bad-rows', 'skip', '--max-bad-rows', '2.5'], /--max-bad-rows: .*whole number/],
    ['--max-bad-rows without skip', ['--max-bad-rows', '3'], /--max-bad-rows needs --on-bad-rows skip/],
  ] as const) {
    it(`watch exits 2 with a one-line error for ${label}`, async () => {
      await usageError(['watch', '.', '--table', 't', ...args], message);
    });
  }

  it('the serve config takes onBadRows and maxBadRows, and says what is wrong with them', async () => {
    await ready;
    await mkdir(join(root, 'w'), { recursive: true });
    await validateConfig({ watchers: [{ dir: 'w', table: 't', onBadRows: 'skip', maxBadRows: 0.05 }] }, 'ok.json', {
      baseDir: root,
      env: {},
    });
    const problems = async (watcher: Record<string, unknown>) => {
      try {
        await validateConfig({ watchers: [{ dir: 'w', table: 't', ...watcher }] }, 'bad.json', { baseDir: root, env: {} });
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.issues.map((i) => `${i.path}: ${i.problem}`).join('; ');
      }
      return '';
    };
    assert.match(await problems({ onBadRows: 'sometimes' }), /watchers\[0\]\.onBadRows/);
    assert.match(await problems({ onBadRows: 'skip', maxBadRows: 2.5 }), /watchers\[0\]\.maxBadRows: .*whole number/);
    assert.match(await problems({ onBadRows: 'skip', maxBadRows: -1 }), /watchers\[0\]\.maxBadRows/);
    assert.match(await problems({ maxBadRows: 10 }), /watchers\[0\]\.maxBadRows: is set but onBadRows is not "skip"/);
  });

  it('/metrics counts rows left out', () => {
    const stats = emptyStats(4);
    stats.rowsRejected = 7;
    const text = renderMetrics([{ directory: '/in', table: 't', stats, oldestQueuedAt: undefined }]);
    assert.match(text, /^hyperwatch_rows_rejected_total\{dir="\/in",table="t"\} 7$/m);
  });
});
