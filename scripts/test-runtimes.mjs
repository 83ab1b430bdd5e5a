#!/usr/bin/env node
/**
 * Runs the protocol tests under Deno and Bun, with the runtimes from the npm packages `deno` and
 * `bun` (devDependencies), found without relying on their install scripts:
 *
 *   node scripts/test-runtimes.mjs                  # deno and bun, the default test files
 *   node scripts/test-runtimes.mjs --runtimes bun   # one runtime (also: node, for a baseline)
 *   node scripts/test-runtimes.mjs test/x.test.ts   # other test files
 *
 * The binaries are found by scripts/runtimes.mjs (DENO_BIN / BUN_BIN, else the platform packages
 * that npm installs next to `deno` and `bun`, install scripts or not).
 * node_modules is the project's, or the one given with --modules <dir> or HYPERWATCH_RUNTIMES_MODULES.
 *
 * Prints each runtime's result and time, names the runtimes that failed, and exits 1 if any did
 * (a runtime that cannot be found counts as failed). On Linux it also fails a runtime whose test
 * run left an embedded hyperd running.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import process from 'node:process';
import { findRuntime, ROOT, RUNTIMES, versionOf } from './runtimes.mjs';

const DEFAULT_FILES = [
  'test/src/watcher/watcher.test.ts',
  'test/src/testing/contract.test.ts',
  'test/adapters/db/hyper/adapter-hyper.test.ts',
  'test/adapters/fs/fs-adapters.test.ts',
  'test/src/producer/drop.test.ts',
  'test/adapters/db/hyper/tableau-role.test.ts',
  // The load modes: their staging tables and statements go through the same client on every runtime.
  'test/src/watcher/mode-hyper.test.ts',
  'test/src/watcher/mode-postgres.test.ts',
];
const TIMEOUT_MS = 15 * 60 * 1000;

/**
 * Test files that cannot run on a runtime, with the reason, printed on every run (never skipped
 * silently). Empty: every default file runs on Deno and Bun. Individual cases that cannot run on
 * a runtime are skipped inside the test file with the reason (e.g. the Deno.watchFs adapter on Bun).
 */
const NOT_RUNNABLE = {
  deno: {},
  bun: {},
  node: {},
};

// ------------------------------------------------------------------------------------------------
// Arguments

const args = process.argv.slice(2);
function option(name) {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const value = args[i + 1];
  args.splice(i, 2);
  return value;
}
const runtimes = (option('runtimes') ?? 'deno,bun').split(',').filter(Boolean);
const modulesDir = resolve(option('modules') ?? process.env.HYPERWATCH_RUNTIMES_MODULES ?? join(ROOT, 'node_modules'));
const files = args.length > 0 ? args : DEFAULT_FILES;
// A file that is not there (moved, renamed) would fail deep in a runtime's own runner, or be
// taken for a name filter by bun: it is named here instead, before any runtime starts.
const missing = files.filter((f) => !existsSync(resolve(ROOT, f)));
if (missing.length > 0) {
  console.error(`no such test file: ${missing.join(', ')}`);
  process.exit(2);
}
for (const r of runtimes) {
  if (!RUNTIMES.includes(r)) {
    console.error(`unknown runtime ${JSON.stringify(r)}: expected deno, bun or node`);
    process.exit(2);
  }
}

// ------------------------------------------------------------------------------------------------
// Leftover hyperd processes (Linux): every process our test run starts carries MARKER in its env.

const MARKER = `HYPERWATCH_RUNTIME_TEST_RUN`;

function markedProcesses(runId) {
  if (process.platform !== 'linux') return [];
  const found = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
      if (!environ.split('\0').includes(`${MARKER}=${runId}`)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z') continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0')[0];
      found.push({ pid: Number(entry), cmd });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

// ------------------------------------------------------------------------------------------------
// Running

function commandFor(runtime, binary, runnable) {
  switch (runtime) {
    case 'deno':
      // --no-check: type-checking is tsc's job (npm run typecheck); this run is about behaviour.
      return [binary, ['test', '-A', '--no-check', ...runnable]];
    case 'bun':
      // bun's runner gives each test 5 s unless told otherwise; node:test has no such limit. A
      // relative path needs ./ or bun takes it for a name filter.
      return [binary, ['test', '--timeout', '120000', ...runnable.map((f) => (isAbsolute(f) ? f : `./${f}`))]];
    default:
      return [binary, ['--import', 'tsx', '--test', '--test-reporter=spec', ...runnable]];
  }
}

function run(runtime) {
  return new Promise((done) => {
    const found = findRuntime(runtime, modulesDir);
    if (found.error) return done({ runtime, ok: false, reason: found.error });
    const version = versionOf(found.path);
    if (!version)
      return done({ runtime, ok: false, reason: `${found.path} --version failed (a placeholder left by a skipped install script?)` });
    const excluded = NOT_RUNNABLE[runtime] ?? {};
    const runnable = files.filter((f) => !(f in excluded));
    const notRun = files.filter((f) => f in excluded).map((f) => `${f}: ${excluded[f]}`);
    console.log(`\n=== ${runtime}: ${version} (${found.source})`);
    for (const line of notRun) console.log(`=== ${runtime}: NOT RUN ${line}`);
    if (runnable.length === 0) return done({ runtime, ok: true, version, seconds: 0, notRun });

    const runId = `${process.pid}-${runtime}-${Date.now()}`;
    const [command, commandArgs] = commandFor(runtime, found.path, runnable);
    console.log(`=== ${[command, ...commandArgs].join(' ')}\n`);
    const started = performance.now();
    const child = spawn(command, commandArgs, {
      cwd: ROOT,
      stdio: 'inherit',
      detached: process.platform !== 'win32', // its own process group, so a timeout can end all of it
      env: { ...process.env, [MARKER]: runId, DENO_NO_UPDATE_CHECK: '1', DENO_NO_PROMPT: '1' },
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, TIMEOUT_MS);
    child.on('error', (error) => {
      clearTimeout(timer);
      done({ runtime, ok: false, version, reason: `could not start: ${error.message}` });
    });
    child.on('close', async (code, signal) => {
      clearTimeout(timer);
      const seconds = (performance.now() - started) / 1000;
      // Give an embedded hyperd a moment to notice its parent is gone (callback connection).
      let leftovers = markedProcesses(runId);
      for (let i = 0; i < 20 && leftovers.length > 0; i++) {
        await new Promise((r) => setTimeout(r, 250));
        leftovers = markedProcesses(runId);
      }
      for (const p of leftovers) {
        try {
          process.kill(p.pid, 'SIGKILL'); // started by this run, so ours to end
        } catch {
          // already gone
        }
      }
      const reasons = [];
      if (timedOut) reasons.push(`timed out after ${TIMEOUT_MS / 60000} min`);
      else if (code !== 0) reasons.push(signal ? `killed by ${signal}` : `tests failed (exit code ${code})`);
      if (leftovers.length > 0)
        reasons.push(`left ${leftovers.length} process(es) running: ${leftovers.map((p) => `${p.pid} ${p.cmd}`).join('; ')}`);
      done({ runtime, ok: reasons.length === 0, version, seconds, notRun, reason: reasons.join('; ') || undefined });
    });
  });
}

const results = [];
for (const runtime of runtimes) results.push(await run(runtime));

console.log('\n=== summary');
console.log(`files: ${files.join(' ')}`);
for (const r of results) {
  const time = r.seconds === undefined ? '' : ` in ${r.seconds.toFixed(1)} s`;
  console.log(`${r.ok ? 'PASS' : 'FAIL'}  ${r.runtime}${r.version ? ` (${r.version})` : ''}${time}${r.reason ? `: ${r.reason}` : ''}`);
  for (const line of r.notRun ?? []) console.log(`      not run on ${r.runtime}: ${line}`);
}
const failed = results.filter((r) => !r.ok).map((r) => r.runtime);
if (failed.length > 0) {
  console.log(`failed on: ${failed.join(', ')}`);
  process.exit(1);
}
console.log(`passed on: ${results.map((r) => r.runtime).join(', ')}`);
