/**
 * Throughput of the CSV quote check (plugins/csv/quote-check.ts) beside the UTF-8 check it shares
 * a read with, on 1,000,000 rows in memory fed in the check's read chunks (4 MiB), three shapes:
 *
 *   node --import tsx bench/csv-quote-check.ts [--rows 1000000] [--runs 5]
 *
 * - plain: no quotes (the bench's CSV: numbers, timestamps, short words);
 * - one quoted field a row (a text field holding the delimiter);
 * - every field quoted, quotes doubled inside one (the worst case: walked byte by byte).
 * Prints the median of the runs and MB/s (10^6 bytes per second of input).
 */
import process from 'node:process';
import { parseArgs } from 'node:util';
import { QuoteCheck } from '../plugins/csv/quote-check.ts';
import { CHECK_CHUNK_BYTES, isUtf8 } from '../plugins/csv/utf8-check.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '5' } } });
const rows = Number(values.rows);
const runs = Number(values.runs);

const shapes: Record<string, (i: number) => string> = {
  plain: (i) => `${i},2024-01-01 00:00:${i % 60},cat${i % 7},${i * 1.5},${i % 100},note number ${i}`,
  'one quoted field a row': (i) => `${i},2024-01-01 00:00:${i % 60},cat${i % 7},${i * 1.5},${i % 100},"note, number ${i}"`,
  'every field quoted': (i) => `"${i}","2024-01-01 00:00:${i % 60}","cat${i % 7}","${i * 1.5}","${i % 100}","note ""number"" ${i}"`,
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const [name, row] of Object.entries(shapes)) {
  const bytes = new TextEncoder().encode(`id,ts,category,amount,qty,note\n${Array.from({ length: rows }, (_, i) => row(i)).join('\n')}\n`);
  const quotes: number[] = [];
  const utf8: number[] = [];
  for (let r = 0; r < runs; r++) {
    let t = performance.now();
    const check = new QuoteCheck({ delimiter: ',', quote: '"', escape: '"', skipLines: 0 });
    for (let i = 0; i < bytes.length; i += CHECK_CHUNK_BYTES) check.feed(bytes.subarray(i, i + CHECK_CHUNK_BYTES));
    if (check.problem) throw new Error(`${name}: ${JSON.stringify(check.problem)}`);
    quotes.push(performance.now() - t);
    t = performance.now();
    for (let i = 0; i < bytes.length; i += CHECK_CHUNK_BYTES) isUtf8(bytes.subarray(i, i + CHECK_CHUNK_BYTES));
    utf8.push(performance.now() - t);
  }
  const ms = median(quotes);
  const mb = bytes.length / 1e6;
  const rate = (mb / (ms / 1000)).toFixed(0);
  process.stdout.write(
    `${name}: ${mb.toFixed(1)} MB, quote check ${ms.toFixed(1)} ms (${rate} MB/s), UTF-8 check ${median(utf8).toFixed(1)} ms\n`,
  );
}
