/**
 * How scripts/test.mjs runs test files: each compiled file in a node process of its own, n at a
 * time in the order given, its output printed whole when it ends, bounded in time, and failed when
 * its report does not say that its tests ran; and what of a failed file's output the summary shows.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');

/** Where the compiled tests go (test/tsconfig.build.json's outDir); emptied before each build. */
export const BUILT = 'dist-test';

/** A test file's compiled copy, which node runs (`test/x.test.ts` -> `dist-test/test/x.test.js`). */
const built = (file) => `${BUILT}/${file.replace(/\.ts$/, '.js')}`;

/**
 * How long one test file may run before it is ended as failed (run's `timeoutS`). The longest take
 * about 3 minutes; without a bound, one that hangs holds the whole run until the CI's own limit,
 * and its log names nothing (seen once).
 */
const FILE_TIMEOUT_S = 15 * 60;

/**
 * node's arguments to run one compiled test file: by itself, its reporter in its own process, not
 * as a child of `node --test`. Under `node --test --test-force-exit`, the child's last results can
 * be lost on their way to the runner, which then counts fewer tests and still passes (node issue
 * 64833): seen here as a file reporting 46 of its 48 tests, and in 1 of 12 runs of a file of 151
 * tests. Run by itself, the file prints every result (12 of 12), and a failure still exits 1.
 * `--test-force-exit` still ends it once its tests are done, whatever handles are left.
 */
function nodeTest(file) {
  return ['--enable-source-maps', '--test-force-exit', '--test-reporter=spec', built(file)];
}

/**
 * Runs a command, keeping its output and printing it whole when it ends (several run at once, and
 * their lines must not interleave); the output is also kept for the failures' summary at the end.
 * `timeoutS`: past it the command is ended (SIGTERM, then SIGKILL) and counts as failed, saying so.
 */
export function run(label, command, commandArgs, timeoutS = undefined) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, commandArgs, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let timedOut = false;
    const keep = (d) => {
      output += d;
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer =
      timeoutS === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
          }, timeoutS * 1000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (timedOut)
        output += `\n✖ failing tests:\n✖ ${label} ran past ${timeoutS} s and was ended (FILE_TIMEOUT_S, scripts/test-files.mjs)\n`;
      process.stdout.write(`\n--- ${label} ---\n${output}`);
      const seconds = (performance.now() - started) / 1000;
      resolve({ label, ok: code === 0 && !timedOut, seconds, code: code ?? signal, output });
    });
  });
}

/** The spec reporter's closing counts (`ℹ tests 12`, `ℹ pass 12`, ...) of one file's output. */
function counts(output) {
  const found = {};
  for (const m of output.replace(/\x1b\[[0-9;]*m/g, '').matchAll(/^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)$/gm)) {
    found[m[1]] = (found[m[1]] ?? 0) + Number(m[2]);
  }
  return found;
}

/**
 * Runs test files `n` at a time, in the order given, each in a node process of its own, printing
 * each file's output whole when it ends. Not all of them to one `node --test --test-concurrency=n`:
 * node's runner sorts the files it is given by name, whatever their order, so LONG_FIRST and the
 * order of PAIRED did nothing, and the longest files (test/src/watcher/, last by name) started last
 * and ran the part's last minute on one core.
 */
export async function runFiles(label, files, n) {
  const started = performance.now();
  const queue = [...files];
  const outcomes = [];
  const lane = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const outcome = await run(file, process.execPath, nodeTest(file), FILE_TIMEOUT_S);
      outcome.counts = counts(outcome.output);
      // Every test file has tests, and the reporter ends by counting them: a file that says nothing
      // of them did not run them, or its report was cut short. Either way it fails.
      if (outcome.ok && !(outcome.counts.tests > 0)) {
        outcome.ok = false;
        outcome.output += `\n✖ failing tests:\n✖ ${file} exited 0 without reporting any test ran (its report's counts are missing)\n`;
      }
      outcomes.push(outcome);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, files.length) }, lane));
  const total = {};
  for (const o of outcomes) for (const [k, v] of Object.entries(o.counts)) total[k] = (total[k] ?? 0) + v;
  const failed = outcomes.filter((o) => !o.ok);
  const tally = ['tests', 'pass', 'fail', 'cancelled', 'skipped', 'todo'].map((k) => `${k} ${total[k] ?? 0}`).join(', ');
  return {
    label: `${label} (${tally})`,
    ok: failed.length === 0 && outcomes.length === files.length,
    seconds: (performance.now() - started) / 1000,
    code: failed.length === 0 ? 0 : `${failed.length} of ${files.length} files`,
    output: '',
    failed,
  };
}

/**
 * What the spec reporter says of the failed tests (it lists them last), or the output's end: the
 * last lines of a long run are what a CI log shows, so a failure's message must be among them.
 */
export function failures(output) {
  const text = output.replace(/\x1b\[[0-9;]*m/g, '');
  const at = text.lastIndexOf('failing tests:');
  const part = at >= 0 ? text.slice(at) : text.slice(-4000);
  return part.length > 12000 ? `${part.slice(0, 12000)}\n[... ${part.length - 12000} more characters]` : part;
}
