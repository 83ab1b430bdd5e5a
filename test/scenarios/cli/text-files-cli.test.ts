/**
 * `--csv-delimiter` and `--encoding` as a user sets them up: `hyperwatch watch` run as a command on
 * a real embedded hyperd with spreadsheet exports, the flags' errors, `--help`, and the serve
 * config's `csvDelimiter` and `encoding` (checked, and handed to the watcher).
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, validateConfig } from '../../../src/serve/config.ts';
import { ServeInstance } from '../../../src/serve/server.ts';
import { silentLogger } from '../../../src/log.ts';
import { drop } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { cli, usageError } from '../../helpers/proc.ts';

const EXPORT = '\ufeffid;city;amount\r\n1;"Köln; Mitte";1,5\r\n2;Bonn;2,25\r\n';

describe('--csv-delimiter and --encoding from the CLI and the serve config', () => {
  const tmp = useTempDir('hyperwatch-delimiter-cli-');

  it("watch --csv-delimiter ';' loads a spreadsheet export; without it the file fails as CSV_DELIMITER and the command \
says so", async () => {
    const inbox = await tmp.dir('semi');
    await drop(inbox, 'export.csv', EXPORT);
    const refused = await cli(['watch', inbox, '--table', 't', '--database', tmp.path('semi.hyper'), '--once']).done;
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /code=CSV_DELIMITER/);
    assert.deepEqual((await readdir(join(inbox, 'failed'))).sort(), ['export.csv', 'export.csv.error', 'export.csv.ready']);

    const again = await tmp.dir('semi-again');
    await drop(again, 'export.csv', EXPORT);
    const run = await cli([
      'watch',
      again,
      '--table',
      't',
      '--database',
      tmp.path('semi.hyper'),
      '--once',
      '--json',
      '--csv-delimiter',
      ';',
    ]).done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).stats.rowsIngested, 2);
    const query = await cli(['query', '--database', tmp.path('semi.hyper'), '--json', 'SELECT city, amount FROM t ORDER BY id']).done;
    assert.deepEqual(JSON.parse(query.stdout), [
      { city: 'Köln; Mitte', amount: '1,5' },
      { city: 'Bonn', amount: '2,25' },
    ]);
  });

  it('watch --csv-delimiter tab reads a .csv that is tab-separated', async () => {
    const inbox = await tmp.dir('tab');
    await drop(inbox, 'tabbed.csv', 'id\tnote\n1\ta, b\n');
    const run = await cli(['watch', inbox, '--table', 'tabbed', '--database', tmp.path('tab.hyper'), '--once', '--csv-delimiter', 'tab'])
      .done;
    assert.equal(run.code, 0, run.stderr);
    const query = await cli(['query', '--database', tmp.path('tab.hyper'), '--json', 'SELECT note FROM tabbed']).done;
    assert.deepEqual(JSON.parse(query.stdout), [{ note: 'a, b' }]);
  });

  it("watch --encoding windows-1252 --csv-delimiter ';' loads what a German spreadsheet saves as CSV", async () => {
    const inbox = await tmp.dir('cp1252');
    // "id;Straße;Betrag" / "1;Köln €;1,5" in Windows-1252 (ß 0xdf, ö 0xf6, € 0x80).
    const bytes = Uint8Array.from(
      [...'id;Stra']
        .map((c) => c.charCodeAt(0))
        .concat(
          [0xdf],
          [...'e;Betrag\r\n1;K'].map((c) => c.charCodeAt(0)),
          [0xf6],
          [...'ln '].map((c) => c.charCodeAt(0)),
          [0x80],
          [...';1,5\r\n'].map((c) => c.charCodeAt(0)),
        ),
    );
    await drop(inbox, 'export.csv', bytes);
    const run = await cli([
      'watch',
      inbox,
      '--table',
      'de',
      '--database',
      tmp.path('de.hyper'),
      '--once',
      '--encoding',
      'windows-1252',
      '--csv-delimiter',
      ';',
    ]).done;
    assert.equal(run.code, 0, run.stderr);
    const query = await cli(['query', '--database', tmp.path('de.hyper'), '--json', 'SELECT "Straße" AS s, "Betrag" AS b FROM de']).done;
    assert.deepEqual(JSON.parse(query.stdout), [{ s: 'Köln €', b: '1,5' }]);
  });

  it('exits 2 with a one-line error for --encoding klingon', async () => {
    await usageError(['watch', '.', '--table', 't', '--encoding', 'klingon'], /--encoding: "klingon" is not a known character set/);
  });

  for (const [value, message] of [
    [';;', /--csv-delimiter must be one ASCII character, got ";;" \(for a tab: --csv-delimiter tab\)/],
    ['"', /--csv-delimiter cannot be "\\"" \(the quote or a line break\)/],
  ] as const) {
    it(`exits 2 with a one-line error for --csv-delimiter ${value}`, async () => {
      await usageError(['watch', '.', '--table', 't', '--csv-delimiter', value], message);
    });
  }

  it('--help lists the flag', async () => {
    const run = await cli(['watch', '--help']).done;
    assert.ok(run.stdout.includes('--csv-delimiter <char>'));
    assert.ok(run.stdout.includes('--encoding <charset>'));
  });

  it('the serve config takes csvDelimiter and encoding, refuses bad ones by name, and hands them to the watcher', async () => {
    const root = tmp.path();
    const dir = await tmp.dir('served');
    const good = await validateConfig(
      { watchers: [{ dir: 'served', table: 't', csvDelimiter: ';', encoding: 'windows-1252' }] },
      'c.json',
      { baseDir: root, env: {} },
    );
    assert.equal(good.watchers[0]!.csvDelimiter, ';');
    assert.equal(good.watchers[0]!.encoding, 'windows-1252');
    const wrongCharset = await validateConfig({ watchers: [{ dir: 'served', table: 't', encoding: 'klingon' }] }, 'c.json', {
      baseDir: root,
      env: {},
    }).catch((error: unknown) => error);
    assert.ok(wrongCharset instanceof ConfigError);
    assert.deepEqual(
      wrongCharset.issues.map((i) => i.path),
      ['watchers[0].encoding'],
    );
    for (const bad of ['"', ';;']) {
      const issues = await validateConfig({ watchers: [{ dir: 'served', table: 't', csvDelimiter: bad }] }, 'c.json', {
        baseDir: root,
        env: {},
      }).then(
        () => assert.fail(`accepted ${bad}`),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError);
          return error.issues;
        },
      );
      assert.deepEqual(
        issues.map((i) => i.path),
        ['watchers[0].csvDelimiter'],
      );
    }
    // ';'-separated Windows-1252 ("Köln", ö 0xf6): both settings must reach the watcher.
    await drop(
      dir,
      'cp1252.csv',
      Uint8Array.from(
        [...'id;city;amount\n9;K']
          .map((c) => c.charCodeAt(0))
          .concat(
            [0xf6],
            [...'ln;1\n'].map((c) => c.charCodeAt(0)),
          ),
      ),
    );
    const serve = new ServeInstance({ logger: silentLogger, baseDir: root });
    const handle = await serve.add({
      dir,
      table: 'served',
      database: tmp.path('serve.hyper'),
      csvDelimiter: ';',
      encoding: 'windows-1252',
    });
    assert.equal(handle.stats.filesIngested, 1, JSON.stringify(handle.stats.lastError));
    await serve.remove(dir);
    const query = await cli(['query', '--database', tmp.path('serve.hyper'), '--json', 'SELECT city FROM served']).done;
    assert.deepEqual(JSON.parse(query.stdout), [{ city: 'Köln' }]);
  });
});
