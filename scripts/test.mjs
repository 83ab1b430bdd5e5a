#!/usr/bin/env node
/**
 * `npm test` after the build: the type check of the tests, then every Node test file, then the
 * protocol suite on Deno and Bun, in less time than one file after another. Most files wait on
 * timers, child processes and hyperd rather than on the CPU, so they run CONCURRENCY at a time,
 * longest first (LONG_FIRST), each in a node process of its own (runFiles: node's runner sorts
 * the files it is given), with the Deno and Bun run (scripts/test-runtimes.mjs) beside them. The
 * files whose assertions time the process itself (SERIAL, each with its reason) run afterwards,
 * with nothing else running: those that time single statements or throughput (ALONE) one at a
 * time, then those timing kills and leases in seconds (PAIRED) two at a time, one per core. Each
 * of those is about one core busy on its own (its watchers, hyperd, PostgreSQL), so two of them
 * keep their timing: the 16 first listed there took 254 s and 299 s two at a time in two trials,
 * against 385 s one after another.
 *
 * Tried and dropped: the timed files with the others beside them at the lowest CPU priority (nice
 * 19). On this machine that ran about 40 s sooner (822 s against 860 s on fresh clones), but its
 * one CI run hung past the CI's 90 minutes, with nothing printed after the timed files ended. The
 * cause was not found; the likely one: a nice-19 process gets about 1.5% of a core beside one
 * busy at normal priority, so a single such process (a child a test left behind, spinning) all
 * but stops the rest, where with one lane after the other it would only halve the suite's speed.
 *
 *   node scripts/test.mjs                   # the whole suite
 *   node scripts/test.mjs --concurrency 2   # fewer files at once (default 3; 1: one after another)
 *   node scripts/test.mjs --node-only       # the Node test files alone (npm run test:node), no Deno and Bun
 *   node scripts/test.mjs --list            # the files it would run, in its two parts, and nothing run
 *
 * The test files are every `*.test.ts` under test/, at any depth (ARCHITECTURE.md, *Tests*: which
 * folder a test goes in), except under test/helpers/ and test/fixtures/, which tests import or read.
 * A `*.test.ts` anywhere else in the project would never run: the runner refuses to start while
 * there is one, naming it, so that a misplaced file cannot skip silently.
 *
 * The Node test files run compiled: tsc, which type-checks them (test/tsconfig.build.json), emits
 * them with the code they import into dist-test/, and node runs that without a TypeScript loader.
 * Through tsx each test process paid its loader on every import (hooks on a thread of their own,
 * esbuild's transforms): about 0.3 to 0.9 CPU-s more a file (options.test.ts 1.85 -> 0.88 CPU-s,
 * csv-sniff.test.ts 21.9 -> 18.1), on 2 cores where the suite is short of CPU, not of waiting.
 * A single file by hand still runs from its source: `node --import tsx --test <file>.test.ts`.
 *
 * Prints each part's time, and exits 1 when any part failed (a type error fails before any test).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { BUILT, failures, run, runFiles } from './test-files.mjs';
import { watchTestFiles } from './test-watchdog.mjs';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');

/**
 * Of the files that time themselves, those whose bounds are fractions of a second (a COPY's
 * median, throughput), and why: nothing at all beside them. The conformance files bound how long
 * one load may hold the event loop too, but as the main thread's own CPU time (test/helpers/
 * loop-hold.ts), which other processes do not lengthen: they run with the rest.
 */
export const ALONE = {
  'test/adapters/db/postgres/postgres-adapter.test.ts': "times 100-row COPYs (median under 30 ms: Nagle's algorithm off)",
  'test/bench/bench.test.ts': 'runs the benchmarks, which measure throughput',
};

/**
 * The files that time themselves in seconds (kills, leases), and why: two at a time, longest first
 * (their time alone: 62 s down to 1 s), so that no long file starts last.
 */
export const PAIRED = {
  'test/scenarios/cli/cli.test.ts': 'signals sent while a file loads or a sweep runs, timed against the command starting',
  'test/scenarios/multi-process/multi-process-hyper.test.ts': 'three processes on one hyperd, killed and restarted within a 150 s budget',
  'test/scenarios/crash/crash.test.ts': 'SIGKILLs watchers at random moments; its restarts wait on start-up times',
  'test/scenarios/crash/own-schema-crash.test.ts':
    'SIGKILLs the move of the tables of an older version at random moments, some within tens of milliseconds of its start',
  'test/scenarios/crash/marker-kill.test.ts': 'SIGKILLs watchers at random moments (hyperd, PostgreSQL) while DuckDB writes job folders',
  'test/scenarios/crash/crash-bad-rows.test.ts': 'SIGKILLs watchers at random moments, as crash.test.ts',
  'test/scenarios/burst/burst.test.ts': 'measures files/s, peak memory and descriptors of a 20,000-file burst',
  'test/scenarios/multi-process/multi-process.test.ts': 'leases of a few seconds between processes, and SIGSTOP past them',
  'test/scenarios/crash/mode-kill.test.ts': 'SIGKILLs three upserting processes at random moments, on 3 s leases',
  'test/scenarios/crash/recursive-kill.test.ts': 'SIGKILLs watchers at random moments, as crash.test.ts, with files in subfolders',
  'test/scenarios/crash/crash-hyperd.test.ts': 'kills hyperd mid-stream and mid-checkpoint at measured moments',
  'test/scenarios/crash/mode-kill-hyper.test.ts': 'SIGKILLs three upserting processes on one hyperd, on 3 s leases',
  'test/scenarios/crash/crash-hyperd-marker.test.ts':
    'kills hyperd while marker folders are in flight, before their commits are checkpointed',
  'test/scenarios/multi-process/marker-multi.test.ts':
    'two processes share marker folders, one SIGKILLed, on 3 s leases (PostgreSQL, and one shared hyperd)',
  'test/scenarios/multi-process/order-name-multi.test.ts': 'two processes on 5 s leases, one waiting for the other to commit a large file',
  'test/scenarios/multi-process/ready-when-multi.test.ts': 'three processes share an inbox in stable mode, one SIGKILLed, on 3 s leases',
  'test/src/watcher/lease-expiry.test.ts': 'leases that expire after a few hundred milliseconds',
};

/**
 * Of the files run CONCURRENCY at a time, those that take longest (20 s to 3 minutes each beside
 * two others, measured on 2 cores), longest first: they start first, so that none of them starts
 * late and holds the part's end alone (with the watcher's files late in name order, the last
 * minute ran on one core). The rest follow in name order.
 */
export const LONG_FIRST = [
  'test/scenarios/conformance/conformance-arrow.test.ts',
  'test/fuzz/fuzz.test.ts',
  'test/scenarios/hyper-setups/hyper-setups-shared.test.ts',
  'test/src/watcher/mode-postgres.test.ts',
  'test/scenarios/conformance/conformance-parquet.test.ts',
  'test/src/watcher/watcher.test.ts',
  'test/src/watcher/ready-when.test.ts',
  'test/plugins/csv/csv-dialect.test.ts',
  'test/scenarios/packaging/hyperd-first-use.test.ts',
  'test/plugins/csv/csv-dates.test.ts',
  'test/scenarios/cli/csv-dialect-cli.test.ts',
  'test/src/watcher/mode-hyper.test.ts',
  'test/src/watcher/postgres.test.ts',
  'test/src/watcher/mode-hyper-endpoint.test.ts',
  'test/fuzz/fuzz-regressions.test.ts',
  'test/plugins/csv/csv-sniff.test.ts',
  'test/src/check/check.test.ts',
  'test/src/check/check-partitions.test.ts',
  'test/scenarios/hyper-setups/hyper-setups-readers.test.ts',
  'test/plugins/arrow/arrow-check-pass.test.ts',
  'test/adapters/db/hyper/hyperd-builds.test.ts',
  'test/scenarios/cli/export-cli.test.ts',
  'test/scenarios/polluted/polluted-files.test.ts',
  'test/scenarios/packaging/hyperd-first-use-runtimes.test.ts',
];

/** Files that fail when other files compete for the CPU: each declared once, in one of the two. */
export const SERIAL = { ...ALONE, ...PAIRED };

const args = process.argv.slice(2);
const at = args.indexOf('--concurrency');
const concurrency = at >= 0 ? Number(args[at + 1]) : 3;
if (!Number.isInteger(concurrency) || concurrency < 1) {
  console.error(`--concurrency expects a whole number, at least 1, got ${JSON.stringify(args[at + 1])}`);
  process.exit(2);
}
const nodeOnly = args.includes('--node-only');

/** Folders under test/ whose files are imported or read by tests, never run themselves. */
const NOT_RUN = ['test/helpers', 'test/fixtures'];
/** Folders of the project that hold no test of its own: what is installed, built or made by a run. */
const NOT_PROJECT = new Set(['node_modules', 'dist', 'dist-test', 'hyperwatch-demo', 'bench/out', 'bench/results']);

/** Every `*.test.ts` under `dir` (relative to ROOT, with `/`), at any depth, but not in `skip`. */
function testFilesUnder(dir, skip) {
  const found = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = dir === '.' ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!entry.name.startsWith('.') && !skip.has(path)) found.push(...testFilesUnder(path, skip));
    } else if (entry.name.endsWith('.test.ts')) found.push(path);
  }
  return found;
}

const all = testFilesUnder('test', new Set(NOT_RUN)).sort();
// The guard: a test file the runs below would leave out (under test/helpers/, test/fixtures/, or
// outside test/) stops the suite before anything runs.
const left = testFilesUnder('.', NOT_PROJECT).filter((f) => !all.includes(f));
if (left.length > 0) {
  console.error(`${left.length} test file(s) that npm test would not run:`);
  for (const f of left) console.error(`  ${f}`);
  console.error(`test files go under test/, outside ${NOT_RUN.join('/ and ')}/: see ARCHITECTURE.md, "Tests", for the folder`);
  process.exit(2);
}
for (const [list, files] of Object.entries({ SERIAL: Object.keys(SERIAL), LONG_FIRST })) {
  for (const file of files) if (!all.includes(file)) throw new Error(`${file} (in ${list}) does not exist`);
}
for (const file of LONG_FIRST) if (file in SERIAL) throw new Error(`${file} is in LONG_FIRST and SERIAL: it would run twice`);
const parallel = [...LONG_FIRST, ...all.filter((f) => !(f in SERIAL) && !LONG_FIRST.includes(f))];
const alone = Object.keys(ALONE);
const paired = Object.keys(PAIRED);
for (const file of alone) if (file in PAIRED) throw new Error(`${file} is in both ALONE and PAIRED: it would run twice`);
/** Two at a time, or one at a time when the whole run asks for fewer (`--concurrency 1`). */
const pairs = Math.min(2, concurrency);
if (args.includes('--list')) {
  console.log(`${parallel.length} Node test files, ${concurrency} at a time:`);
  for (const f of parallel) console.log(`  ${f}`);
  console.log(`${alone.length} Node test files that time themselves, one at a time:`);
  for (const f of alone) console.log(`  ${f}`);
  console.log(`${paired.length} Node test files that time themselves, ${pairs} at a time:`);
  for (const f of paired) console.log(`  ${f}`);
  process.exit(0);
}

/**
 * Type-checks the tests and emits them into BUILT. tsc emits no plain JavaScript, so the scripts'
 * `.mjs` files that tests import (scripts/runtimes.mjs) are linked there, not copied: node resolves
 * a link to the file itself, whose import.meta.url still names the root.
 */
function buildTests() {
  const started = performance.now();
  rmSync(join(ROOT, BUILT), { recursive: true, force: true });
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', join('test', 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error('the type check of the tests failed (tsc -p test/tsconfig.build.json): no test ran');
    process.exit(1);
  }
  mkdirSync(join(ROOT, BUILT, 'scripts'), { recursive: true });
  for (const entry of readdirSync(join(ROOT, 'scripts'))) {
    if (entry.endsWith('.mjs')) symlinkSync(join(ROOT, 'scripts', entry), join(ROOT, BUILT, 'scripts', entry));
  }
  console.log(`tests type-checked and built into ${BUILT}/ in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

/** When a file still running is named, with its processes (scripts/test-watchdog.mjs). */
const FILE_NAMED_AFTER_S = 10 * 60;

/**
 * The PostgreSQL clusters the tests start are copies of one initdb made once, kept here for the
 * run (test/helpers/postgres.ts, templateData): every test process inherits the folder's name.
 */
const pgTemplate = mkdtempSync(join(tmpdir(), 'hyperwatch-pg-template-'));
chmodSync(pgTemplate, 0o755); // as root, the server's own user builds and copies the template in it
process.env.HYPERWATCH_PG_TEMPLATE = pgTemplate;
process.on('exit', () => rmSync(pgTemplate, { recursive: true, force: true }));
// Ctrl-C or a CI's timeout: the children get the signal too; this process still removes the folder.
for (const [signal, code] of Object.entries({ SIGINT: 130, SIGTERM: 143 })) process.on(signal, () => process.exit(code));

const started = performance.now();
buildTests();
watchTestFiles(FILE_NAMED_AFTER_S);
const results = await Promise.all([
  runFiles(`${parallel.length} Node test files, ${concurrency} at a time`, parallel, concurrency),
  ...(nodeOnly ? [] : [run('Deno and Bun (scripts/test-runtimes.mjs)', process.execPath, [join('scripts', 'test-runtimes.mjs')])]),
]);
console.log(`\n--- ${Object.keys(SERIAL).length} Node test files that time themselves, with nothing else running ---`);
for (const [file, why] of Object.entries(SERIAL)) console.log(`#   ${file}: ${why}${file in ALONE ? ' (alone)' : ''}`);
results.push(await runFiles(`${alone.length} Node test files, one at a time`, alone, 1));
results.push(await runFiles(`${paired.length} Node test files, ${pairs} at a time`, paired, pairs));

for (const r of results.filter((r) => !r.ok)) {
  for (const f of r.failed ?? [r]) console.log(`\n--- what failed in: ${f.label} ---\n${failures(f.output)}`);
}
console.log(`\n--- ${nodeOnly ? 'npm run test:node' : 'npm test'} ---`);
for (const r of results) console.log(`${r.ok ? 'passed' : `FAILED (${r.code})`}  ${r.seconds.toFixed(0).padStart(5)} s  ${r.label}`);
console.log(`total ${((performance.now() - started) / 1000).toFixed(0)} s`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
