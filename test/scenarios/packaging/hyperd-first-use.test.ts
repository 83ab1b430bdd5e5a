/**
 * hyperd is there on first use. The built CLI runs from a copy of the package installed into a
 * project of its own whose node_modules lacks the hyperd package (what `npm install hyperwatch`
 * leaves on Node 20 when npm 11 ran no install script), with an empty user cache
 * (HYPERWATCH_CACHE_DIR) and HYPERD_PATH unset: `watch` fetches hyperd, says so on stderr, and
 * ingests. Also: the message where no registry answers, HYPERWATCH_NO_FETCH, HYPERD_PATH winning,
 * a fetch killed half way, and two processes fetching at once; the fetch on Deno and Bun is in
 * hyperd-first-use-runtimes.test.ts.
 *
 * The tarball comes from the tests' kept folder (test/helpers/hyperd-tarballs.ts), fetched there
 * with `npm pack` when missing.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { hyperdBinaryProblem } from '../../../adapters/db/hyper/binary-check.ts';
import { locateHyperd } from '../../../adapters/db/hyper/locate.ts';
import { hyperdPackageResolvesFrom, installWithoutHyperdPackage } from '../../helpers/built-package.ts';
import { staleDist } from '../../helpers/dist.ts';
import { csv, drop, leftovers, waitFor } from '../../helpers/drop.ts';
import { useTempDir } from '../../helpers/env.ts';
import { escapeRegExp, LINUX, start, userEnv } from '../../helpers/first-use.ts';
import { TEST_TARBALLS } from '../../helpers/hyperd-tarballs.ts';

/** A loopback port nothing listens on: a registry that refuses every connection. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function entries(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).sort();
}

describe('hyperd on first use (the built CLI, installed without the hyperd package)', () => {
  const tmp = useTempDir('hyperwatch-first-use-');
  let bin = '';

  it('the installed copy of the package cannot resolve the hyperd package', async () => {
    const stale = staleDist();
    assert.deepEqual(stale, [], `dist/ is older than these sources (run "npm run build"): ${stale.join(', ')}`);
    bin = await installWithoutHyperdPackage(await tmp.dir('project'));
    assert.equal(
      hyperdPackageResolvesFrom(join(tmp.path('project'), 'node_modules', 'hyperwatch', 'dist', 'adapters', 'db', 'hyper', 'locate.js')),
      false,
    );
  });

  async function inbox(name: string): Promise<string> {
    const dir = await tmp.dir(name);
    await drop(
      dir,
      'a.csv',
      csv('id,name', [
        [1, 'ann'],
        [2, 'bob'],
      ]),
    );
    return dir;
  }

  it('watch with an empty cache fetches hyperd (a progress line on stderr), checks it, and ingests', { timeout: 300_000 }, async () => {
    const cache = tmp.path('cache-first-use');
    const dir = await inbox('inbox-first-use');
    const env = userEnv(cache, { HYPERWATCH_TARBALL_DIR: TEST_TARBALLS });
    const database = tmp.path('first-use.hyper');
    const started = Date.now();
    const run = await start(process.execPath, [bin, 'watch', dir, '--table', 't', '--database', database, '--once'], env, tmp.path()).done;
    const seconds = (Date.now() - started) / 1000;
    const output = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    assert.equal(run.code, 0, output);
    const platformDir = join(cache, 'hyperd-0.7.3', 'linux-x64');
    assert.match(
      run.stderr,
      new RegExp(
        `INFO  (fetching hyperd 0\\.7\\.3 for linux-x64 \\(${LINUX.package}@0\\.7\\.3, 83 MB\\) from the npm ` +
          `registry|installing hyperd 0\\.7\\.3 for linux-x64 from the ${LINUX.package}@0\\.7\\.3 tarball kept ` +
          `in ${escapeRegExp(TEST_TARBALLS)}) into ${escapeRegExp(platformDir)}\\n`,
      ),
      output,
    );
    assert.match(
      run.stderr,
      new RegExp(
        `INFO  hyperd 0\\.7\\.3 for linux-x64 is at ${escapeRegExp(join(platformDir, 'hyperd'))} \\(tarball integrity, size, ` +
          `SHA-256 and file format checked; [\\d.]+ s\\)\\n`,
      ),
      output,
    );
    assert.match(run.stdout, /files ingested: 1 {3}rows: 2 /, output);
    assert.deepEqual(await entries(platformDir), ['LICENSE-HYPERD', 'hyperd'], 'the binary and its licence, no work folder left');
    assert.equal(await hyperdBinaryProblem(join(platformDir, 'hyperd'), 'linux-x64'), undefined);
    process.stderr.write(`# first use: watch --once with the fetch took ${seconds.toFixed(1)} s\n`);

    // The next command finds it there: no second fetch.
    const query = await start(
      process.execPath,
      [bin, 'query', '--database', database, '--json', 'SELECT COUNT(*) AS n FROM t'],
      env,
      tmp.path(),
    ).done;
    assert.equal(query.code, 0, query.stderr);
    assert.deepEqual(
      (JSON.parse(query.stdout) as { n: string | number }[]).map((r) => Number(r.n)),
      [2],
    );
    assert.doesNotMatch(query.stderr, /fetching|installing/);
  });

  it('with no registry to fetch from, watch says what to do (exit 1), and leaves the files and the cache as they were', {
    timeout: 120_000,
  }, async () => {
    const cache = tmp.path('cache-offline');
    const dir = await inbox('inbox-offline');
    // No retries: npm's default (2, from 10 s apart) only makes the same answer come later.
    const env = userEnv(cache, { npm_config_registry: `http://127.0.0.1:${await closedPort()}/`, npm_config_fetch_retries: '0' });
    const run = await start(
      process.execPath,
      [bin, 'watch', dir, '--table', 't', '--database', tmp.path('offline.hyper'), '--once'],
      env,
      tmp.path(),
    ).done;
    const output = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    assert.equal(run.code, 1, output);
    assert.match(run.stderr, /INFO {2}fetching hyperd 0\.7\.3 for linux-x64 .* from the npm registry into /, output);
    assert.match(
      run.stderr,
      new RegExp(
        `hyperwatch: could not fetch hyperd for linux-x64 from the npm registry \\(npm pack ${LINUX.package}@0\\.7\\.3: ` +
          `ECONNREFUSED: .*connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+\\)\\. If this machine has no registry to fetch from`,
      ),
      output,
    );
    assert.match(
      run.stderr,
      new RegExp(
        /run "npx hyperwatch install-hyperd --platform linux-x64 --dir <folder>", copy <folder>\/hyperd here /.source +
          /and set HYPERD_PATH to it; or set HYPERD_PATH to the hyperd of a Tableau Hyper API install/.source,
      ),
      output,
    );
    assert.deepEqual(await leftovers(dir), ['a.csv', 'a.csv.ready'], 'the dropped file waits for the next start');
    assert.deepEqual(await entries(join(dir, 'failed')), [], 'and did not fail');
    assert.deepEqual(await entries(join(cache, 'hyperd-0.7.3', 'linux-x64')), [], 'no binary, no work folder');
  });

  it('HYPERWATCH_NO_FETCH=1: no fetch; hyperd not found, and why (exit 2)', { timeout: 60_000 }, async () => {
    const cache = tmp.path('cache-no-fetch');
    const run = await start(
      process.execPath,
      [bin, 'watch', await inbox('inbox-no-fetch'), '--table', 't', '--database', tmp.path('no-fetch.hyper'), '--once'],
      userEnv(cache, { HYPERWATCH_NO_FETCH: '1' }),
      tmp.path(),
    ).done;
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      new RegExp(
        /hyperwatch: hyperd not found\. Run "npx hyperwatch install-hyperd" .* /.source +
          /\(hyperwatch fetches it on first use, but HYPERWATCH_NO_FETCH=1 is set\.\)/.source,
      ),
    );
    assert.doesNotMatch(run.stderr, /fetching/);
    assert.equal(existsSync(join(cache, 'hyperd-0.7.3')), false);
  });

  it('HYPERD_PATH wins: a wrong one is an error, not fetched around; a right one is used with no registry at all', {
    timeout: 120_000,
  }, async () => {
    const cache = tmp.path('cache-hyperd-path');
    const offline = { npm_config_registry: `http://127.0.0.1:${await closedPort()}/`, npm_config_fetch_retries: '0' };
    const wrong = await start(
      process.execPath,
      [bin, 'watch', await inbox('inbox-wrong-path'), '--table', 't', '--database', tmp.path('wrong.hyper'), '--once'],
      userEnv(cache, { ...offline, HYPERD_PATH: tmp.path('no-such-hyperd') }),
      tmp.path(),
    ).done;
    assert.equal(wrong.code, 2, wrong.stderr);
    assert.match(
      wrong.stderr,
      new RegExp(`hyperwatch: HYPERD_PATH=${escapeRegExp(tmp.path('no-such-hyperd'))} is not an executable file\\.`),
    );
    assert.doesNotMatch(wrong.stderr, /fetching/);

    const suites = locateHyperd();
    assert.ok(suites.ok, 'the hyperd the suite runs on');
    const right = await start(
      process.execPath,
      [bin, 'watch', await inbox('inbox-right-path'), '--table', 't', '--database', tmp.path('right.hyper'), '--once'],
      userEnv(cache, { ...offline, HYPERD_PATH: suites.path }),
      tmp.path(),
    ).done;
    assert.equal(right.code, 0, right.stderr);
    assert.match(right.stdout, /files ingested: 1 {3}rows: 2 /);
    assert.doesNotMatch(right.stderr, /fetching|installing/);
    assert.equal(existsSync(join(cache, 'hyperd-0.7.3')), false, 'nothing fetched');
  });

  it('a fetch killed while it unpacks leaves no binary where hyperd is looked for; the next one cleans up and installs', {
    timeout: 300_000,
  }, async () => {
    const cache = tmp.path('cache-killed');
    const platformDir = join(cache, 'hyperd-0.7.3', 'linux-x64');
    const env = userEnv(cache, { HYPERWATCH_TARBALL_DIR: TEST_TARBALLS });
    const first = start(process.execPath, [bin, 'install-hyperd'], env, tmp.path());
    let partial = '';
    await waitFor(
      async () => {
        for (const name of await entries(platformDir)) {
          const candidate = join(platformDir, name, LINUX.entry);
          const size = name.startsWith('.fetch-')
            ? await stat(candidate).then(
                (s) => s.size,
                () => 0,
              )
            : 0;
          if (size > 0 && size < LINUX.bytes) partial = `${candidate} (${size} bytes)`;
        }
        return partial !== '';
      },
      `a partly unpacked hyperd\n${first.output()}`,
      120_000,
    );
    process.kill(-first.pid, 'SIGKILL');
    const killed = await first.done;
    assert.equal(killed.signal, 'SIGKILL', `killed while unpacking ${partial}`);
    const left = await entries(platformDir);
    assert.equal(left.includes('hyperd'), false, `no binary in place after the kill: ${left.join(', ')}`);
    assert.ok(
      left.length > 0 && left.every((n) => n.startsWith(`.fetch-${first.pid}-`)),
      `only the killed fetch's work folders: ${left.join(', ')}`,
    );
    assert.equal(existsSync(join(cache, 'hyperd-0.7.3', 'hyperd')), false);

    const second = await start(process.execPath, [bin, 'install-hyperd'], env, tmp.path()).done;
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, `${join(platformDir, 'hyperd')}\n`);
    assert.deepEqual(await entries(platformDir), ['LICENSE-HYPERD', 'hyperd'], 'the dead fetch folder removed');
    assert.equal(await hyperdBinaryProblem(join(platformDir, 'hyperd'), 'linux-x64'), undefined);
  });

  it('two processes fetching into one cache at once both end with the checked binary', { timeout: 300_000 }, async () => {
    const cache = tmp.path('cache-concurrent');
    const platformDir = join(cache, 'hyperd-0.7.3', 'linux-x64');
    const env = userEnv(cache, { HYPERWATCH_TARBALL_DIR: TEST_TARBALLS });
    const runs = await Promise.all([1, 2].map(() => start(process.execPath, [bin, 'install-hyperd'], env, tmp.path()).done));
    for (const run of runs) {
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, `${join(platformDir, 'hyperd')}\n`);
      assert.match(run.stderr, /(fetching|installing) hyperd 0\.7\.3 for linux-x64 .* into /);
    }
    assert.deepEqual(await entries(platformDir), ['LICENSE-HYPERD', 'hyperd']);
    assert.equal(await hyperdBinaryProblem(join(platformDir, 'hyperd'), 'linux-x64'), undefined);
  });

  it("the API's default adapter (startWatching without db) fetches on first use too, saying so on stderr", {
    timeout: 300_000,
  }, async () => {
    const project = tmp.path('project');
    const cache = tmp.path('cache-api');
    await drop(
      await tmp.dir('project/inbox'),
      'a.csv',
      csv('id,name', [
        [1, 'ann'],
        [2, 'bob'],
      ]),
    );
    await writeFile(
      join(project, 'watch.mjs'),
      [
        `import { startWatching, stopWatching } from 'hyperwatch';`,
        `const sweep = await startWatching('./inbox', 'events', { database: './events.hyper' });`,
        `const { stats } = await stopWatching('./inbox');`,
        `console.log(JSON.stringify({ swept: sweep.filesIngested, rows: stats.rowsIngested }));`,
      ].join('\n'),
    );
    const run = await start(process.execPath, ['watch.mjs'], userEnv(cache, { HYPERWATCH_TARBALL_DIR: TEST_TARBALLS }), project).done;
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { swept: 1, rows: 2 });
    const platformDir = join(cache, 'hyperd-0.7.3', 'linux-x64');
    assert.match(
      run.stderr,
      new RegExp(
        `^hyperwatch: (fetching|installing) hyperd 0\\.7\\.3 for linux-x64 .* into ${escapeRegExp(platformDir)}\\nhyperwatch: ` +
          `hyperd 0\\.7\\.3 for linux-x64 is at ${escapeRegExp(join(platformDir, 'hyperd'))} `,
      ),
      run.stderr,
    );
  });

  it("postinstall (the installed package's scripts/install-hyperd.mjs) installs hyperd, and never fails the install", {
    timeout: 300_000,
  }, async () => {
    const script = join(tmp.path('project'), 'node_modules', 'hyperwatch', 'scripts', 'install-hyperd.mjs');
    const offline = await start(
      process.execPath,
      [script],
      userEnv(tmp.path('cache-postinstall-offline'), {
        npm_config_registry: `http://127.0.0.1:${await closedPort()}/`,
        npm_config_fetch_retries: '0',
      }),
      tmp.path(),
    ).done;
    assert.equal(offline.code, 0, offline.stderr);
    assert.match(
      offline.stderr,
      new RegExp(
        /hyperwatch: could not fetch hyperd for linux-x64 from the npm registry \(npm pack .*ECONNREFUSED.* /.source +
          /\(the install goes on; hyperwatch tries again when it first needs hyperd\)\n$/.source,
      ),
    );

    const cache = tmp.path('cache-postinstall');
    const run = await start(process.execPath, [script], userEnv(cache, { HYPERWATCH_TARBALL_DIR: TEST_TARBALLS }), tmp.path()).done;
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /hyperwatch: hyperd 0\.7\.3 for linux-x64 is at .* checked; [\d.]+ s\)\n$/);
    assert.equal(await hyperdBinaryProblem(join(cache, 'hyperd-0.7.3', 'linux-x64', 'hyperd'), 'linux-x64'), undefined);
    const again = await start(process.execPath, [script], userEnv(cache), tmp.path()).done;
    assert.deepEqual([again.code, again.stderr], [0, ''], 'found: nothing to say');
  });
});
