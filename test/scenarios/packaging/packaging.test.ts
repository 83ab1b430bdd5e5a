/**
 * Packaging: deno.json (JSR) offers the same entry points as package.json (npm), and
 * `deno publish --dry-run` passes: type check, no slow types, the expected files.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { findRuntime } from '../../../scripts/runtimes.mjs';
import { OFFLINE_ENV } from '../../helpers/env.ts';
import { ROOT } from '../../helpers/proc.ts';

type PackageExport = string | { readonly types?: string; readonly default?: string };

function readJson<T>(name: string): T {
  return JSON.parse(readFileSync(join(ROOT, name), 'utf8')) as T;
}

describe('packaging', () => {
  const pkg = readJson<{ name: string; version: string; license: string; exports: Record<string, PackageExport> }>('package.json');
  const deno = readJson<{ name: string; version: string; license: string; exports: Record<string, string> }>('deno.json');

  it('deno.json exports the same entry points as package.json, from the sources dist/ is built from', () => {
    const npmEntries = Object.keys(pkg.exports)
      .filter((k) => k !== './package.json')
      .sort();
    assert.deepEqual(Object.keys(deno.exports).sort(), npmEntries, 'entry points of deno.json vs package.json');
    for (const entry of npmEntries) {
      const source = deno.exports[entry]!;
      assert.match(source, /^\.\/.+\.ts$/, `deno.json exports["${entry}"]`);
      const built = `./dist/${source.slice(2, -3)}`;
      const target = pkg.exports[entry];
      assert.ok(typeof target === 'object', `package.json exports["${entry}"] has types and default`);
      assert.equal(target.default, `${built}.js`, `package.json exports["${entry}"].default is built from deno.json's ${source}`);
      assert.equal(target.types, `${built}.d.ts`, `package.json exports["${entry}"].types`);
    }
    assert.equal(deno.version, pkg.version, 'deno.json and package.json versions');
    assert.equal(deno.license, pkg.license, 'deno.json and package.json licenses');
  });

  it('deno publish --dry-run passes without --allow-slow-types, offline', async () => {
    const found = findRuntime('deno');
    assert.ok(found.path !== undefined, found.error);
    // The clean-tree check is a release guard, not a property of the code: on a checkout with
    // uncommitted edits the check runs with --allow-dirty (a clean clone, as in CI, without).
    const status = spawnSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' });
    const dirty = status.status === 0 && status.stdout.trim() !== '';
    const args = ['publish', '--dry-run', ...(dirty ? ['--allow-dirty'] : [])];
    const child = spawn(found.path, args, {
      cwd: ROOT,
      env: { ...process.env, ...OFFLINE_ENV, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, `deno ${args.join(' ')} failed:\n${output}`);
    assert.match(output, /Dry run complete/);
    const files = [...output.matchAll(/file:\/\/\S+/g)].map((m) => decodeURI(new URL(m[0]).pathname).slice(ROOT.length + 1));
    for (const wanted of [
      'src/index.ts',
      'src/testing.ts',
      'adapters/db/postgres/index.ts',
      'scripts/install-hyperd.mjs',
      'schema/hyperwatch.config.schema.json',
      'README.md',
      'deno.json',
    ]) {
      assert.ok(files.includes(wanted), `${wanted} is published (published: ${files.join(', ')})`);
    }
    assert.deepEqual(
      files.filter((f) => /^(test|bench|examples|dist|node_modules)\//.test(f)),
      [],
      'tests, benches, examples, builds are not published',
    );
  });
});
