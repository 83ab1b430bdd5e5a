/**
 * `mode: 'replace'` is atomic for readers: a second session polls `COUNT(*)` and a checksum
 * (`SUM(id)`) while file after file replaces the table, and must only ever see one whole file's
 * rows (or the table before the first).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openWatcher } from '../../src/api.ts';
import { drop, waitFor } from './drop.ts';
import type { WatchBench } from './watch-bench.ts';

/** File i holds ids i * 10^7 + 1 .. i * 10^7 + rows: its count and sum say which file a reader sees, and whether whole. */
function fileOf(i: number, rows: number): { text: string; sum: bigint } {
  const base = i * 10_000_000;
  const lines = ['id,v'];
  let sum = 0n;
  for (let k = 1; k <= rows; k++) {
    lines.push(`${base + k},${i}`);
    sum += BigInt(base + k);
  }
  return { text: `${lines.join('\n')}\n`, sum };
}

interface ReaderSize {
  readonly files: number;
  readonly rows: number;
}

/**
 * Under Deno and Bun (scripts/test-runtimes.mjs) the case runs at this size at most. What it
 * proves, that a replace is one transaction a reader sees whole, is the database's and the same
 * on every runtime; the runtime's part (the statements, the COPY stream through postgres.js) is
 * the same at any size. At Node's size it was nearly half of that run's CPU (the two mode files
 * under Deno and Bun: 143 CPU-s, now 32), beside the Node files on 2 cores.
 */
const OFF_NODE: ReaderSize = { files: 10, rows: 50_000 };

function sizeHere(size: ReaderSize): ReaderSize {
  if (!('Deno' in globalThis) && !('Bun' in globalThis)) return size;
  return { files: Math.min(size.files, OFF_NODE.files), rows: Math.min(size.rows, OFF_NODE.rows) };
}

export function replaceReaderCase(t: WatchBench, nodeSize: ReaderSize): void {
  const size = sizeHere(nodeSize);
  const title =
    `replace: a reader polling COUNT(*) and SUM(id) during ${size.files} replaces of ` + `${size.rows}-row files sees only whole files`;
  it(title, async () => {
    const { dir, table, opts } = await t.inbox();
    const handle = await openWatcher(dir, table, { ...opts, mode: 'replace' });
    const files = Array.from({ length: size.files }, (_, i) => fileOf(i + 1, size.rows));
    const whole = new Map(files.map((f, i) => [f.sum.toString(), i + 1]));
    await drop(dir, 'f000.csv', fileOf(0, size.rows).text);
    whole.set(fileOf(0, size.rows).sum.toString(), 0);
    await waitFor(() => handle.stats.filesIngested === 1, 'the first file');
    let polling = true;
    const seen = new Map<number, number>();
    let polls = 0;
    const reader = (async () => {
      while (polling) {
        const [r] = await t.pool.query<{ n: string | number; s: string | number }>(`SELECT COUNT(*) AS n, SUM(id) AS s FROM ${table}`);
        polls++;
        const n = Number(r!.n);
        const file = whole.get(String(r!.s));
        assert.equal(n, size.rows, `poll ${polls}: a reader saw ${n} rows`);
        assert.notEqual(file, undefined, `poll ${polls}: a reader saw a sum (${r!.s}) of no single whole file`);
        seen.set(file!, (seen.get(file!) ?? 0) + 1);
      }
    })();
    for (const [i, f] of files.entries()) {
      await drop(dir, `f${String(i + 1).padStart(3, '0')}.csv`, f.text);
      await waitFor(() => handle.stats.filesIngested + handle.stats.filesFailed === i + 2, `file ${i + 1}`, 60000);
    }
    polling = false;
    await reader;
    assert.equal(handle.stats.filesFailed, 0, JSON.stringify(handle.stats.lastError));
    const [last] = await t.pool.query<{ s: string | number }>(`SELECT SUM(id) AS s FROM ${table}`);
    assert.equal(whole.get(String(last!.s)), size.files, 'the last file is the table');
    assert.ok(seen.size >= 3, `the reader saw several files' contents (${seen.size})`);
    console.log(`# ${polls} polls during ${size.files} replaces; states seen: ${seen.size}`);
    await handle.stop();
  });
}
