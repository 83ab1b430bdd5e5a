/**
 * The build in dist/ and whether it is current: `npm test` builds it first (`npm run build`: tsc,
 * then the command's bundle), a test file run by hand after an edit may find it older than its sources.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './root.ts';

/** The `hyperwatch` command as installed: package.json's `bin` (scripts/build-cli.mjs's bundle), relative to the root. */
export const CLI_BIN: string = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: { hyperwatch: string } }).bin
  .hyperwatch;

/**
 * Sources newer than their build in dist/ (a dist/ older than its sources would test old code):
 * their tsc output, or the command's bundle, which holds them all.
 */
export function staleDist(): string[] {
  const stale: string[] = [];
  const bin = join(ROOT, CLI_BIN);
  const bundled = existsSync(bin) ? statSync(bin).mtimeMs : 0;
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (path.endsWith('.ts') && !path.endsWith('.d.ts')) {
        const built = join(ROOT, 'dist', `${path.slice(0, -3)}.js`);
        const changed = statSync(join(ROOT, path)).mtimeMs;
        if (!existsSync(built) || statSync(built).mtimeMs < changed || bundled < changed) stale.push(path);
      }
    }
  };
  for (const dir of ['src', 'adapters', 'plugins']) walk(dir);
  return stale;
}

let current: boolean | undefined;

/**
 * How a test runs the `hyperwatch` command: package.json's `bin` when dist/ is current (what users
 * run, and far faster to start than the sources through tsx, which every CLI test pays on every
 * run), else src/bin.ts through tsx. Asked once per test process.
 */
export function cliCommand(): readonly string[] {
  return isDistCurrent() ? [join(ROOT, CLI_BIN)] : ['--import', 'tsx', join(ROOT, 'src', 'bin.ts')];
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
