/**
 * Throughput of the PostgreSQL adapter's CSV end-of-data guard (`CsvEndMarkerGuard`), alone, on
 * 100 MB of CSV in memory fed in the watcher's read chunks (1 MiB), for three shapes of data:
 *
 *   node --import tsx bench/csv-end-marker.ts [--mb 100] [--runs 5]
 *
 * - plain:  no quotes at all (numbers, dates, short words);
 * - quoted: text fields quoted, about 4 quotes in a 60-byte row;
 * - dense:  every field quoted, a quote every 2 to 4 bytes (the worst case for the scan);
 * each with a `\.` line every ~10 000 rows, so the rewrite path runs too. Prints the best of the
 * runs in MB/s (10^6 bytes per second of input).
 */
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { parseArgs } from 'node:util';
import { CsvEndMarkerGuard } from '../adapters/db/postgres/csv-end-marker.ts';
import { READ_CHUNK } from '../src/protocol/files.ts';

const { values } = parseArgs({ options: { mb: { type: 'string', default: '100' }, runs: { type: 'string', default: '5' } } });
const bytes = Number(values.mb) * 1e6;
const runs = Number(values.runs);

const shapes: Record<string, (i: number) => string> = {
  plain: (i) => `${i},name-${i % 9973},${(i * 1.5).toFixed(1)},2026-01-${String((i % 28) + 1).padStart(2, '0')},ok\n`,
  quoted: (i) => `${i},"name ${i % 9973}","Street ${i % 701}, Town",${(i * 1.5).toFixed(1)},2026-01-01\n`,
  dense: (i) => `"${i % 10}","a","${i % 7}","b","",${i % 3}\n`,
};

function build(row: (i: number) => string): Buffer {
  const parts: string[] = ['h1,h2,h3,h4,h5\n'];
  let size = parts[0]!.length;
  for (let i = 0; size < bytes; i++) {
    const line = i % 10_000 === 5_000 ? '\\.\n' : row(i);
    parts.push(line);
    size += line.length;
  }
  return Buffer.from(parts.join(''));
}

console.log(`runtime: node ${process.versions.node}; chunk ${READ_CHUNK} bytes; best of ${runs} runs`);
console.log('| data | MB | quotes per KB | MB/s | rewritten |');
console.log('|---|---|---|---|---|');
for (const [name, row] of Object.entries(shapes)) {
  const data = build(row);
  const chunks: Buffer[] = [];
  for (let at = 0; at < data.length; at += READ_CHUNK) chunks.push(data.subarray(at, at + READ_CHUNK));
  let quotes = 0;
  for (let at = data.indexOf(0x22); at >= 0; at = data.indexOf(0x22, at + 1)) quotes++;
  let best = Infinity;
  let outBytes = 0;
  for (let run = 0; run < runs; run++) {
    const guard = new CsvEndMarkerGuard();
    let out = 0;
    const started = performance.now();
    for (const chunk of chunks) for (const piece of guard.write(chunk)) out += piece.length;
    for (const piece of guard.end()) out += piece.length;
    best = Math.min(best, performance.now() - started);
    outBytes = out;
  }
  const mbps = data.length / 1e6 / (best / 1000);
  // Every rewrite adds two bytes (the quotes around `\.`).
  console.log(
    `| ${name} | ${(data.length / 1e6).toFixed(0)} | ${((quotes / data.length) * 1000).toFixed(0)} | ${mbps.toFixed(0)} ` +
      `| ${(outBytes - data.length) / 2} |`,
  );
}
