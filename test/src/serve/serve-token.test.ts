/**
 * The HTTP API of `hyperwatch serve` behind a bearer token with protectReads: every endpoint
 * answers 401 without the token and 200 with it, no watcher may be added outside the allowed
 * roots, and `hyperwatch status` asks for the token, and sends the token file only to a serve on
 * this machine.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { statusToken } from '../../../src/cli/serve.ts';
import { lineLogger } from '../../../src/log.ts';
import { startHttpApi } from '../../../src/serve/http.ts';
import { ServeInstance } from '../../../src/serve/server.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { cli } from '../../helpers/proc.ts';

describe('serve HTTP API with a token', () => {
  it('answers 401 without the bearer token and 200 with it, on every endpoint, with protectReads', async () => {
    const root = await tempDir('hyperwatch-token-');
    const serve = new ServeInstance({ logger: lineLogger(() => {}), baseDir: root });
    const token = 'a-long-enough-test-token-1234';
    const settings = { host: '127.0.0.1', port: 0, token, protectReads: true, allowedRoots: [], allowedServers: [] };
    const http = await startHttpApi(serve, settings, { logger: lineLogger(() => {}), baseDir: root });
    try {
      for (const [method, path] of [
        ['GET', '/watchers'],
        ['GET', '/metrics'],
        ['POST', '/watchers'],
        ['DELETE', '/watchers/x'],
      ] as const) {
        const denied = await fetch(`${http.url}${path}`, { method, headers: { authorization: 'Bearer wrong-token-wrong-token-12' } });
        assert.equal(denied.status, 401, `${method} ${path}`);
        assert.equal(denied.headers.get('www-authenticate'), 'Bearer');
      }
      assert.equal((await fetch(`${http.url}/watchers`)).status, 401);
      const ok = await fetch(`${http.url}/watchers`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200);
      assert.deepEqual(await ok.json(), { watchers: [] });
      const metrics = await fetch(`${http.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      assert.match(await metrics.text(), /^hyperwatch_watchers 0$/m);
      // With allowedRoots [], no watcher may be added over HTTP.
      const none = await fetch(`${http.url}/watchers`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: JSON.stringify({ dir: root, table: 't', database: join(root, 't.hyper') }),
      });
      assert.equal(none.status, 403);
      assert.match(
        ((await none.json()) as { error: string }).error,
        /outside the allowed roots \(none are allowed: set http\.allowedRoots/,
      );
      assert.deepEqual(await readdir(root), []);
      const env = { XDG_STATE_HOME: join(root, 'no-state') };
      const run = await cli(['status', '--url', http.url], { env }).done;
      assert.equal(run.code, 2);
      assert.match(run.stderr, /requires a token/);
      const withToken = await cli(['status', '--url', http.url], { env: { ...env, HYPERWATCH_TOKEN: token } }).done;
      assert.equal(withToken.code, 0, withToken.stderr);
      assert.match(withToken.stdout, /\(no watchers\)/);
    } finally {
      await http.close();
      await serve.stopAll();
      await removeDir(root);
    }
  });
});

describe('hyperwatch status: which token it sends', () => {
  it('sends the token file only to a serve on this machine, never to whatever --url names', async () => {
    const root = await tempDir('hyperwatch-status-token-');
    const saved = { state: process.env.XDG_STATE_HOME, token: process.env.HYPERWATCH_TOKEN };
    try {
      await mkdir(join(root, 'hyperwatch'), { mode: 0o700 });
      await writeFile(join(root, 'hyperwatch', 'serve.token'), 'the-token-serve-made-here-1234\n', { mode: 0o600 });
      process.env.XDG_STATE_HOME = root;
      delete process.env.HYPERWATCH_TOKEN;
      for (const url of ['http://127.0.0.1:7878', 'http://localhost:7878', 'http://[::1]:7878', 'unix:/run/hyperwatch/api.sock']) {
        assert.equal(statusToken(url, undefined, undefined), 'the-token-serve-made-here-1234', url);
      }
      for (const url of ['http://192.0.2.7:7878', 'https://metrics.example.com'])
        assert.equal(statusToken(url, undefined, undefined), undefined, url);
      assert.equal(statusToken('http://192.0.2.7:7878', 'given-on-the-command-line', undefined), 'given-on-the-command-line');
      // --token-file names the file explicitly, for any address; a missing one is a usage error.
      assert.equal(
        statusToken('http://192.0.2.7:7878', undefined, join(root, 'hyperwatch', 'serve.token')),
        'the-token-serve-made-here-1234',
      );
      assert.throws(
        () => statusToken('http://127.0.0.1:7878', undefined, join(root, 'none.token')),
        /--token-file \S+none\.token does not exist/,
      );
      process.env.HYPERWATCH_TOKEN = 'from-the-environment-1234';
      assert.equal(statusToken('http://192.0.2.7:7878', undefined, join(root, 'none.token')), 'from-the-environment-1234');
      assert.equal(statusToken('http://127.0.0.1:7878', 'the-flag-comes-first', undefined), 'the-flag-comes-first');
    } finally {
      for (const [key, value] of [
        ['XDG_STATE_HOME', saved.state],
        ['HYPERWATCH_TOKEN', saved.token],
      ] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
      await removeDir(root);
    }
  });
});
