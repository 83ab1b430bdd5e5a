/** The serve config file's checks: every invalid field reported on its own, with where, what and the fix. */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig, validateConfig, validateWatcher, type ConfigIssue } from '../../../src/serve/config.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { cli } from '../../helpers/proc.ts';

async function issuesOf(raw: unknown, baseDir: string, env: Record<string, string | undefined> = {}): Promise<ConfigIssue[]> {
  try {
    await validateConfig(raw, 'test.json', { baseDir, env });
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return [...error.issues];
  }
  assert.fail('the config was accepted');
}

function byPath(issues: readonly ConfigIssue[]): Map<string, ConfigIssue> {
  const map = new Map(issues.map((i) => [i.path, i]));
  assert.equal(map.size, issues.length, `one issue per field: ${JSON.stringify(issues)}`);
  return map;
}

describe('serve config validation', () => {
  let root: string;
  before(async () => {
    root = await tempDir('hyperwatch-config-');
    await mkdir(join(root, 'a'));
    await mkdir(join(root, 'b'));
  });
  after(() => removeDir(root));

  it('accepts a valid file, resolving paths against its directory and defaulting http', async () => {
    const config = await validateConfig(
      {
        watchers: [
          { dir: 'a', table: 'events', database: 'db/events.hyper' },
          { dir: 'b', table: 'sales.orders', adapter: 'postgres', url: 'postgres://u:p@h:5432/d' },
        ],
      },
      'ok.json',
      { baseDir: root, env: {} },
    );
    // POSTed watchers may go where the config's do (next to them), to the servers it uses.
    assert.deepEqual(config.http, {
      host: '127.0.0.1',
      port: 7878,
      protectReads: false,
      allowedRoots: [root],
      allowedServers: ['postgres://u:p@h:5432/d'],
    });
    assert.equal(config.watchers[0]!.dir, join(root, 'a'));
    assert.equal(config.watchers[0]!.database, join(root, 'db', 'events.hyper'));
    assert.equal(config.watchers[1]!.adapter, 'postgres');
  });

  it('reports each schema violation once, with its path, the problem and a fix', async () => {
    const issues = byPath(
      await issuesOf(
        {
          http: { port: 'eighty', hots: 'x' },
          watchers: [
            { dir: 'a', table: 'events', maxConcurrent: 99, fs: 'inotify', createTable: 'yes' },
            { dir: 'b', tabel: 'orders', adapter: 'mysql', retryDelayMs: { initial: -1 } },
          ],
        },
        root,
      ),
    );
    assert.deepEqual([...issues.keys()].sort(), [
      'http.hots',
      'http.port',
      'watchers[0].createTable',
      'watchers[0].fs',
      'watchers[0].maxConcurrent',
      'watchers[1].adapter',
      'watchers[1].retryDelayMs.initial',
      'watchers[1].tabel',
      'watchers[1].table',
    ]);
    assert.match(issues.get('http.port')!.problem, /must be integer, got "eighty"/);
    assert.match(issues.get('http.port')!.fix, /whole number from 0 to 65535/);
    assert.match(issues.get('watchers[0].maxConcurrent')!.problem, /<= 32, got 99/);
    assert.match(issues.get('watchers[0].maxConcurrent')!.fix, /from 1 to 32/);
    assert.match(issues.get('watchers[1].table')!.problem, /is missing/);
    assert.match(issues.get('watchers[1].tabel')!.problem, /not a known setting/);
    assert.match(issues.get('watchers[1].tabel')!.fix, /known here: dir, table,/);
    assert.match(issues.get('watchers[1].adapter')!.problem, /one of "hyper", "postgres", got "mysql"/);
    assert.match(issues.get('watchers[0].createTable')!.fix, /true or false/);
    for (const issue of issues.values()) assert.ok(issue.fix.length > 10, `a fix for ${issue.path}`);
  });

  it('reports what the schema cannot: table names, adapter settings, duplicates, missing directories, tokens', async () => {
    const issues = byPath(
      await issuesOf(
        {
          http: { host: '0.0.0.0' },
          watchers: [
            { dir: 'a', table: 'a.b.c' },
            { dir: `${root}/a/`, table: 't' },
            { dir: 'b', table: 't', adapter: 'postgres', database: 'x.hyper' },
            { dir: 'missing', table: 't', url: 'postgres://h/d', retryDelayMs: { initial: 500, max: 100 } },
          ],
        },
        root,
      ),
    );
    assert.deepEqual([...issues.keys()].sort(), [
      'http.token',
      'watchers[0].table',
      'watchers[1].dir',
      'watchers[2].database',
      'watchers[2].url',
      'watchers[3].dir',
      'watchers[3].retryDelayMs',
      'watchers[3].url',
    ]);
    assert.match(issues.get('http.token')!.problem, /required when the API listens on 0\.0\.0\.0/);
    assert.match(issues.get('watchers[0].table')!.problem, /invalid table name "a.b.c"/);
    assert.match(issues.get('watchers[1].dir')!.problem, /also watched by watchers\[0\]/);
    assert.match(issues.get('watchers[2].database')!.problem, /hyper adapter only/);
    assert.match(issues.get('watchers[2].url')!.problem, /missing \(and DATABASE_URL is not set\)/);
    assert.match(issues.get('watchers[3].dir')!.problem, /does not exist/);
    assert.match(issues.get('watchers[3].dir')!.fix, /mkdir -p/);
    assert.match(issues.get('watchers[3].url')!.problem, /postgres adapter only/);
    // DATABASE_URL stands in for a missing url.
    await validateConfig({ watchers: [{ dir: 'b', table: 't', adapter: 'postgres' }] }, 'env.json', {
      baseDir: root,
      env: { DATABASE_URL: 'postgres://h/d' },
    });
  });

  it('checks databaseVersion (0 to 4, Hyper only) and passes it on', async () => {
    const config = await validateConfig({ watchers: [{ dir: 'a', table: 'events', databaseVersion: 0 }] }, 'v.json', {
      baseDir: root,
      env: {},
    });
    assert.equal(config.watchers[0]!.databaseVersion, 0);
    const schema = byPath(await issuesOf({ watchers: [{ dir: 'a', table: 'events', databaseVersion: 5 }] }, root));
    assert.match(schema.get('watchers[0].databaseVersion')!.problem, /must be one of 0, 1, 2, 3, 4, got 5/);
    assert.match(schema.get('watchers[0].databaseVersion')!.fix, /Use 0, 1, 2, 3 or 4/);
    const postgres = byPath(
      await issuesOf(
        { watchers: [{ dir: 'b', table: 'orders', adapter: 'postgres', url: 'postgres://u:p@h:5432/d', databaseVersion: 2 }] },
        root,
      ),
    );
    assert.match(postgres.get('watchers[0].databaseVersion')!.problem, /applies to the hyper adapter only/);
  });

  it('checks schemaEvolution and sourceColumns, and passes them on', async () => {
    const issues = byPath(
      await issuesOf(
        {
          watchers: [
            { dir: 'a', table: 't', schemaEvolution: 'add', sourceColumns: { path: '_p' } },
            { dir: 'b', table: 't', sourceColumns: { file: 'src', claim: 'SRC' } },
          ],
        },
        root,
      ),
    );
    assert.deepEqual([...issues.keys()].sort(), ['watchers[0].schemaEvolution', 'watchers[0].sourceColumns.path']);
    assert.match(issues.get('watchers[0].schemaEvolution')!.fix, /"fail" or "addColumns"/);
    // Names the schema allows, but not together: checked after it.
    const twice = byPath(await issuesOf({ watchers: [{ dir: 'b', table: 't', sourceColumns: { file: 'src', claim: 'SRC' } }] }, root));
    assert.match(twice.get('watchers[0].sourceColumns')!.problem, /"SRC" is given twice/);
    const config = await validateConfig(
      { watchers: [{ dir: 'a', table: 't', schemaEvolution: 'addColumns', sourceColumns: { file: '_source_file', committed: '_at' } }] },
      'ok.json',
      { baseDir: root, env: {} },
    );
    assert.equal(config.watchers[0]!.schemaEvolution, 'addColumns');
    assert.deepEqual(config.watchers[0]!.sourceColumns, { file: '_source_file', committed: '_at' });
  });

  it('takes the token from the environment variable tokenEnv names', async () => {
    const config = await validateConfig({ http: { host: '0.0.0.0', tokenEnv: 'HW_TOKEN' }, watchers: [] }, 'tok.json', {
      baseDir: root,
      env: { HW_TOKEN: 'x'.repeat(20) },
    });
    assert.equal(config.http.token, 'x'.repeat(20));
    assert.equal(config.http.protectReads, true, 'off loopback, reads need the token too');
    const issues = byPath(await issuesOf({ http: { host: '0.0.0.0', tokenEnv: 'HW_TOKEN' }, watchers: [] }, root));
    assert.match(issues.get('http.tokenEnv')!.problem, /names HW_TOKEN, which is not set/);
    const short = byPath(await issuesOf({ http: { token: 'short' }, watchers: [] }, root));
    assert.match(short.get('http.token')!.problem, /fewer than 16 characters/);
  });

  it('resolves the http settings against the config file: allowedRoots, allowedServers, tokenFile, protectReads', async () => {
    const config = await validateConfig(
      {
        http: {
          protectReads: true,
          allowedRoots: ['drops', '/srv/in'],
          allowedServers: ['postgres://x@h/d'],
          tokenFile: 'state/api.token',
        },
        watchers: [{ dir: 'a', table: 't', endpoint: '127.0.0.1:7483' }],
      },
      'http.json',
      { baseDir: root, env: {} },
    );
    assert.deepEqual(config.http, {
      host: '127.0.0.1',
      port: 7878,
      tokenFile: join(root, 'state', 'api.token'),
      protectReads: true,
      allowedRoots: [join(root, 'drops'), '/srv/in'],
      allowedServers: ['postgres://x@h/d', '127.0.0.1:7483'],
    });
    const issues = byPath(
      await issuesOf({ http: { token: 'y'.repeat(20), tokenFile: 'f', allowedRoots: 'drops', protectReads: 'yes' }, watchers: [] }, root),
    );
    assert.deepEqual([...issues.keys()].sort(), ['http.allowedRoots', 'http.protectReads']);
    assert.match(issues.get('http.allowedRoots')!.fix, /list of directories/);
    const both = byPath(
      await issuesOf({ http: { token: 'y'.repeat(20), tokenFile: 'f', socket: 'api.sock', port: 1 }, watchers: [] }, root),
    );
    assert.deepEqual([...both.keys()].sort(), ['http.port', 'http.tokenFile']);
    assert.match(both.get('http.tokenFile')!.problem, /together with a configured token/);
    assert.match(both.get('http.port')!.problem, /together with http\.socket/);
    const socket = await validateConfig({ http: { socket: 'run/api.sock' }, watchers: [] }, 'sock.json', { baseDir: root, env: {} });
    assert.equal(socket.http.socket, join(root, 'run', 'api.sock'));
  });

  it('checks a POST /watchers body the same way, with paths from the body', async () => {
    const bad = await validateWatcher({ dir: 'a', table: 't', maxConcurrent: 0, extra: true }, { baseDir: root, env: {} });
    assert.deepEqual(bad.issues.map((i) => i.path).sort(), ['extra', 'maxConcurrent']);
    const missing = await validateWatcher({ dir: 'nope', table: 't' }, { baseDir: root, env: {} });
    assert.deepEqual(
      missing.issues.map((i) => i.path),
      ['dir'],
    );
    const good = await validateWatcher({ dir: 'a', table: 't' }, { baseDir: root, env: {} });
    assert.equal(good.watcher?.dir, join(root, 'a'));
  });

  it('names unreadable and malformed files', async () => {
    await assert.rejects(loadConfig(join(root, 'none.json')), /none\.json: 1 problem:\n {2}\(file\): cannot be read \(ENOENT\)/);
    await writeFile(join(root, 'broken.json'), '{ "watchers": [], }');
    await assert.rejects(loadConfig(join(root, 'broken.json')), /is not valid JSON .* Fix: Correct the JSON syntax/);
  });

  it('hyperwatch serve exits 2 and prints every problem, one per line, before starting anything', async () => {
    const file = join(root, 'bad.json');
    await writeFile(
      file,
      JSON.stringify({
        watchers: [
          { dir: 'a', table: 't', maxConcurrent: 'four' },
          { dir: 'nowhere', table: 't' },
        ],
      }),
    );
    const run = await cli(['serve', '--config', file]).done;
    assert.equal(run.code, 2);
    const lines = run.stderr.trim().split('\n');
    assert.match(lines[0]!, /bad\.json: 1 problem/);
    assert.match(lines[1]!, /^ {2}watchers\[0\]\.maxConcurrent: must be integer, got "four"\. Fix: Use a whole number from 1 to 32/);
    assert.doesNotMatch(run.stderr, /\n\s+at /);
    // Once the schema passes, the directory is checked too.
    await writeFile(
      file,
      JSON.stringify({
        watchers: [
          { dir: 'a', table: 't' },
          { dir: 'nowhere', table: 't' },
        ],
      }),
    );
    const second = await cli(['serve', '--config', file, '--log-format', 'json']).done;
    assert.equal(second.code, 2);
    const error = JSON.parse(second.stderr.trim()) as { level: string; message: string; code: string };
    assert.equal(error.level, 'error');
    assert.equal(error.code, 'CONFIG_INVALID');
    assert.match(error.message, /watchers\[1\]\.dir: .*nowhere does not exist/);
  });
});
