/**
 * Who may change a running `hyperwatch serve`, tried as a local user would: a real serve process
 * with a real embedded hyperd, driven over real HTTP. Without the token nothing changes; with it,
 * watchers can only be added under the roots the config allows, and nothing is created when a
 * request is refused. The token serve makes lives in a file only its user can read, and
 * `hyperwatch status` and the README's curl examples find it there. The same on a Unix socket is in
 * serve-socket.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { dropFile } from '../../../src/producer/drop.ts';
import { cliCommand } from '../../helpers/dist.ts';
import { csv, waitFor } from '../../helpers/drop.ts';
import { removeDir, tempDir } from '../../helpers/env.ts';
import { cli, ROOT } from '../../helpers/proc.ts';
import { startServe, stopServe } from '../../helpers/serve-process.ts';

/**
 * Everything under `dir`, recursively: what a refused request must leave as it was. The running
 * watcher's own directory and database are left out: hyperd may write them at any time.
 */
async function tree(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true }))
    .map(String)
    .filter((p) => !/(^|\/)events(\/|\.hyper)/.test(p))
    .sort();
}

describe('hyperwatch serve: the token and the allowed roots', () => {
  let root: string;
  let inbox: string;
  let outside: string;
  let state: string;
  let run: Awaited<ReturnType<typeof startServe>>;
  let token: string;

  before(async () => {
    root = await tempDir('hyperwatch-security-');
    inbox = join(root, 'inbox');
    outside = join(root, 'outside');
    state = join(root, 'state');
    await mkdir(join(inbox, 'events'), { recursive: true });
    await Promise.all([mkdir(join(inbox, 'new')), mkdir(outside)]);
    // A link inside the allowed root to a directory outside it, and one to a file not yet there.
    await symlink(outside, join(inbox, 'link'));
    await symlink(join(outside, 'target.hyper'), join(inbox, 'dangling.hyper'));
    // The config's watcher is in inbox/, so inbox/ is the one root allowed by default.
    run = await startServe(
      root,
      { http: { host: '127.0.0.1', port: 0 }, watchers: [{ dir: 'inbox/events', table: 'events', database: 'inbox/events.hyper' }] },
      { XDG_STATE_HOME: state },
    );
    token = (await readFile(join(state, 'hyperwatch', 'serve.token'), 'utf8')).trim();
  });

  after(async () => {
    await stopServe(run?.serve);
    await removeDir(root);
  });

  const request = (method: string, path: string, options: { token?: string; body?: unknown } = {}) =>
    fetch(`${run.api}${path}`, {
      method,
      headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
  const watched = async () =>
    ((await (await request('GET', '/watchers')).json()) as { watchers: { directory: string }[] }).watchers.map((w) => w.directory).sort();

  it('makes a random token at first start, in a file of mode 0600, and logs its path, never the token', async () => {
    const file = join(state, 'hyperwatch', 'serve.token');
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    assert.equal((await stat(join(state, 'hyperwatch'))).mode & 0o777, 0o700);
    assert.match(token, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
    const made = run.log().find((l) => l.message === 'bearer token made');
    assert.equal(made?.tokenFile, file);
    assert.ok(!run.stderr().includes(token), 'the token is not in the log');
  });

  it('answers POST and DELETE without the token with 401 and changes nothing; reads stay open on loopback', async () => {
    const before = await tree(inbox);
    const post = await request('POST', '/watchers', { body: { dir: 'inbox/new', table: 'new_events', database: 'inbox/new.hyper' } });
    assert.equal(post.status, 401);
    assert.equal(post.headers.get('www-authenticate'), 'Bearer');
    assert.match(((await post.json()) as { error: string }).error, /changing needs the bearer token/);
    const wrong = await request('POST', '/watchers', {
      token: 'x'.repeat(43),
      body: { dir: 'inbox/new', table: 'new_events', database: 'inbox/new.hyper' },
    });
    assert.equal(wrong.status, 401);
    const del = await request('DELETE', `/watchers/${encodeURIComponent(join(inbox, 'events'))}`);
    assert.equal(del.status, 401);
    assert.equal((await request('PUT', '/watchers')).status, 401, 'any changing method, known or not');
    assert.deepEqual(await tree(inbox), before, 'no directory or database created');
    assert.deepEqual(await watched(), [join(inbox, 'events')]);
    const metrics = await request('GET', '/metrics');
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /^hyperwatch_watchers 1$/m);
  });

  it('refuses with 403 a directory or database outside the allowed roots, directly, through a symlink or via .., and creates \
nothing', async () => {
    const refusals: [string, Record<string, unknown>, RegExp][] = [
      ['dir outside', { dir: outside, database: 'inbox/a.hyper' }, /^dir \S+\/outside is outside the allowed roots \(allowed: \S+\/inbox;/],
      [
        'dir through a symlink',
        { dir: 'inbox/link', database: 'inbox/b.hyper' },
        /^dir \S+\/inbox\/link \(really \S+\/outside\) is outside/,
      ],
      ['dir via ..', { dir: 'inbox/../outside', database: 'inbox/c.hyper' }, /^dir \S+\/outside is outside/],
      ['database outside', { dir: 'inbox/new', database: join(outside, 'd.hyper') }, /^database \S+\/outside\/d\.hyper is outside/],
      [
        'database through a symlinked folder',
        { dir: 'inbox/new', database: 'inbox/link/e.hyper' },
        /^database \S+\/inbox\/link\/e\.hyper \(really \S+\/outside\/e\.hyper\) is outside/,
      ],
      ['database via ..', { dir: 'inbox/new', database: 'inbox/../f.hyper' }, /^database \S+\/f\.hyper is outside/],
      [
        'database as a dangling symlink',
        { dir: 'inbox/new', database: 'inbox/dangling.hyper' },
        /dangling\.hyper is a symbolic link to a path that does not exist/,
      ],
      [
        "default database (in serve's working directory)",
        { dir: 'inbox/new' },
        new RegExp(`^database ${join(ROOT, 'hyperwatch.hyper')} is outside`),
      ],
      [
        'PostgreSQL server the config does not use',
        { dir: 'inbox/new', adapter: 'postgres', url: 'postgres://someone@127.0.0.1:1/elsewhere' },
        /^url "postgres:\/\/someone@127\.0\.0\.1:1\/elsewhere" is not a server the config uses or lists/,
      ],
      [
        'hyperd endpoint the config does not use',
        { dir: 'inbox/new', endpoint: '127.0.0.1:1' },
        /^endpoint "127\.0\.0\.1:1" is not a server/,
      ],
    ];
    const before = await tree(root);
    const defaultDatabaseWas = existsSync(join(ROOT, 'hyperwatch.hyper'));
    for (const [what, body, reason] of refusals) {
      const res = await request('POST', '/watchers', { token, body: { table: 'stolen', ...body } });
      assert.equal(res.status, 403, what);
      assert.match(((await res.json()) as { error: string }).error, reason, what);
    }
    assert.deepEqual(await tree(root), before, 'nothing created anywhere');
    assert.equal(existsSync(join(ROOT, 'hyperwatch.hyper')), defaultDatabaseWas, 'no default database created');
    assert.deepEqual(await watched(), [join(inbox, 'events')]);
    // The same holds for a directory that does not exist: refused, not reported missing.
    const missing = await request('POST', '/watchers', {
      token,
      body: { dir: join(outside, 'nope'), table: 't', database: 'inbox/g.hyper' },
    });
    assert.equal(missing.status, 403);
  });

  it('with the token, adds a watcher under an allowed root, and DELETE needs the token too', async () => {
    const added = await request('POST', '/watchers', {
      token,
      body: { dir: 'inbox/new', table: 'new_events', database: 'inbox/new.hyper', checkpointDelayMs: 50 },
    });
    assert.equal(added.status, 201, await added.clone().text());
    await dropFile(join(inbox, 'new'), 'x.csv', csv('id', [[1], [2]]));
    await waitFor(
      async () => {
        const res = (await (await request('GET', '/watchers')).json()) as {
          watchers: { directory: string; stats: { filesIngested: number } }[];
        };
        return res.watchers.find((w) => w.directory === join(inbox, 'new'))?.stats.filesIngested === 1;
      },
      'the added watcher to ingest',
      30000,
    );
    const dir = encodeURIComponent(join(inbox, 'new'));
    assert.equal((await request('DELETE', `/watchers/${dir}`)).status, 401);
    assert.deepEqual(await watched(), [join(inbox, 'events'), join(inbox, 'new')]);
    const removed = await request('DELETE', `/watchers/${dir}`, { token });
    assert.equal(removed.status, 200);
    assert.deepEqual(await watched(), [join(inbox, 'events')]);
  });

  it("runs the README's curl examples as written, with the token from the token file", async () => {
    const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
    const block = /<!-- example: serve-curl -->\s*```sh\n([\s\S]*?)^```$/m.exec(readme);
    assert.ok(block, 'README.md: the serve-curl example');
    const address = new URL(run.api).host;
    const script = block[1]!
      .replaceAll('localhost:7878', address)
      .replace(/^hyperwatch status/m, [process.execPath, ...cliCommand()].map((a) => `"${a}"`).join(' ') + ` status --url ${run.api}`);
    const shell = spawn('sh', ['-eu', '-c', script], { cwd: ROOT, env: { ...process.env, XDG_STATE_HOME: state } });
    let out = '';
    let err = '';
    shell.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    shell.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const code = await new Promise<number | null>((resolve) => shell.on('close', resolve));
    assert.equal(code, 0, err);
    assert.match(out, new RegExp(`"directory": "${join(inbox, 'new')}"`), 'POST added the watcher');
    assert.match(out, /"stopped": \{/, 'DELETE stopped it');
    assert.match(out, /^hyperwatch_watchers 1$/m, 'GET /metrics');
    assert.match(out, /inbox\/events → events/, 'hyperwatch status');
  });
});

describe('hyperwatch serve: reads closed by http.protectReads', () => {
  let root: string;
  let state: string;
  let run: Awaited<ReturnType<typeof startServe>> | undefined;

  before(async () => {
    root = await tempDir('hyperwatch-protect-');
    state = join(root, 'state');
  });
  after(async () => {
    await stopServe(run?.serve);
    await removeDir(root);
  });

  it('needs the token for GET too, and hyperwatch status finds the token file without token flags', async () => {
    run = await startServe(root, { http: { host: '127.0.0.1', port: 0, protectReads: true }, watchers: [] }, { XDG_STATE_HOME: state });
    assert.equal((await fetch(`${run.api}/watchers`)).status, 401);
    assert.equal((await fetch(`${run.api}/metrics`)).status, 401);
    const status = await cli(['status', '--url', run.api], { env: { XDG_STATE_HOME: state, HYPERWATCH_TOKEN: '' } }).done;
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /\(no watchers\)/);
    // Another user (here: another state folder) has no token file to read.
    const stranger = await cli(['status', '--url', run.api], { env: { XDG_STATE_HOME: join(root, 'elsewhere'), HYPERWATCH_TOKEN: '' } })
      .done;
    assert.equal(stranger.code, 2);
    assert.match(stranger.stderr, /requires a token: pass --token or --token-file/);
    const token = (await readFile(join(state, 'hyperwatch', 'serve.token'), 'utf8')).trim();
    const flagged = await cli(['status', '--url', run.api, '--token', token], { env: { XDG_STATE_HOME: join(root, 'elsewhere') } }).done;
    assert.equal(flagged.code, 0, flagged.stderr);
  });

  it('keeps its token across restarts', async () => {
    const token = (await readFile(join(state, 'hyperwatch', 'serve.token'), 'utf8')).trim();
    await stopServe(run?.serve);
    run = await startServe(root, { http: { host: '127.0.0.1', port: 0, protectReads: true }, watchers: [] }, { XDG_STATE_HOME: state });
    assert.ok(run.log().some((l) => l.message === 'bearer token read'));
    assert.equal((await fetch(`${run.api}/watchers`, { headers: { authorization: `Bearer ${token}` } })).status, 200);
  });

  it('refuses to start on a token file others may read, naming the file and the fix', async () => {
    const loose = join(root, 'loose', 'hyperwatch', 'serve.token');
    await mkdir(join(root, 'loose', 'hyperwatch'), { recursive: true });
    await writeFile(loose, 'a-token-others-have-read-already\n');
    await chmod(loose, 0o644);
    await writeFile(join(root, 'loose.json'), JSON.stringify({ http: { port: 0 }, watchers: [] }));
    const refused = await cli(['serve', '--config', join(root, 'loose.json')], { env: { XDG_STATE_HOME: join(root, 'loose') } }).done;
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /the token file \S+serve\.token may be read by other users \(mode 644\)\. Fix: remove it/);
  });
});
