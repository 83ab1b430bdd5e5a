#!/usr/bin/env node
/**
 * The `hyperwatch` command as package.json's `bin` runs it: src/bin.ts bundled by esbuild into
 * dist/cli/ (part of `npm run build`, after tsc has type-checked and built dist/ for the library).
 *
 * Why a bundle: node loads ES modules file by file (resolving, reading and compiling each, and
 * lexing each CommonJS dependency for its exports), and a start of the command loaded about 190
 * files of ours and about 50 of its dependencies': a third of a short run's CPU. The command is
 * started by cron jobs and scripts again and again. Measured on 2 cores, CPU-s of the process and
 * its hyperd, average of 8 runs of each, alternated in one session:
 *
 *   what ran                        --help   watch --once of 4 small CSVs
 *   dist/src/bin.js (tsc's files)   0.37     0.95
 *   dist/cli/hyperwatch.js          0.18     0.72
 *
 * (An earlier trial that left every dependency external gave 0.26 and 0.77 against 0.37 and 0.89
 * in its own runs: about half the gain is our files', half the dependencies'.)
 *
 * Split into chunks (`splitting`), what the commands and the formats import only when used
 * (src/cli/main.ts, plugins/{arrow,parquet}/index.ts) stays out of a start that does not use it:
 * one file of everything was slower to start than the files were.
 *
 * The dependencies every start loads, plain JavaScript, are bundled in (BUNDLED); the others stay
 * in node_modules, resolved as the library resolves them: a native addon (@parcel/watcher), the
 * hyperd package (found by its path), WebAssembly read from a file, and the large ones only some
 * formats load. A dependency added later stays external until it is listed here. The library
 * itself (package.json `exports`) is tsc's dist/src/, unbundled.
 *
 *   node scripts/build-cli.mjs     # writes dist/cli/hyperwatch.js and dist/cli/chunks/
 */
import { chmodSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const OUT = join('dist', 'cli');

/** Dependencies bundled into the command: loaded by every start, plain JavaScript, no files read by path. */
const BUNDLED = ['postgres', 'lossless-json', 'picomatch', 'iconv-lite', 'neverthrow', 'papaparse', 'fzstd'];

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const dependencies = [...Object.keys(pkg.dependencies), ...Object.keys(pkg.optionalDependencies ?? {})];
for (const name of BUNDLED) if (!dependencies.includes(name)) throw new Error(`BUNDLED names ${name}, which is no dependency`);
const external = dependencies.filter((name) => !BUNDLED.includes(name)).flatMap((name) => [name, `${name}/*`]);

rmSync(join(ROOT, OUT), { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: { hyperwatch: 'src/bin.ts' },
  outdir: OUT,
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  // package.json `engines`: the oldest node the command runs on.
  target: 'node20',
  external,
  // The bundled CommonJS dependencies require node's own modules (buffer, stream), which an ES
  // module can only do through a require of its own.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  // Stack traces and error names as the sources have them (bundling renames clashing names).
  keepNames: true,
  logLevel: 'warning',
});
chmodSync(join(ROOT, OUT, 'hyperwatch.js'), 0o755);
