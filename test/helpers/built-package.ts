/**
 * The built package as a user's project holds it: a copy of dist/ installed into a project of its
 * own, with every dependency but the hyperd package (whether dist/ is current: dist.ts).
 */
import { readdirSync } from 'node:fs';
import { cp, mkdir, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { HYPERD_PACKAGE } from '../../adapters/db/hyper/locate.ts';
import { CLI_BIN } from './dist.ts';
import { ROOT } from './root.ts';

/**
 * `<project>/node_modules/hyperwatch`: a copy of dist/, package.json and the postinstall script (a copy, not a link:
 * Node resolves a linked package from its real path, which would find this checkout's
 * node_modules), beside links to this checkout's dependencies, all but `hyperdb-api-node-linux-x64-gnu`.
 * That is what `npm install hyperwatch` leaves where npm skipped that package (Node 20: its
 * engines say node >= 21) and ran no install script (npm 11). Returns the copy's command (package.json `bin`).
 */
export async function installWithoutHyperdPackage(project: string): Promise<string> {
  const modules = join(project, 'node_modules');
  const pkg = join(modules, 'hyperwatch');
  await mkdir(pkg, { recursive: true });
  await cp(join(ROOT, 'dist'), join(pkg, 'dist'), { recursive: true });
  await cp(join(ROOT, 'package.json'), join(pkg, 'package.json'));
  await cp(join(ROOT, 'scripts', 'install-hyperd.mjs'), join(pkg, 'scripts', 'install-hyperd.mjs'));
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (name === HYPERD_PACKAGE || name === 'hyperwatch' || name.startsWith('.')) continue;
    await symlink(join(ROOT, 'node_modules', name), join(modules, name), 'dir');
  }
  return join(pkg, CLI_BIN);
}

/** Whether the hyperd package resolves from `file` the way locate.ts resolves it. */
export function hyperdPackageResolvesFrom(file: string): boolean {
  try {
    createRequire(file).resolve(`${HYPERD_PACKAGE}/package.json`);
    return true;
  } catch {
    return false;
  }
}
