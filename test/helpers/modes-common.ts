/** What the load modes' suites share: the table read back, a file dropped and waited for, its report. */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WatcherHandle } from '../../src/watcher/handle.ts';
import { drop, waitFor } from './drop.ts';
import type { WatchBench } from './watch-bench.ts';

export interface ModesExpect {
  /** The database keeps the order a file's rows were loaded in (PostgreSQL): `duplicateKeys: 'last'` works there. */
  readonly ordered: boolean;
  /** Files ready at once share a transaction in these modes (the database reads back its transaction's writes in full). */
  readonly grouped: boolean;
}

type Row = Record<string, string | null>;

/** The table's rows, every value as text (NULL as null), sorted by the columns given. */
export async function rowsOf(t: WatchBench, table: string, columns: readonly string[], orderBy: string): Promise<Row[]> {
  const list = columns.map((c) => `CAST(${c} AS TEXT) AS ${c}`).join(', ');
  const rows = await t.pool.query<Row>(`SELECT ${list} FROM ${table} ORDER BY ${orderBy}`);
  return rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c] === null || r[c] === undefined ? null : String(r[c])])));
}

/** Drops one file and waits until it has committed or failed. */
export async function dropAndWait(handle: WatcherHandle, dir: string, name: string, content: string | Uint8Array): Promise<void> {
  const before = handle.stats.filesIngested + handle.stats.filesFailed;
  await drop(dir, name, content);
  await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed > before, `${name} to commit or fail`);
}

export async function report(dir: string, name: string): Promise<{ code: string; message: string; hint: string; column?: string }> {
  return JSON.parse(await readFile(join(dir, 'failed', `${name}.error`), 'utf8'));
}

export const r = (id: string, name: string | null, score: string | null): Row => ({ id, name, score });
