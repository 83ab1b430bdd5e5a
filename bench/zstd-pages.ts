/**
 * Reading ZSTD-compressed Parquet the way the decoded path reads it (hyparquet, every page
 * decompressed and checked), with the page codec of plugins/parquet/codecs.ts (libzstd compiled to
 * WebAssembly) against the JavaScript ZSTD decoder it replaced (hyparquet-compressors'), on the same
 * file written by DuckDB, the two interleaved in one run:
 *
 *   node --import tsx bench/zstd-pages.ts [--rows 2000000] [--runs 7]
 *
 * Prints each run and the median of the per-run ratios (libzstd / JavaScript, time).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { type Compressors, parquetRead } from 'hyparquet';
import { decompressZstd } from 'hyparquet-compressors';
import { strictCompressors } from '../plugins/parquet/codecs.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '2000000' }, runs: { type: 'string', default: '7' } } });
const rows = Number(values.rows);
const runs = Number(values.runs);

const dir = await mkdtemp(join(tmpdir(), 'hyperwatch-zstd-bench-'));
const path = join(dir, 'zstd.parquet');
const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
await conn.run(
  `COPY (SELECT i AS id, 'name ' || (i % 9973) AS name, i * 0.5 AS amount, DATE '2024-01-01' + (i % 365)::INT AS day
     FROM range(${rows}) t(i)) TO '${path}' (FORMAT parquet, COMPRESSION zstd)`,
);
conn.closeSync();
instance.closeSync();
const bytes = await readFile(path);
const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);

/** The JavaScript decoder as the codec used it: whole frame, then the size checked. */
const javascript: Compressors = {
  ...strictCompressors,
  ZSTD: (input: Uint8Array, size: number) => {
    const out = decompressZstd(input);
    if (out.length !== size) throw new Error(`decoded ${out.length} of ${size} bytes`);
    return out;
  },
};

async function read(compressors: Compressors): Promise<number> {
  const started = performance.now();
  let n = 0;
  await parquetRead({ file, compressors, onComplete: (data) => (n = data.length) });
  if (n !== rows) throw new Error(`read ${n} of ${rows} rows`);
  return performance.now() - started;
}

console.log(`${rows} rows, ${(bytes.length / 1e6).toFixed(1)} MB of ZSTD Parquet (DuckDB)`);
await read(strictCompressors); // warm both up
await read(javascript);
const ratios: number[] = [];
for (let r = 0; r < runs; r++) {
  // Alternate which goes first.
  let wasm: number;
  let js: number;
  if (r % 2 === 0) {
    wasm = await read(strictCompressors);
    js = await read(javascript);
  } else {
    js = await read(javascript);
    wasm = await read(strictCompressors);
  }
  ratios.push(wasm / js);
  console.log(`run ${r + 1}: libzstd ${wasm.toFixed(0)} ms, JavaScript ${js.toFixed(0)} ms, ratio ${(wasm / js).toFixed(2)}`);
}
ratios.sort((a, b) => a - b);
console.log(`median ratio libzstd / JavaScript: ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)} (below 1: libzstd faster)`);
await rm(dir, { recursive: true, force: true });
