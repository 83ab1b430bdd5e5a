/**
 * `hyperwatch serve` on a Unix socket (`http.socket`), tried as a local user would: a socket only
 * its user may use, the token still needed for changes (and for reads with protectReads),
 * `hyperwatch status` and curl reaching it, a socket left by a dead service replaced and a live
 * one's refused.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { cli } from '../../helpers/proc.ts';
import { startServe, stopServe } from '../../helpers/serve-process.ts';

/** One request over a Unix socket (fetch cannot). */
function overSocket(
  socketPath: string,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath, method, path, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('hyperwatch serve on a Unix socket (http.socket)', () => {
  let root: string;
  let state: string;
  let run: Awaited<ReturnType<typeof startServe>> | undefined;

  before(async () => {
    root = await tempDir('hyperwatch-socket-');
    state = join(root, 'state');
    await mkdir(join(root, 'inbox', 'new'), { recursive: true });
  });
  after(async () => {
    await stopServe(run?.serve);
    await removeDir(root);
  });

  it('listens on a socket of mode 0600, still needs the token for changes, and status and curl reach it', async () => {
    const socket = join(root, 'api.sock');
    const config = { http: { socket: 'api.sock', protectReads: true, allowedRoots: ['inbox'] }, watchers: [] };
    run = await startServe(root, config, { XDG_STATE_HOME: state });
    assert.equal(run.api, `unix:${socket}`);
    const stats = await stat(socket);
    assert.ok(stats.isSocket());
    assert.equal(stats.mode & 0o777, 0o600);
    assert.equal((await overSocket(socket, 'GET', '/watchers')).status, 401, 'protectReads holds on the socket too');
    const body = { dir: 'inbox/new', table: 't', database: 'inbox/t.hyper' };
    assert.equal((await overSocket(socket, 'POST', '/watchers', undefined, body)).status, 401);
    assert.deepEqual(await readdir(join(root, 'inbox', 'new')), []);
    const status = await cli(['status', '--url', `unix:${socket}`], { env: { XDG_STATE_HOME: state, HYPERWATCH_TOKEN: '' } }).done;
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /\(no watchers\)/);
    const token = (await readFile(join(state, 'hyperwatch', 'serve.token'), 'utf8')).trim();
    const curl = spawnSync('curl', ['-s', '--unix-socket', socket, '-H', `Authorization: Bearer ${token}`, 'http://localhost/metrics'], {
      encoding: 'utf8',
    });
    assert.equal(curl.status, 0, curl.stderr);
    assert.match(curl.stdout, /^hyperwatch_watchers 0$/m);
  });

  it('replaces a socket left by a service that died, and refuses to take over a live one', async () => {
    const socket = join(root, 'api.sock');
    const config = { http: { socket: 'api.sock' }, watchers: [] };
    await writeFile(join(root, 'second.json'), JSON.stringify(config));
    const second = await cli(['serve', '--config', join(root, 'second.json')], { env: { XDG_STATE_HOME: state } }).done;
    assert.equal(second.code, 1);
    assert.match(second.stderr, /api\.sock is in use by a running service/);
    run!.serve.child.kill('SIGKILL');
    await run!.serve.done;
    assert.ok((await stat(socket)).isSocket(), 'the dead service left its socket');
    run = await startServe(root, config, { XDG_STATE_HOME: state });
    assert.equal((await overSocket(socket, 'GET', '/watchers')).status, 200);
  });
});
