/**
 * What the serve config's JSON Schema cannot check in one watcher: table and column names,
 * database settings, option combinations, and that its directory exists. Each problem is an
 * issue of its own, with the fix.
 */
import { stat } from 'node:fs/promises';
import { parseMaxBadRows } from '../bad-rows.ts';
import { checkDbChoice, csvDelimiterProblem, encodingProblem } from '../compose.ts';
import { checkSourceColumns } from '../source-columns.ts';
import { parseTableName } from '../sql.ts';
import type { ConfigIssue, WatcherConfig } from './config.ts';

/** What the schema cannot check in one watcher (its entries at `path`). */
export function watcherIssues(w: WatcherConfig, path: string, env: Record<string, string | undefined>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const table = parseTableName(w.table);
  if (table.isErr()) issues.push({ path: `${path}.table`, problem: table.error, fix: 'Use a name such as "events", "Order Items", "sales.orders" or "sales.\\"a.b\\"".' });
  const sources = checkSourceColumns(w.sourceColumns);
  if (sources.isErr()) issues.push({ path: `${path}.sourceColumns`, problem: sources.error, fix: 'Give each source column its own non-empty name, e.g. {"file": "_source_file", "claim": "_claim_id"}.' });
  for (const p of checkDbChoice(w, env)) issues.push({ path: `${path}.${p.field}`, problem: p.problem, fix: p.fix });
  const maxBadRows = parseMaxBadRows(w.maxBadRows);
  if ('error' in maxBadRows) issues.push({ path: `${path}.maxBadRows`, problem: maxBadRows.error, fix: 'Use a whole number of rows (e.g. 100) or a fraction between 0 and 1 (e.g. 0.01).' });
  else if (w.maxBadRows !== undefined && w.onBadRows !== 'skip') issues.push({ path: `${path}.maxBadRows`, problem: 'is set but onBadRows is not "skip", so no row is ever skipped', fix: 'Set "onBadRows": "skip" too, or remove maxBadRows.' });
  const delimiter = w.csvDelimiter === undefined ? undefined : csvDelimiterProblem(w.csvDelimiter);
  if (delimiter) issues.push({ path: `${path}.csvDelimiter`, problem: delimiter, fix: 'Give one character other than the quote, e.g. ";" or "\\t" for a tab.' });
  const charset = w.encoding === undefined ? undefined : encodingProblem(w.encoding);
  if (charset) issues.push({ path: `${path}.encoding`, problem: charset, fix: 'Name the character set the files are in, e.g. "windows-1252" or "utf-16le".' });
  if (w.fs === 'deno' && !('Deno' in globalThis)) issues.push({ path: `${path}.fs`, problem: '"deno" works on Deno only', fix: 'Use "node", "parcel" or "poll".' });
  if (w.retryDelayMs?.initial !== undefined && w.retryDelayMs.max !== undefined && w.retryDelayMs.initial > w.retryDelayMs.max) {
    issues.push({ path: `${path}.retryDelayMs`, problem: `initial (${w.retryDelayMs.initial}) is above max (${w.retryDelayMs.max})`, fix: 'Make initial at most max.' });
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
