/**
 * Where the time of the format set's endpoint cases goes inside hyperd: reads the bench hyperd's
 * own log (kept with `HYPERWATCH_BENCH_HYPERD_LOG=dir npm run bench -- --only files-own,...`) and
 * prints, per file and table state, the medians (ms, as hyperd measured them) of hyperwatch's
 * load statement, its other statements in the same transaction (fence, ledger row) and its
 * `COMMIT`, beside hyperd's own load of the same file. Embedded cases run in the watcher's own
 * hyperd and are not in this log.
 *
 *   node --import tsx bench/hyperd-log.ts DIR
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';

interface Query {
  readonly session: string;
  readonly ms: number;
  /** The commit inside the statement (an auto-committed statement commits as it ends). */
  readonly commitMs: number;
  readonly text: string;
}

const dir = process.argv[2];
if (!dir) throw new Error('usage: bench/hyperd-log.ts DIR (the folder HYPERWATCH_BENCH_HYPERD_LOG named)');

const queries: Query[] = [];
for (const name of readdirSync(dir)
  .filter((n) => n.endsWith('.log'))
  .sort()) {
  for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
    if (!line.includes('"query-end"')) continue;
    const entry = JSON.parse(line) as { sess?: string; v: { elapsed?: number; 'commit-time'?: number; 'query-trunc'?: string } };
    if (entry.v.elapsed === undefined || !entry.sess) continue;
    queries.push({
      session: entry.sess,
      ms: entry.v.elapsed * 1000,
      commitMs: (entry.v['commit-time'] ?? 0) * 1000,
      text: entry.v['query-trunc'] ?? '',
    });
  }
}

/** A load statement: into which table, from which file. */
const LOAD = /^(?:COPY|INSERT INTO) "((?:hw|own)_\d+)".*?'([^']+\.(?:csv|parquet|arrows?))'/s;
const loadOf = (q: Query) => LOAD.exec(q.text);

// Tables loaded twice (the first load, outside hyperwatch, fills an existing table).
const loadsPerTable = new Map<string, number>();
for (const q of queries) {
  const m = loadOf(q);
  if (m) loadsPerTable.set(m[1]!, (loadsPerTable.get(m[1]!) ?? 0) + 1);
}

interface Row {
  readonly hw: number[];
  readonly rest: number[];
  readonly commit: number[];
  readonly own: Map<string, number[]>;
  readonly ownCommit: Map<string, number[]>;
}
const rows = new Map<string, Row>();
const rowFor = (key: string): Row => {
  const row = rows.get(key) ?? { hw: [], rest: [], commit: [], own: new Map(), ownCommit: new Map() };
  rows.set(key, row);
  return row;
};
const bySession = new Map<string, Query[]>();
for (const q of queries) bySession.set(q.session, [...(bySession.get(q.session) ?? []), q]);
const fileKey = (path: string) =>
  path
    .replace(/^.*\//, '')
    .replace(/^[^~]*~/, '')
    .replace(/-\d+(\.[a-z]+)$/, '$1');
for (const qs of bySession.values()) {
  const loads = qs.map((q, i) => [i, loadOf(q)] as const).filter(([, m]) => m !== null);
  for (const [n, [i, m]] of loads.entries()) {
    const [, table, path] = m!;
    const state = loadsPerTable.get(table!)! > 1 ? 'existing' : 'fresh';
    const staged = path!.includes('/staging/');
    if (staged) {
      const row = rowFor(`${fileKey(path!)} | ${state}`);
      const commit = qs.slice(i + 1).findIndex((x) => x.text === 'COMMIT');
      row.hw.push(qs[i]!.ms);
      row.rest.push(qs.slice(i + 1, i + 1 + commit).reduce((sum, x) => sum + x.ms, 0));
      row.commit.push(qs[i + 1 + commit]?.ms ?? Number.NaN);
    } else if (table!.startsWith('own_') && n === loads.length - 1) {
      // hyperd's own timed load: the last load of its session (an existing table was filled first).
      const row = rowFor(`${fileKey(path!)} | ${state}`);
      const kind = qs[i]!.text.startsWith('INSERT') ? 'INSERT ... external()' : 'COPY';
      row.own.set(kind, [...(row.own.get(kind) ?? []), qs[i]!.ms]);
      row.ownCommit.set(kind, [...(row.ownCommit.get(kind) ?? []), qs[i]!.commitMs]);
    }
  }
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : Number.NaN;
};
const f = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '—');
console.log(
  '| file (staged name) | table | runs | hyperwatch load stmt | fence + ledger row | COMMIT | hyperd own load stmt (fastest ' +
    'kind) | of which its commit |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const [key, r] of [...rows].sort()) {
  if (!r.hw.length) continue;
  const [file, state] = key.split(' | ');
  const ownBest = r.own.size ? [...r.own].map(([k, v]) => [k, median(v)] as const).sort((a, b) => a[1] - b[1])[0] : undefined;
  const ownCommit = ownBest ? median(r.ownCommit.get(ownBest[0])!) : Number.NaN;
  console.log(
    `| ${file} | ${state} | ${r.hw.length} | ${f(median(r.hw))} | ${f(median(r.rest))} | ${f(median(r.commit))} ` +
      `| ${ownBest ? `${f(ownBest[1])} (${ownBest[0]})` : '—'} | ${f(ownCommit)} |`,
  );
}
