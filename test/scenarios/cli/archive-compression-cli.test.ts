/**
 * Archiving and compressed files as a user sets them up: `hyperwatch watch` flags (run as a
 * command, on a real embedded hyperd), `--help`, and the serve config's fields.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { byteCount } from '../../../src/cli/util.ts';
import { ConfigError, validateConfig } from '../../../src/serve/config.ts';
import { confineWatcher } from '../../../src/serve/confine.ts';
import { ServeInstance } from '../../../src/serve/server.ts';
import { silentLogger } from '../../../src/log.ts';
import { gzip } from '../../helpers/compression-suite.ts';
import { csv, drop } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { cli, ROOT, usageError } from '../../helpers/proc.ts';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'compressed');

describe('archive and compression from the CLI and the serve config', () => {
  const tmp = useTempDir('hyperwatch-archive-cli-');

  it('watch --once --on-success archive --archive-by-date: .csv.gz and .csv.zst land and are archived in a day folder', async () => {
    const inbox = await tmp.dir('archive');
    await drop(inbox, 'a.csv.gz', await gzip(csv('id,name,amount', [[10, 'x', 0.5]])));
    await drop(inbox, 'orders.csv.zst', await readFile(join(FIXTURES, 'orders.csv.zst')));
    const db = tmp.path('archive.hyper');
    const run = await cli([
      'watch',
      inbox,
      '--table',
      't',
      '--database',
      db,
      '--once',
      '--json',
      '--on-success',
      'archive',
      '--archive-dir',
      '../kept',
      '--archive-by-date',
    ]).done;
    assert.equal(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).stats.filesIngested, 2);
    assert.deepEqual((await readdir(inbox)).sort(), ['.hyperwatch', 'failed']);
    const [day] = await readdir(tmp.path('kept'));
    assert.match(day!, /^\d{4}-\d{2}-\d{2}$/);
    assert.deepEqual((await readdir(tmp.path('kept', day!))).sort(), [
      'a.csv.gz',
      'a.csv.gz.ready',
      'orders.csv.zst',
      'orders.csv.zst.ready',
    ]);
    const query = await cli(['query', '--database', db, '--json', 'SELECT COUNT(*) AS n FROM t']).done;
    assert.equal(JSON.parse(query.stdout)[0].n, '4');
  });

  it('watch --max-decompressed-bytes 1M fails a bomb; --no-compression treats .gz as unknown', async () => {
    const inbox = await tmp.dir('bomb');
    await drop(inbox, 'bomb.csv.zst', await readFile(join(FIXTURES, 'bomb.csv.zst')));
    const run = await cli([
      'watch',
      inbox,
      '--table',
      'b',
      '--database',
      tmp.path('bomb.hyper'),
      '--once',
      '--max-decompressed-bytes',
      '1M',
    ]).done;
    assert.equal(run.code, 1, run.stderr);
    const report = JSON.parse(await readFile(join(inbox, 'failed', 'bomb.csv.zst.error'), 'utf8'));
    assert.equal(report.code, 'DECOMPRESSED_TOO_LARGE');
    assert.match(report.message, /past maxDecompressedBytes \(1048576 bytes\)/);

    const off = await tmp.dir('off');
    await drop(off, 'x.csv.gz', await gzip(csv('id', [[1]])));
    const plain = await cli(['watch', off, '--table', 'o', '--database', tmp.path('off.hyper'), '--once', '--no-compression']).done;
    assert.equal(plain.code, 1, plain.stderr);
    assert.equal(JSON.parse(await readFile(join(off, 'failed', 'x.csv.gz.error'), 'utf8')).code, 'UNKNOWN_EXTENSION');
  });

  for (const [label, args, message] of [
    ['a bad --on-success', ['--on-success', 'move'], /--on-success is delete or archive, got "move"/],
    [
      '--archive-dir without --on-success archive',
      ['--archive-dir', 'x'],
      /--archive-dir and --archive-by-date go with --on-success archive/,
    ],
    ['a bad --max-decompressed-bytes', ['--max-decompressed-bytes', 'lots'], /--max-decompressed-bytes expects a size such as 4G/],
  ] as const) {
    it(`exits 2 with a one-line error for ${label}`, async () => {
      await usageError(['watch', '.', '--table', 't', ...args], message);
    });
  }

  it('--help lists the flags; sizes take K, M, G, T suffixes', async () => {
    const run = await cli(['watch', '--help']).done;
    for (const flag of [
      '--on-success <delete|archive>',
      '--archive-dir <folder>',
      '--archive-by-date',
      '--no-compression',
      '--max-decompressed-bytes <n>',
    ])
      assert.ok(run.stdout.includes(flag), flag);
    assert.equal(byteCount('4G', 'x'), 4 * 1024 ** 3);
    assert.equal(byteCount('512MiB', 'x'), 512 * 1024 ** 2);
    assert.equal(byteCount('1048576', 'x'), 1048576);
  });

  it('the serve config takes onSuccess, archiveDir, archiveByDate, compression, maxDecompressedBytes, and says what is wrong \
with them', async () => {
    const root = tmp.path();
    await tmp.dir('served');
    const good = await validateConfig(
      {
        watchers: [
          {
            dir: 'served',
            table: 't',
            onSuccess: 'archive',
            archiveDir: 'old',
            archiveByDate: true,
            compression: false,
            maxDecompressedBytes: 1024,
          },
        ],
      },
      'c.json',
      { baseDir: root, env: {} },
    );
    assert.deepEqual(
      { ...good.watchers[0], dir: undefined },
      {
        dir: undefined,
        table: 't',
        onSuccess: 'archive',
        archiveDir: 'old',
        archiveByDate: true,
        compression: false,
        maxDecompressedBytes: 1024,
      },
    );
    const bad = await validateConfig({ watchers: [{ dir: 'served', table: 't', onSuccess: 'move', maxDecompressedBytes: 0 }] }, 'c.json', {
      baseDir: root,
      env: {},
    }).then(
      () => assert.fail('accepted'),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        return error.issues;
      },
    );
    assert.deepEqual(bad.map((i) => i.path).sort(), ['watchers[0].maxDecompressedBytes', 'watchers[0].onSuccess']);
    assert.match(bad.find((i) => i.path === 'watchers[0].onSuccess')!.fix, /"delete" or "archive"/);
    // Over HTTP, the archive must lie under the allowed roots like the directory itself.
    const confined = await confineWatcher(
      { dir: join(root, 'served'), table: 't', adapter: 'postgres', url: 'postgres://h/d', archiveDir: '/etc/elsewhere' },
      { allowedRoots: [root], allowedServers: ['postgres://h/d'] },
    );
    assert.ok(
      'refused' in confined && /archiveDir \/etc\/elsewhere is outside the allowed roots/.test(confined.refused),
      JSON.stringify(confined),
    );
  });

  it('serve hands a watcher its onSuccess, archiveDir and maxDecompressedBytes', async () => {
    const dir = await tmp.dir('serve-inbox');
    await drop(dir, 'kept.csv.gz', await gzip(csv('id', [[1], [2]])));
    await drop(dir, 'bomb.csv.zst', await readFile(join(FIXTURES, 'bomb.csv.zst')));
    const serve = new ServeInstance({ logger: silentLogger, baseDir: tmp.path() });
    const handle = await serve.add({
      dir,
      table: 'served',
      database: tmp.path('serve.hyper'),
      onSuccess: 'archive',
      archiveDir: 'done',
      maxDecompressedBytes: 1 << 20,
    });
    assert.equal(handle.stats.filesIngested, 1);
    assert.equal(handle.stats.filesFailed, 1);
    await serve.remove(dir);
    assert.deepEqual((await readdir(join(dir, 'done'))).sort(), ['kept.csv.gz', 'kept.csv.gz.ready']);
    assert.equal(JSON.parse(await readFile(join(dir, 'failed', 'bomb.csv.zst.error'), 'utf8')).code, 'DECOMPRESSED_TOO_LARGE');
  });
});
