/**
 * `sniff: true` (`--sniff`): the sniffer alone on the polluted files (what it decides for each,
 * against the flags a user would type), then through real watchers on hyperd and PostgreSQL: the
 * polluted files with `--sniff` instead of those flags land the clean rows; files that read more
 * than one way fail as CSV_SNIFF_UNDECIDED with their candidates, nothing landing; small files
 * written in different dialects, ready together, each land as written.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { optionsFromFlags, POLLUTIONS, pollutedText } from '../../../bench/lib/polluted.ts';
import { sniffCsv } from '../../../plugins/csv/sniff.ts';
import { sniffedFlags } from '../../../plugins/csv/sniffed.ts';
import { openWatcher } from '../../../src/api.ts';
import { once, report } from '../../helpers/csv-dates-suite.ts';
import { rowsOf } from '../../helpers/csv-dialect-suite.ts';
import { drop, waitFor } from '../../helpers/drop.ts';
import { count, hyperFixture } from '../../helpers/env.ts';
import { pollutedCase } from '../../helpers/polluted-suite.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import { useWatchBench, type WatchBench } from '../../helpers/watch-bench.ts';

/** Pollutions sniff does not cover: header lines it cannot tell from rows, names for a file without a header. */
const NOT_SNIFFED = new Set(['two-header-lines', 'three-header-lines', 'no-header']);

describe('the sniffer', () => {
  it('decides, for each polluted file, the settings a user would give (a date format as the order it implies)', () => {
    for (const p of POLLUTIONS) {
      if (NOT_SNIFFED.has(p.name)) continue;
      const { decided, undecided } = sniffCsv(pollutedText(p, 'none').text, p.extension ?? '.csv');
      assert.deepEqual(undecided, [], p.name);
      const given = optionsFromFlags(p.flags.filter((_, i, all) => all[i] !== '--encoding' && all[i - 1] !== '--encoding'));
      const sniffed = optionsFromFlags(sniffedFlags(decided));
      const { dateFormat, ...rest } = given as typeof given & { dateFormat?: string };
      assert.deepEqual(
        { ...sniffed, nullValues: sniffed.nullValues ?? [] },
        {
          ...rest,
          ...(dateFormat ? { dateStyle: 'DMY' } : {}),
          // null-na writes only NA: NULL is the user's extra marker, not in the file.
          nullValues: (rest.nullValues ?? []).filter((m) => m !== 'NULL' || p.name !== 'null-na'),
        },
        p.name,
      );
    }
  });

  it('a file that reads more than one way: its settings undecided, with the candidates', () => {
    const dates = sniffCsv('id,d\n1,01/02/2018\n2,03/04/2018\n', '.csv');
    assert.deepEqual(
      dates.undecided.map((u) => [u.setting, u.candidates]),
      [['dateStyle', ['DMY', 'MDY']]],
    );
    const decimal = sniffCsv('id;amount\n1;1,234\n2;5,678\n', '.csv');
    assert.deepEqual(
      decimal.undecided.map((u) => [u.setting, u.candidates]),
      [['decimalSeparator', [',', '.']]],
    );
    const delimiter = sniffCsv('a;b,c\n1;2,3\n4;5,6\n', '.csv');
    assert.deepEqual(
      delimiter.undecided.map((u) => [u.setting, u.candidates]),
      [['delimiter', [',', ';']]],
    );
    // A file that says nothing of a setting leaves it as it is: no decision, nothing undecided.
    assert.deepEqual(sniffCsv('name,city\nAda,London\nGrace,Arlington\n', '.csv'), { decided: {}, undecided: [] });
  });
});

function sniffCases(t: WatchBench): void {
  for (const p of POLLUTIONS) {
    if (NOT_SNIFFED.has(p.name)) continue;
    const flags = ['--sniff', ...(p.name === 'windows-1252' ? ['--encoding', 'windows-1252'] : [])];
    it(`${p.name} with ${flags.join(' ')} alone: every file lands the clean rows, the bad ones set aside`, () => pollutedCase(t, p, flags));
  }

  it('files that read more than one way fail as CSV_SNIFF_UNDECIDED listing the candidates; nothing lands', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, d DATE, amount DOUBLE PRECISION)`);
    await drop(dir, 'dates.csv', 'id,d,amount\n1,01/02/2018,1\n2,03/04/2018,2\n');
    await drop(dir, 'amounts.csv', 'id;d;amount\n3;2018-01-01;1,234\n4;2018-01-02;5,678\n');
    const stats = await once(t, dir, table, { ...opts, sniff: true });
    assert.equal(stats.filesFailed, 2);
    const dates = await report(dir, 'dates.csv');
    assert.equal(dates.code, 'CSV_SNIFF_UNDECIDED');
    assert.match(dates.message, /dateStyle: --date-style DMY or --date-style MDY \("01\/02\/2018" reads day first and month first/);
    const amounts = await report(dir, 'amounts.csv');
    assert.equal(amounts.code, 'CSV_SNIFF_UNDECIDED');
    assert.match(amounts.message, /decimalSeparator: --decimal-separator , or --decimal-separator \. \("1,234" reads as a decimal/);
    assert.match(amounts.hint, /hyperwatch check/);
    assert.equal(await count(t.pool, table), 0);
    // Told the one setting, the rest still sniffed: it lands.
    await drop(dir, 'amounts.csv', 'id;d;amount\n3;2018-01-01;1,234\n4;2018-01-02;5,678\n');
    const told = await once(t, dir, table, { ...opts, sniff: true, decimalSeparator: ',' });
    assert.equal(told.filesIngested, 1, JSON.stringify(told.lastError));
    assert.deepEqual(await rowsOf(t, `SELECT id, CAST(d AS TEXT), amount FROM ${table} ORDER BY id`), [
      ['3', '2018-01-01', '1.234'],
      ['4', '2018-01-02', '5.678'],
    ]);
  });

  it('small files in different dialects ready together, one gzip-compressed, each land as written; a new table from a \
sniffed file without a header', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, amount DOUBLE PRECISION, d DATE)`);
    const files: Record<string, string> = {
      'us.csv': 'id,amount,d\n1,1.5,02/13/2018\n',
      'de.csv': 'id;amount;d\n2;1.234,5;13.02.2018\n3;NA;\n',
      'pg.csv': 'id,amount,d\n4,\\N,2018-02-13\n',
      'report.csv': 'Report of the day\nid|amount|d\n5|7|2018-02-13\n',
    };
    for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
    const { gzip } = await import('../../helpers/compression-suite.ts');
    await writeFile(join(dir, 'z.csv.gz'), await gzip("id;amount;d\n6;'2,5';13/02/2018\n"));
    const names = [...Object.keys(files), 'z.csv.gz'];
    for (const name of names) await writeFile(join(dir, `${name}.ready`), '');
    const handle = await openWatcher(dir, table, { ...opts, sniff: true });
    await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === names.length, 'the group');
    await handle.stop();
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    assert.deepEqual(await rowsOf(t, `SELECT id, amount, CAST(d AS TEXT) FROM ${table} ORDER BY id`), [
      ['1', '1.5', '2018-02-13'],
      ['2', '1234.5', '2018-02-13'],
      ['3', null, null],
      ['4', null, '2018-02-13'],
      ['5', '7', '2018-02-13'],
      ['6', '2.5', '2018-02-13'],
    ]);

    const bare = await t.inbox();
    await drop(bare.dir, 'bare.csv', '1,2018-02-01,3.5\n2,2018-02-02,4\n');
    assert.equal((await once(t, bare.dir, bare.table, { ...bare.opts, sniff: true })).filesIngested, 1);
    assert.deepEqual(await rowsOf(t, `SELECT column1, CAST(column2 AS TEXT), column3 FROM ${bare.table} ORDER BY column1`), [
      ['1', '2018-02-01', '3.5'],
      ['2', '2018-02-02', '4'],
    ]);
  });
}

describe('--sniff on hyperd', () => {
  const t = useWatchBench(() => hyperFixture(), 'sniff_');
  sniffCases(t);
});

const { pgFixture } = await postgresForFile();

describe('--sniff on PostgreSQL', () => {
  const t = useWatchBench(pgFixture, 'sniff_pg_');
  sniffCases(t);
});

describe('hyperwatch check suggests the sniffed dialect', () => {
  it('checkFile: the flags the head of a file shows beyond those given, and what it reads more than one way', async (t) => {
    const { checkFile } = await import('../../../src/index.ts');
    const { removeDir, tempDir } = await import('../../helpers/env.ts');
    const dir = await tempDir();
    t.after(() => removeDir(dir));
    await writeFile(join(dir, 'de.csv'), 'Sales report\nid;amount;day\n1;1.234,5;13/02/2018\n2;NA;01/03/2018\n');
    const plain = await checkFile(join(dir, 'de.csv'));
    assert.equal(plain.lands, false, 'read as comma-separated, the report does not land');
    assert.deepEqual(plain.sniffed, {
      flags: [
        ...['--csv-delimiter', ';', '--skip-lines', '1', '--null-value', 'NA', '--date-style', 'DMY'],
        ...['--decimal-separator', ',', '--thousands-separator', '.'],
      ],
      undecided: [],
    });
    const sniffed = await checkFile(join(dir, 'de.csv'), { sniff: true });
    assert.equal(sniffed.lands, true, JSON.stringify(sniffed.error));
    assert.deepEqual(
      sniffed.rows.map((r) => [String(r.id), r.amount === null ? null : Number(r.amount)]),
      [
        ['1', 1234.5],
        ['2', null],
      ],
    );
    // Given, a setting is no longer suggested.
    const told = await checkFile(join(dir, 'de.csv'), { csvDelimiter: ';', skipLines: 1, dateStyle: 'DMY' });
    assert.deepEqual(told.sniffed?.flags, ['--null-value', 'NA', '--decimal-separator', ',', '--thousands-separator', '.']);
    await writeFile(join(dir, 'amb.csv'), 'id,d\n1,01/02/2018\n2,03/04/2018\n');
    const amb = await checkFile(join(dir, 'amb.csv'), { sniff: true });
    assert.equal(amb.lands, false);
    assert.equal(amb.error?.code, 'CSV_SNIFF_UNDECIDED');
    assert.deepEqual(
      amb.sniffed?.undecided.map((u) => [u.setting, u.candidates]),
      [['dateStyle', ['DMY', 'MDY']]],
    );
  });
});
