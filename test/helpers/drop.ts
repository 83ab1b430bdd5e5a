/** Producer-side helpers for tests: drop files the way the protocol asks, and wait for outcomes. */
import { readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Writes `name` via a temp file and rename, then creates `name.ready`. */
export async function drop(dir: string, name: string, content: string | Uint8Array): Promise<void> {
  const tmp = join(dir, `.${name}.tmp`);
  await writeFile(tmp, content);
  await rename(tmp, join(dir, name));
  await writeFile(join(dir, `${name}.ready`), '');
}

export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Entries of the watched directory other than the watcher's own folders. */
export async function leftovers(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((n) => n !== 'failed' && n !== '.hyperwatch').sort();
}

export async function failedEntries(dir: string): Promise<string[]> {
  return (await readdir(join(dir, 'failed'))).sort();
}

/**
 * The watcher's staged copies of claimed files, in every process's folder
 * (`.hyperwatch/staging/<owner>/`; the literal path: it is part of the on-disk layout).
 */
export async function stagedEntries(dir: string): Promise<string[]> {
  return filesUnder(join(dir, '.hyperwatch', 'staging'));
}

/** The names of the files under `root`, at any depth, sorted. */
export async function filesUnder(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (at: string): Promise<void> => {
    for (const e of await readdir(at, { withFileTypes: true }).catch(() => [])) {
      if (e.isDirectory()) await walk(join(at, e.name));
      else out.push(e.name);
    }
  };
  await walk(root);
  return out.sort();
}

export function csv(header: string, rows: readonly (string | number)[][]): string {
  return `${header}\n${rows.map((r) => r.join(',')).join('\n')}\n`;
}
