/**
 * The built package as a user's project holds it: dist/ checked against its sources, and a copy
 * of it installed into a project of its own, with every dependency but the hyperd package.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { cp, mkdir, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { HYPERD_PACKAGE } from '../../adapters/db/hyper/locate.ts';
import { ROOT } from './proc.ts';

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

/**
 * `<project>/node_modules/hyperwatch`: a copy of dist/, package.json and the postinstall script (a copy, not a link:
 * Node resolves a linked package from its real path, which would find this checkout's
 * node_modules), beside links to this checkout's dependencies, all but `hyperdb-api-node-linux-x64-gnu`.
 * That is what `npm install hyperwatch` leaves where npm skipped that package (Node 20: its
 * engines say node >= 21) and ran no install script (npm 11). Returns the copy's bin.js.
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
  return join(pkg, 'dist', 'src', 'bin.js');
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
