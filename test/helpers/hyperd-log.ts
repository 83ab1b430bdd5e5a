/**
 * What a test's hyperd was doing, read from its own log (one JSON object a line): the statements
 * it began and never ended, and the connections whose start-up never finished. A test that waited
 * in vain on a shared hyperd puts this in its error, so the failure alone says what held it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Entry {
  readonly ts: string;
  readonly sess?: string;
  readonly req?: string;
  readonly k: string;
  readonly v?: { readonly query?: string };
}

function entries(logDir: string): Entry[] {
  const out: Entry[] = [];
  for (const name of readdirSync(logDir)
    .filter((n) => n.endsWith('.log'))
    .sort()) {
    for (const line of readFileSync(join(logDir, name), 'utf8').split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as Entry);
      } catch {
        // A line cut off by the crash or kill that ended the log.
      }
    }
  }
  return out;
}

/** A few lines on what hyperd (logging to `logDir`) had not finished; `limit` of each kind. */
export function hyperdStanding(logDir: string, limit = 12): string {
  let all: Entry[];
  try {
    all = entries(logDir);
  } catch (error) {
    return `# hyperd's log: ${String(error)}`;
  }
  const running = new Map<string, Entry>();
  const starting = new Map<string, Entry>();
  for (const e of all) {
    const key = `${e.sess}/${e.req}`;
    if (e.k === 'query-begin') running.set(key, e);
    else if (e.k.startsWith('query-end')) running.delete(key);
    else if (e.k === 'connection-startup-begin') starting.set(String(e.sess), e);
    else if (e.k === 'connection-startup-end' || e.k === 'connection-closed') starting.delete(String(e.sess));
  }
  const last = all.at(-1);
  const out = [
    `# hyperd's log: ${all.length} lines, the last at ${last?.ts ?? '-'} (${last?.k ?? '-'}); ${running.size} statements ` +
      `begun and not ended, ${starting.size} connections not through start-up`,
  ];
  for (const e of [...running.values()].slice(-limit))
    out.push(`#   running since ${e.ts} in session ${e.sess}: ${(e.v?.query ?? '').replace(/\s+/g, ' ').slice(0, 140)}`);
  for (const e of [...starting.values()].slice(-limit)) out.push(`#   starting since ${e.ts}: session ${e.sess}`);
  return out.join('\n');
}

/** How many statements hyperd (logging to `logDir`) began whose text matches `pattern`. */
export function statementsMatching(logDir: string, pattern: RegExp): number {
  return entries(logDir).filter((e) => e.k === 'query-begin' && pattern.test(e.v?.query ?? '')).length;
}
