/**
 * Names the test files that run far longer than any should, while they still run.
 *
 * scripts/test-files.mjs ends a test file at FILE_TIMEOUT_S, but that says only that the file ran too
 * long, not what it was waiting on. So, on Linux, every CHECK_MS this looks at
 * the processes: a test file's process running longer than `afterS` gets its process tree printed
 * (each process's nice value, age, CPU time, state and command), once, then again every
 * `afterS` seconds while it runs: a hyperd or PostgreSQL spinning, a watcher child stopped or gone,
 * a file waiting on nothing, tell apart at a glance in a CI log that shows only the last lines.
 *
 * Best effort: where `ps` is missing or answers otherwise (not Linux), it prints nothing.
 */
import { spawnSync } from 'node:child_process';
import process from 'node:process';

const CHECK_MS = 30_000;
/** A compiled test file's process: `node ... dist-test/test/x.test.js`. */
const TEST_FILE = /dist-test\/(test\/\S+\.test\.js)/;

/** Every process, from `ps`: pid, parent, nice, seconds since start, CPU time, state, command. */
function processes() {
  const listed = spawnSync('ps', ['-eo', 'pid=,ppid=,ni=,etimes=,time=,stat=,args='], { encoding: 'utf8' });
  if (listed.status !== 0) return [];
  const rows = [];
  for (const line of listed.stdout.split('\n')) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(.*)$/.exec(line);
    if (m) rows.push({ pid: Number(m[1]), ppid: Number(m[2]), ni: m[3], age: Number(m[4]), cpu: m[5], stat: m[6], args: m[7] });
  }
  return rows;
}

/** `root` and its descendants, each with its depth under `root`. */
function tree(rows, root) {
  const children = new Map();
  for (const r of rows) children.set(r.ppid, [...(children.get(r.ppid) ?? []), r]);
  const out = [];
  const walk = (r, depth) => {
    out.push({ ...r, depth });
    for (const c of children.get(r.pid) ?? []) walk(c, depth + 1);
  };
  walk(root, 0);
  return out;
}

/**
 * Starts watching; `afterS`: the age past which a test file is named, `checkMs`: how often it
 * looks. Returns the function that stops it. Only processes under this one (`process.pid`)
 * count: another suite on the machine is not this one's business.
 */
export function watchTestFiles(afterS, checkMs = CHECK_MS) {
  if (process.platform !== 'linux') return () => {};
  const named = new Map(); // pid -> the age it was last named at
  const timer = setInterval(() => {
    const rows = processes();
    const ours = new Set(tree(rows, { pid: process.pid, ppid: 0 }).map((r) => r.pid));
    for (const r of rows) {
      const file = TEST_FILE.exec(r.args)?.[1];
      if (!file || !ours.has(r.pid) || r.age < afterS || r.args.includes('--test ')) continue;
      if (r.age - (named.get(r.pid) ?? -Infinity) < afterS) continue;
      named.set(r.pid, r.age);
      const lines = tree(rows, r).map(
        (p) => `#   ${'  '.repeat(p.depth)}${p.pid} ni ${p.ni} ${p.age}s cpu ${p.cpu} ${p.stat} ${p.args.slice(0, 160)}`,
      );
      console.log(`\n# ${file} has run ${r.age} s, longer than any test file should; its processes:\n${lines.join('\n')}`);
    }
  }, checkMs);
  timer.unref();
  return () => clearInterval(timer);
}
