/**
 * What the serve config's JSON Schema cannot check in one watcher: its table's name, the checks
 * of the option table, database settings, option combinations, and that its directory exists.
 * Each problem is an issue of its own, with the fix.
 */
import { stat } from 'node:fs/promises';
import { checkDbChoice } from '../compose.ts';
import { LOAD_MODES, type LoadMode, modeKeyProblem } from '../options/load-modes.ts';
import { settingIssues } from '../options/serve.ts';
import { parseTableName } from '../columns/sql.ts';
import type { ConfigIssue, WatcherConfig } from './config.ts';

/** What the schema cannot check in one watcher (its entries at `path`). */
export function watcherIssues(w: WatcherConfig, path: string, env: Record<string, string | undefined>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const table = parseTableName(w.table);
  if (table.isErr())
    issues.push({
      path: `${path}.table`,
      problem: table.error,
      fix: 'Use a name such as "events", "Order Items", "sales.orders" or "sales.\\"a.b\\"".',
    });
  for (const p of checkDbChoice(w, env)) issues.push({ path: `${path}.${p.field}`, problem: p.problem, fix: p.fix });
  // Each setting's own check, from the option table; then what concerns two settings together.
  issues.push(...settingIssues(w, path));
  if (w.maxBadRows !== undefined && w.onBadRows !== 'skip' && !issues.some((i) => i.path === `${path}.maxBadRows`)) {
    issues.push({
      path: `${path}.maxBadRows`,
      problem: 'is set but onBadRows is not "skip", so no row is ever skipped',
      fix: 'Set "onBadRows": "skip" too, or remove maxBadRows.',
    });
  }
  const mode = (LOAD_MODES as readonly unknown[]).includes(w.mode) ? (w.mode as LoadMode) : undefined;
  const combined = mode === undefined && w.mode !== undefined ? undefined : modeKeyProblem(mode, w.key);
  if (combined && !issues.some((i) => i.path === `${path}.${combined.field}`))
    issues.push({ path: `${path}.${combined.field}`, problem: combined.problem, fix: combined.fix });
  if (w.fs === 'deno' && !('Deno' in globalThis))
    issues.push({ path: `${path}.fs`, problem: '"deno" works on Deno only', fix: 'Use "node", "parcel" or "poll".' });
  if (w.retryDelayMs?.initial !== undefined && w.retryDelayMs.max !== undefined && w.retryDelayMs.initial > w.retryDelayMs.max) {
    issues.push({
      path: `${path}.retryDelayMs`,
      problem: `initial (${w.retryDelayMs.initial}) is above max (${w.retryDelayMs.max})`,
      fix: 'Make initial at most max.',
    });
  }
  return issues;
}

export async function directoryIssue(dir: string, path: string): Promise<ConfigIssue | undefined> {
  try {
    if ((await stat(dir)).isDirectory()) return undefined;
    return { path, problem: `${dir} is not a directory`, fix: 'Give the path of a directory.' };
  } catch {
    return { path, problem: `${dir} does not exist`, fix: `Create it (mkdir -p ${dir}) or correct the path.` };
  }
}
