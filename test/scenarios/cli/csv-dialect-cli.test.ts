/**
 * The CSV dialect flags as a user types them: `hyperwatch watch` run as a command on a real
 * embedded hyperd, the flags' usage errors, `--help`, and the serve config's keys (checked, and
 * handed to the watcher).
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, validateConfig } from '../../../src/serve/config.ts';
import { ServeInstance } from '../../../src/serve/server.ts';
import { silentLogger } from '../../../src/log.ts';
import { drop } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { cli, usageError } from '../../helpers/proc.ts';

describe('CSV dialect flags from the CLI and the serve config', () => {
  const tmp = useTempDir('hyperwatch-dialect-cli-');

  it(
    'watch: 01/02/2018 fails as DATE_AMBIGUOUS naming --date-style; ' + '--date-style DMY lands it as 1 February, --date-format as written',
    async () => {
      const inbox = await tmp.dir('dates');
      const db = tmp.path('dates.hyper');
      await drop(inbox, 'first.csv', 'id,day\n1,2018-01-05\n');
      assert.equal((await cli(['watch', inbox, '--table', 't', '--database', db, '--once']).done).code, 0);
      await drop(inbox, 'eu.csv', 'id,day\n5,01/02/2018\n6,12/11/2018\n');
      const refused = await cli(['watch', inbox, '--table', 't', '--database', db, '--once']).done;
      assert.equal(refused.code, 1, refused.stderr);
      assert.match(refused.stderr, /code=DATE_AMBIGUOUS/);
      const error = JSON.parse(await readFile(join(inbox, 'failed', 'eu.csv.error'), 'utf8')) as { hint: string };
      assert.match(error.hint, /--date-style DMY/);
      await drop(inbox, 'eu.csv', 'id,day\n5,01/02/2018\n6,12/11/2018\n');
      const run = await cli(['watch', inbox, '--table', 't', '--database', db, '--once', '--date-style', 'DMY']).done;
      assert.equal(run.code, 0, run.stderr);
      await drop(inbox, 'de.csv', 'id,day\n7,24.12.2018\n');
      assert.equal((await cli(['watch', inbox, '--table', 't', '--database', db, '--once', '--date-format', '%d.%m.%Y']).done).code, 0);
      const query = await cli(['query', '--database', db, '--json', 'SELECT id, CAST(day AS TEXT) AS day FROM t ORDER BY id']).done;
      assert.deepEqual(JSON.parse(query.stdout), [
        { id: '1', day: '2018-01-05' },
        { id: '5', day: '2018-02-01' },
        { id: '6', day: '2018-11-12' },
        { id: '7', day: '2018-12-24' },
      ]);
    },
  );

  it("watch --null-value (repeatable): a database dump's \\N and R's NA land as NULL, a number column typed as one", async () => {
    const inbox = await tmp.dir('nulls');
    const db = tmp.path('nulls.hyper');
    await drop(inbox, 'dump.csv', 'id,amount,note\n1,\\N,NA\n2,2.5,"NA"\n');
    const run = await cli(['watch', inbox, '--table', 't', '--database', db, '--once', '--null-value', '\\N', '--null-value', 'NA']).done;
    assert.equal(run.code, 0, run.stderr);
    const query = await cli(['query', '--database', db, '--json', 'SELECT id, amount, note FROM t ORDER BY id']).done;
    assert.deepEqual(JSON.parse(query.stdout), [
      { id: '1', amount: null, note: null },
      { id: '2', amount: 2.5, note: 'NA' },
    ]);
  });

  it(
    "watch --csv-delimiter ';' --decimal-separator , --thousands-separator " + ".: a German spreadsheet's amounts land as numbers",
    async () => {
      const inbox = await tmp.dir('decimals');
      const db = tmp.path('decimals.hyper');
      await drop(inbox, 'export.csv', 'id;betrag\r\n1;1.234,50\r\n2;-0,25\r\n');
      const run = await cli([
        'watch',
        inbox,
        '--table',
        't',
        '--database',
        db,
        '--once',
        '--csv-delimiter',
        ';',
        '--decimal-separator',
        ',',
        '--thousands-separator',
        '.',
      ]).done;
      assert.equal(run.code, 0, run.stderr);
      const query = await cli(['query', '--database', db, '--json', 'SELECT id, betrag FROM t ORDER BY id']).done;
      assert.deepEqual(JSON.parse(query.stdout), [
        { id: '1', betrag: 1234.5 },
        { id: '2', betrag: -0.25 },
      ]);
    },
  );

  it(
    'watch --skip-lines 2 --comment # --quote "\'" --escape \\ and ' + '--no-header --column-names: a report and a headerless export land',
    async () => {
      const inbox = await tmp.dir('syntax');
      const db = tmp.path('syntax.hyper');
      await drop(inbox, 'report.csv', "Report\nmade today\nid,note\n1,'it\\'s'\n# total: 1\n\n");
      const run = await cli([
        'watch',
        inbox,
        '--table',
        'r',
        '--database',
        db,
        '--once',
        '--skip-lines',
        '2',
        '--comment',
        '#',
        '--quote',
        "'",
        '--escape',
        '\\',
      ]).done;
      assert.equal(run.code, 0, run.stderr);
      await drop(inbox, 'plain.csv', 'x,1\ny,2\n');
      const headless = await cli(['watch', inbox, '--table', 'h', '--database', db, '--once', '--no-header', '--column-names', 'name, n'])
        .done;
      assert.equal(headless.code, 0, headless.stderr);
      const query = await cli([
        'query',
        '--database',
        db,
        '--json',
        "SELECT (SELECT note FROM r) AS note, (SELECT string_agg(name || '=' || CAST(n AS TEXT), ';' ORDER BY n) FROM h) AS h",
      ]).done;
      assert.deepEqual(JSON.parse(query.stdout), [{ note: "it's", h: 'x=1;y=2' }]);
    },
  );

  it('watch --column-type zip=TEXT --all-text: the zip code keeps its zeros, the rest is TEXT; a type the database does not \
have exits 2', async () => {
    const inbox = await tmp.dir('types');
    const db = tmp.path('types.hyper');
    await drop(inbox, 'zips.csv', 'id,zip,n\n1,10001,5\n2,94105,6\n');
    const args = ['watch', inbox, '--table', 't', '--database', db, '--once'];
    const run = await cli([...args, '--column-type', 'zip=TEXT', '--column-type', 'id=BIGINT', '--all-text']).done;
    assert.equal(run.code, 0, run.stderr);
    await drop(inbox, 'later.csv', 'id,zip,n\n3,00501,x\n');
    assert.equal((await cli(args).done).code, 0);
    const query = await cli(['query', '--database', db, '--json', 'SELECT id, zip, n FROM t ORDER BY id']).done;
    assert.deepEqual(JSON.parse(query.stdout), [
      { id: '1', zip: '10001', n: '5' },
      { id: '2', zip: '94105', n: '6' },
      { id: '3', zip: '00501', n: 'x' },
    ]);
    const refused = await cli([...args, '--column-type', 'zip=NOSUCHTYPE']).done;
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /columnTypes gives column "zip" the type "NOSUCHTYPE", which the database refuses/);
  });

  for (const [args, message] of [
    [['--column-type', 'zip'], /--column-type expects <column>=<type>, e\.g\. zip=TEXT, got "zip"/],
    [['--column-type', 'zip=TEXT;'], /--column-type gives column "zip" the type "TEXT;", which is not the name of an SQL type/],
    [['--skip-lines', 'two'], /--skip-lines expects a whole number, got "two"/],
    [['--column-names', 'a,b'], /--column-names is set but the files have a header line/],
    [['--quote', ','], /--quote cannot be ","/],
    [['--decimal-separator', ','], /--decimal-separator is ",", the CSV delimiter too: set another delimiter/],
    [
      ['--csv-delimiter', ';', '--decimal-separator', ',', '--thousands-separator', ','],
      /--thousands-separator is ",", the decimal separator too/,
    ],
    [['--null-value', 'a"b'], /--null-value holds "a\\"b", which an unquoted field cannot be/],
    [['--date-style', 'DYM'], /--date-style is one of YMD, DMY, MDY, got "DYM"/],
    [['--date-format', '%d.%m'], /--date-format "%d\.%m" has no year/],
    [['--timestamp-format', '%Y-%m-%d %Q'], /--timestamp-format "%Y-%m-%d %Q" has %Q, which is not a directive/],
  ] as const) {
    it(`exits 2 with a one-line error for ${args.join(' ')}`, async () => {
      await usageError(['watch', '.', '--table', 't', ...args], message);
    });
  }

  it('--help lists the flags', async () => {
    const run = await cli(['watch', '--help']).done;
    for (const flag of [
      '--date-style <DMY|MDY|YMD>',
      '--date-format <format>',
      '--timestamp-format <format>',
      '--null-value <text>',
      '--decimal-separator <char>',
      '--thousands-separator',
      '--quote <char>',
      '--escape <char>',
      '--skip-lines <n>',
      '--comment <prefix>',
      '--no-header',
      '--column-type <column>=<type>',
      '--all-text',
    ])
      assert.ok(run.stdout.includes(flag), flag);
  });

  it(
    'the serve config takes dateStyle, dateFormat and timestampFormat, ' + 'refuses bad ones by name, and hands them to the watcher',
    async () => {
      const root = tmp.path();
      const dir = await tmp.dir('served');
      const good = await validateConfig(
        { watchers: [{ dir: 'served', table: 't', dateStyle: 'DMY', dateFormat: '%d.%m.%Y', timestampFormat: '%d/%m/%Y %H:%M' }] },
        'c.json',
        { baseDir: root, env: {} },
      );
      assert.equal(good.watchers[0]!.dateStyle, 'DMY');
      for (const [bad, path] of [
        [{ dateStyle: 'DYM' }, 'watchers[0].dateStyle'],
        [{ dateFormat: '%d.%m' }, 'watchers[0].dateFormat'],
        [{ timestampFormat: '%Y %Q' }, 'watchers[0].timestampFormat'],
        [{ nullValues: ['a\nb'] }, 'watchers[0].nullValues'],
        [{ nullValues: 'NA' }, 'watchers[0].nullValues'],
        [{ decimalSeparator: ',' }, 'watchers[0].decimalSeparator'],
        [{ skipLines: -1 }, 'watchers[0].skipLines'],
        [{ columnNames: ['a'] }, 'watchers[0].columnNames'],
        [{ quote: ',' }, 'watchers[0].quote'],
        [{ columnTypes: { zip: 'TEXT;' } }, 'watchers[0].columnTypes'],
        [{ columnTypes: ['zip'] }, 'watchers[0].columnTypes'],
        [{ allText: 'yes' }, 'watchers[0].allText'],
        [{ decimalSeparator: ',', thousandsSeparator: ',', csvDelimiter: ';' }, 'watchers[0].thousandsSeparator'],
      ] as const) {
        const error = await validateConfig({ watchers: [{ dir: 'served', table: 't', ...bad }] }, 'c.json', {
          baseDir: root,
          env: {},
        }).catch((e: unknown) => e);
        assert.ok(error instanceof ConfigError, JSON.stringify(bad));
        assert.deepEqual(
          error.issues.map((i) => i.path),
          [path],
        );
      }
      await drop(dir, 'eu.csv', 'id,day\n1,01/02/2018\n');
      const serve = new ServeInstance({ logger: silentLogger, baseDir: root });
      const handle = await serve.add({ dir, table: 'served', database: tmp.path('serve.hyper'), dateStyle: 'DMY' });
      assert.equal(handle.stats.filesIngested, 1, JSON.stringify(handle.stats.lastError));
      await serve.remove(dir);
      const query = await cli(['query', '--database', tmp.path('serve.hyper'), '--json', 'SELECT CAST(day AS TEXT) AS day FROM served'])
        .done;
      assert.deepEqual(JSON.parse(query.stdout), [{ day: '2018-02-01' }]);
    },
  );
});
