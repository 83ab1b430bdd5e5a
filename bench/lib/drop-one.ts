/**
 * One file dropped into a watched inbox, as the single-file workloads do it: the data and its
 * sentinel are made outside the inbox beforehand, then renamed in, the sentinel last. Creating
 * the sentinel in the inbox would time ext4's inode allocation too (small-files.ts, the flood).
 */
import { copyFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { READY_SUFFIX } from '../../src/index.ts';
import { now } from './measure.ts';

/** Copies `source` into `outside` as `name`, with its empty sentinel beside it. */
export async function stageOne(source: string, outside: string, name: string): Promise<void> {
  await copyFile(source, join(outside, name));
  await writeFile(join(outside, name + READY_SUFFIX), '');
}

/** Renames the staged `name` into `inbox`, then its sentinel: when the sentinel appeared. */
export async function dropStaged(outside: string, inbox: string, name: string): Promise<number> {
  await rename(join(outside, name), join(inbox, name));
  const t0 = now();
  await rename(join(outside, name + READY_SUFFIX), join(inbox, name + READY_SUFFIX));
  return t0;
}
