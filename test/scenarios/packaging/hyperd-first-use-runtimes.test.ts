/**
 * hyperd on first use on Deno and Bun: `fetchHyperd` run from each runtime fetches the build with
 * `npm pack` (that npm is started right from those runtimes is what this tests, so it fetches
 * every time, never from the tests' kept tarballs), and the hyperd it put in place starts. The
 * same on Node, through the installed CLI, is in hyperd-first-use.test.ts.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { hyperdBinaryProblem } from '../../../adapters/db/hyper/binary-check.ts';
import { findRuntime } from '../../../scripts/runtimes.mjs';
import { useTempDir } from '../../helpers/env.ts';
import { escapeRegExp, LINUX, start, userEnv } from '../../helpers/first-use.ts';
import { ROOT } from '../../helpers/proc.ts';

describe('hyperd on first use, on Deno and Bun', () => {
  const tmp = useTempDir('hyperwatch-first-use-');

  for (const runtime of ['deno', 'bun'] as const) {
    it(`${runtime}: fetchHyperd fetches with npm pack and the hyperd it put in place starts`, { timeout: 300_000 }, async () => {
      const found = findRuntime(runtime);
      assert.ok(found.path !== undefined, `${runtime}: ${found.error}`);
      const into = tmp.path(`${runtime}-hyperd`);
      const program = tmp.path(`${runtime}-fetch.ts`);
      const module = (path: string) => JSON.stringify(pathToFileURL(join(ROOT, path)).href);
      await writeFile(
        program,
        [
          `import { fetchHyperd } from ${module('adapters/db/hyper/fetch.ts')};`,
          `import { Hyperd } from ${module('adapters/db/hyper/hyperd.ts')};`,
          `const quiet = { debug() {}, info() {}, warn() {}, error() {} };`,
          `const { path } = await fetchHyperd({ platform: 'linux-x64', dir: ${JSON.stringify(into)}, report: (line) => ` +
            `console.error(line) });`,
          `const hyperd = new Hyperd({ binary: path, logger: quiet });`,
          `const { port } = await hyperd.endpoint();`,
          `console.log(JSON.stringify({ path, port }));`,
          `await hyperd.stop();`,
        ].join('\n'),
      );
      const args = runtime === 'deno' ? ['run', '-A', '--no-config', program] : [program];
      const started = Date.now();
      const run = await start(found.path, args, userEnv(tmp.path(`${runtime}-cache`)), tmp.path()).done;
      const seconds = (Date.now() - started) / 1000;
      assert.equal(run.code, 0, `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`);
      const result = JSON.parse(run.stdout) as { path: string; port: number };
      assert.equal(result.path, join(into, 'hyperd'));
      assert.ok(result.port > 0);
      assert.match(
        run.stderr,
        new RegExp(
          `fetching hyperd 0\\.7\\.3 for linux-x64 \\(${LINUX.package}@0\\.7\\.3, 83 MB\\) from the npm registry ` +
            `into ${escapeRegExp(into)}`,
        ),
      );
      assert.equal(await hyperdBinaryProblem(result.path, 'linux-x64'), undefined);
      process.stderr.write(`# ${runtime}: npm pack, unpack, checks and a hyperd start: ${seconds.toFixed(1)} s\n`);
    });
  }
});
