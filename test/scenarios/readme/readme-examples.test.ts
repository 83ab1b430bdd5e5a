/**
 * The README's runtime examples run as written: each block marked `<!-- example: program -->`
 * is saved under the file name its command names and run with that command (`node watch.mjs`,
 * `bun watch.ts`, `deno run ... watch.ts`) in a fresh directory, against a real embedded hyperd.
 * One file waits in the inbox before the start, one is dropped while it runs; then SIGINT, as
 * Ctrl-C would. Checked: the counts it prints, a clean exit, and the rows in its `.hyper` file.
 *
 * The package is found by name the way a user's project finds it before it is published:
 * `node_modules/hyperwatch` is a link to this checkout (what `npm install /path/to/checkout`
 * makes; Node and Bun then load dist/), and Deno gets the README's deno.json with `links` set to
 * this checkout. Deno would fetch the npm dependencies from the registry; here it gets the
 * checkout's node_modules instead (`nodeModulesDir: manual`), and every run goes through an
 * unreachable proxy, so the test needs no network.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createHyperAdapter } from '../../../adapters/db/hyper/index.ts';
import { findRuntime, type RuntimeName } from '../../../scripts/runtimes.mjs';
import { staleDist } from '../../helpers/dist.ts';
import { csv, drop, leftovers, waitFor } from '../../helpers/drop.ts';
import { count, OFFLINE_ENV, removeDir, tempDir } from '../../helpers/env.ts';
import { ROOT } from '../../helpers/proc.ts';

interface Example {
  readonly runtime: RuntimeName;
  /** As written in the README, e.g. `deno run --allow-read ... watch.ts`. */
  readonly command: string;
  readonly code: string;
}

/** `<!-- example: kind -->`, then text up to a fenced block: the text and the block's content. */
function markedBlocks(readme: string, kind: string): { text: string; code: string }[] {
  const found: { text: string; code: string }[] = [];
  const marker = `<!-- example: ${kind} -->`;
  for (let at = readme.indexOf(marker); at >= 0; at = readme.indexOf(marker, at + marker.length)) {
    const match = /^([\s\S]*?)^```[a-z]*\n([\s\S]*?)^```$/m.exec(readme.slice(at + marker.length));
    assert.ok(match, `README.md: no fenced block after the ${marker} at offset ${at}`);
    found.push({ text: match[1]!, code: match[2]! });
  }
  return found;
}

function readmeExamples(readme: string): Example[] {
  const examples: Example[] = [];
  for (const { text, code } of markedBlocks(readme, 'program')) {
    for (const [, command] of text.matchAll(/`((?:node|bun|deno) [^`]+)`/g)) {
      examples.push({ runtime: command!.split(' ')[0] as RuntimeName, command: command!, code });
    }
  }
  return examples;
}

const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
const examples = readmeExamples(readme);
const denoConfigs = markedBlocks(readme, 'deno.json');

describe('README examples, run as written', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) await removeDir(dir);
  });

  it('the README has one example command for each of node, bun and deno, and a deno.json', () => {
    assert.deepEqual(examples.map((e) => e.runtime).sort(), ['bun', 'deno', 'node']);
    assert.equal(denoConfigs.length, 1);
  });

  for (const example of examples) {
    it(`${example.runtime}: ${example.command}`, { timeout: 180_000 }, async () => {
      const found = findRuntime(example.runtime);
      assert.ok(found.path !== undefined, `${example.runtime}: ${found.error}`);
      const [, ...args] = example.command.split(' ');
      const file = args[args.length - 1]!;
      const dir = await tempDir('hyperwatch-readme-');
      dirs.push(dir);
      await writeFile(join(dir, file), example.code);
      await mkdir(join(dir, 'inbox'));

      if (example.runtime === 'deno') {
        const config = JSON.parse(denoConfigs[0]!.code) as { imports: Record<string, string>; links?: string[] };
        const { name } = JSON.parse(readFileSync(join(ROOT, 'deno.json'), 'utf8')) as { name: string };
        assert.ok(config.imports['hyperwatch']?.startsWith(`jsr:${name}@`), `the README's deno.json maps hyperwatch to jsr:${name}`);
        await writeFile(join(dir, 'deno.json'), JSON.stringify({ ...config, links: [ROOT], nodeModulesDir: 'manual' }, null, 2));
        await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
      } else {
        const stale = staleDist();
        assert.deepEqual(stale, [], `dist/ is older than these sources (run "npm run build"): ${stale.join(', ')}`);
        await mkdir(join(dir, 'node_modules'));
        await symlink(ROOT, join(dir, 'node_modules', 'hyperwatch'), 'dir');
      }

      await drop(
        join(dir, 'inbox'),
        'before.csv',
        csv('id,name', [
          [1, 'ann'],
          [2, 'bob'],
        ]),
      );
      const child = spawn(found.path, args, {
        cwd: dir,
        env: { ...process.env, ...OFFLINE_ENV, NO_COLOR: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
        child.on('close', (code, signal) => resolve({ code, signal })),
      );
      let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
      void exited.then((e) => (exit = e));
      const output = (): string => `${example.runtime} in ${dir}\nstdout:\n${stdout}\nstderr:\n${stderr}`;
      try {
        await waitFor(() => stdout.includes('\n') || exit !== undefined, `the initial sweep\n${output()}`, 90_000);
        assert.equal(exit, undefined, `exited before SIGINT\n${output()}`);
        assert.equal(stdout, 'initial sweep: 1 files\n', output());

        await drop(
          join(dir, 'inbox'),
          'after.csv',
          csv('id,name', [
            [3, 'cy'],
            [4, 'dee'],
            [5, 'eve'],
          ]),
        );
        await waitFor(async () => (await leftovers(join(dir, 'inbox'))).length === 0, `after.csv to be taken\n${output()}`, 30_000);
        child.kill('SIGINT');
        await waitFor(() => exit !== undefined, `exit after SIGINT\n${output()}`, 60_000);
      } finally {
        if (exit === undefined) child.kill('SIGKILL');
      }
      assert.deepEqual(exit, { code: 0, signal: null }, output());
      assert.equal(stdout, 'initial sweep: 1 files\n2 files, 5 rows\n', output());
      assert.equal(stderr, '', output());

      // The rows are in the file, read by a hyperd of our own now that the example's is gone.
      const db = createHyperAdapter({ database: join(dir, 'events.hyper') });
      try {
        const pool = await db.openPool({ maxConnections: 1 });
        try {
          assert.equal(await count(pool, 'events'), 5);
          const ledger = await pool.query<{ file_name: string }>('SELECT file_name FROM hyperwatch_internal.ingest_log ORDER BY file_name');
          assert.deepEqual(
            ledger.map((r) => r.file_name),
            ['after.csv', 'before.csv'],
          );
        } finally {
          await pool.close();
        }
      } finally {
        await db.close();
      }
      const failed = join(dir, 'inbox', 'failed');
      assert.deepEqual(existsSync(failed) ? readdirSync(failed) : [], [], 'nothing failed');
    });
  }
});
