/**
 * The build in dist/ and whether it is current: `npm test` builds it first (its type check runs
 * `tsc -p tsconfig.json`), a test file run by hand after an edit may find it older than its sources.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './root.ts';

/** Sources newer than their build in dist/ (a dist/ older than its sources would test old code). */
export function staleDist(): string[] {
  const stale: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) {
        const built = join(ROOT, 'dist', `${path.slice(0, -3)}.js`);
        if (!existsSync(built) || statSync(built).mtimeMs < statSync(join(ROOT, path)).mtimeMs) stale.push(path);
      }
    }
  };
  for (const dir of ['src', 'adapters', 'plugins']) walk(dir);
  return stale;
}

let current: boolean | undefined;

/**
 * How a test runs the `hyperwatch` command: the built dist/src/bin.js when dist/ is current (what
 * users run, and twice as fast to start as the sources through tsx, which every CLI test pays on
 * every run), else src/bin.ts through tsx. Asked once per test process.
 */
export function cliCommand(): readonly string[] {
  return isDistCurrent() ? [join(ROOT, 'dist', 'src', 'bin.js')] : ['--import', 'tsx', join(ROOT, 'src', 'bin.ts')];
}

/**
 * How a test runs a fixture script of plain JavaScript that imports the project's code (see
 * test/fixtures/watch-child.mjs): the node arguments, and the environment that tells it to
 * import the build in dist/ (when current) rather than the sources through tsx.
 */
export function codeRunner(script: string): { readonly args: readonly string[]; readonly env: NodeJS.ProcessEnv } {
  return isDistCurrent()
    ? { args: [script], env: { HYPERWATCH_TEST_CODE: 'dist' } }
    : { args: ['--import', 'tsx', script], env: { HYPERWATCH_TEST_CODE: 'src' } };
}

/**
 * The node arguments that run the test script `path` (relative to the root, a `.ts` file): its
 * compiled copy in dist-test/ when this test runs compiled (npm test, see scripts/test.mjs), else
 * the source through tsx, as a test file run by hand with `--import tsx` runs.
 */
export function testScript(path: string): readonly string[] {
  return RUNS_COMPILED ? [join(ROOT, 'dist-test', path.replace(/\.ts$/, '.js'))] : ['--import', 'tsx', join(ROOT, path)];
}

/** Whether this module is the compiled copy in dist-test/ rather than the source. */
const RUNS_COMPILED = import.meta.url.endsWith('/dist-test/test/helpers/dist.js');

function isDistCurrent(): boolean {
  current ??= staleDist().length === 0;
  return current;
}
