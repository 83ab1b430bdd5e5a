/**
 * scripts/test-watchdog.mjs, npm test's only word on a test file that hangs before node's runner
 * ends it: such a file is named while it still runs, with its process tree; one that ends in
 * time is not.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { after, describe, it } from 'node:test';
import { useTempDir } from '../helpers/env.ts';
import { ROOT } from '../helpers/root.ts';

const HANGS = `import { test } from 'node:test';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
test('ends', () => {});
test('hangs on a child', async () => {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  writeFileSync('sleep.pid', String(child.pid));
  await new Promise(() => setInterval(() => {}, 1000));
});
`;

describe('the test runner watchdog', { skip: process.platform !== 'linux' && 'it reads ps as Linux prints it' }, () => {
  const tmp = useTempDir('hyperwatch-watchdog-');
  let sleepPid: number | undefined;
  after(() => {
    if (sleepPid !== undefined) {
      try {
        process.kill(sleepPid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });

  it('names a test file running past its bound, with its processes, and not one that ended in time', () => {
    const dir = tmp.path();
    mkdirSync(join(dir, 'dist-test', 'test'), { recursive: true });
    writeFileSync(join(dir, 'dist-test', 'test', 'hangs.test.js'), HANGS);
    writeFileSync(join(dir, 'dist-test', 'test', 'ends.test.js'), "import { test } from 'node:test';\ntest('ends', () => {});\n");
    const watchdog = pathToFileURL(join(ROOT, 'scripts', 'test-watchdog.mjs')).href;
    writeFileSync(
      join(dir, 'driver.mjs'),
      `import { spawn } from 'node:child_process';
import { watchTestFiles } from ${JSON.stringify(watchdog)};
watchTestFiles(3, 200);
const files = ['dist-test/test/ends.test.js', 'dist-test/test/hangs.test.js'];
const flags = ['--test', '--test-force-exit', '--test-timeout=8000', '--test-reporter=spec'];
const runner = spawn(process.execPath, [...flags, ...files], { stdio: 'inherit' });
runner.on('close', () => process.exit(0));
`,
    );
    // Without this test's own NODE_TEST_CONTEXT, which would make that runner report to this one.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    // Named past 3 s, ended at 8 s: a file that ends at once stays under 3 s even on a loaded machine.
    const run = spawnSync(process.execPath, ['driver.mjs'], { cwd: dir, env, encoding: 'utf8', timeout: 60_000 });
    sleepPid = Number(readFileSync(join(dir, 'sleep.pid'), 'utf8'));
    const out = run.stdout + run.stderr;
    const named = /# test\/hangs\.test\.js has run (\d+) s, longer than any test file should; its processes:\n((?:# {3}.*\n)+)/.exec(out);
    assert.ok(named, `the hanging file is named:\n${out}`);
    const [node, sleep] = named[2]!.split('\n');
    assert.match(node!, /^# {3}\d+ ni -?\d+ \d+s cpu \S+ \S+ .*node .*dist-test\/test\/hangs\.test\.js/);
    assert.match(sleep!, new RegExp(`^#     ${sleepPid} ni -?\\d+ \\d+s cpu \\S+ \\S+ sleep 60$`), 'its child, one level under it');
    assert.doesNotMatch(out, /ends\.test\.js has run/, 'a file that ended in time is not named');
    assert.match(out, /test timed out after 8000ms/, "node's runner still ends the file at its bound");
  });
});
