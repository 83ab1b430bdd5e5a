/**
 * The Arrow ingester loading IPC files into a real hyperd: the file and stream formats under each
 * extension, several record batches with dictionaries, ZSTD body compression, and 1M rows in many
 * batches on each path (passed through, re-encoded, CSV).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  compressionRegistry,
  CompressionType,
  Int64,
  makeData,
  makeVector,
  type RecordBatch,
  RecordBatchStreamWriter,
  Table,
  tableToIPC,
  TimestampMicrosecond,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { count } from '../../helpers/env.ts';
import { basic, col, expectedBasic, table, useArrowBench, zstdRawFrame } from '../../helpers/arrow-bench.ts';

describe('arrow ingester', () => {
  const { bench, tableColumns, rowsOf } = useArrowBench();

  it('loads the file format and the stream format, under each extension', async () => {
    const file = await bench.claim('basic.arrow', tableToIPC(basic(), 'file'));
    assert.deepEqual(await bench.ingest(file, 'fmt_file'), { rows: 3, attempts: 1 });
    assert.deepEqual(await rowsOf(bench, 'fmt_file'), expectedBasic);
    assert.deepEqual(await tableColumns(bench, 'fmt_file'), { id: 'integer', name: 'text', score: 'double precision', at: 'timestamp' });

    const stream = await bench.claim('basic.ipc', tableToIPC(basic(), 'stream'));
    assert.deepEqual(await bench.ingest(stream, 'fmt_stream'), { rows: 3, attempts: 1 });
    assert.deepEqual(await rowsOf(bench, 'fmt_stream'), expectedBasic);

    const feather = await bench.claim('basic.feather', tableToIPC(basic(), 'file'));
    assert.deepEqual(await bench.ingest(feather, 'fmt_stream'), { rows: 3, attempts: 1 });
    assert.equal(await count(bench.pool, 'fmt_stream'), 6);
  });

  it('loads a file with several record batches and dictionaries, in both formats', async () => {
    // One dictionary for the whole column, cut into three record batches.
    const whole = table({ id: col([0n, 1n, 2n, 3n, 4n, 5n], new Int64()), tag: vectorFromArray(['t0', null, 't1', null, 't2', null]) })
      .batches[0]!;
    const multi = new Table([whole.slice(0, 2), whole.slice(2, 4), whole.slice(4, 6)]);
    for (const format of ['file', 'stream'] as const) {
      const file = await bench.claim(`multi-${format}.arrow`, tableToIPC(multi, format));
      assert.deepEqual(await bench.ingest(file, `multi_${format}`), { rows: 6, attempts: 1 });
      const rows = await rowsOf(bench, `multi_${format}`);
      assert.deepEqual(
        rows.map((r) => r.tag),
        ['t0', null, 't1', null, 't2', null],
      );
    }
  });

  it('loads record batches with ZSTD body compression (decompressed here; Hyper reads none)', async () => {
    // A codec that only encodes (ZSTD frames of raw blocks are valid ZSTD): enough to write the
    // file; the conformance suite covers files from real compressors.
    compressionRegistry.set(CompressionType.ZSTD, { encode: zstdRawFrame });
    let bytes: Uint8Array;
    try {
      bytes = RecordBatchStreamWriter.writeAll(basic(), { compressionType: CompressionType.ZSTD }).toUint8Array(true);
    } finally {
      compressionRegistry.set(CompressionType.ZSTD, {});
    }
    for (const csv of [false, true]) {
      const outcome = await bench.ingest(await bench.claim(`compressed-${csv}.arrow`, bytes), `compressed_${csv}`, { remote: csv });
      assert.deepEqual(outcome, { rows: 3, attempts: 1 });
      assert.deepEqual(await rowsOf(bench, `compressed_${csv}`), expectedBasic);
    }
  });

  it('loads 1M rows in many batches with an exact count (time and peak RSS logged)', async () => {
    const rows = 1_000_000;
    const perBatch = 65_536;
    const ids = new BigInt64Array(rows);
    const values = new Float64Array(rows);
    const names: string[] = new Array<string>(rows);
    const tags: string[] = new Array<string>(rows);
    const at = new BigInt64Array(rows);
    for (let i = 0; i < rows; i++) {
      ids[i] = BigInt(i);
      values[i] = i / 7;
      names[i] = `name-${i}`;
      tags[i] = `tag-${i % 100}`;
      at[i] = 1_700_000_000_000_000n + BigInt(i) * 1_000n;
    }
    const timestamps = makeVector(makeData({ type: new TimestampMicrosecond(), length: rows, nullCount: 0, data: at }));
    const inBatches = (whole: RecordBatch): Table => {
      const parts: RecordBatch[] = [];
      for (let start = 0; start < rows; start += perBatch) parts.push(whole.slice(start, Math.min(rows, start + perBatch)));
      return new Table(parts);
    };
    const big = inBatches(
      new Table({ id: makeVector(ids), value: makeVector(values), name: vectorFromArray(names, new Utf8()), at: timestamps }).batches[0]!,
    );
    const dictionary = inBatches(
      new Table({ id: makeVector(ids), value: makeVector(values), name: vectorFromArray(tags), at: timestamps }).batches[0]!,
    );
    const batches = big.batches;
    const variants: { label: string; bytes: () => Uint8Array; csv?: boolean }[] = [
      { label: 'stream, pass-through', bytes: () => tableToIPC(big, 'stream') },
      { label: 'file, pass-through', bytes: () => tableToIPC(big, 'file') },
      // The same data with pre-0.15 framing, which Hyper does not read: decoded and re-encoded.
      {
        label: 'legacy-framed stream, re-encoded',
        bytes: () => RecordBatchStreamWriter.writeAll(big, { writeLegacyIpcFormat: true }).toUint8Array(true),
      },
      { label: 'stream, re-encoded (dictionary column)', bytes: () => tableToIPC(dictionary, 'stream') },
      { label: 'file, CSV', bytes: () => tableToIPC(big, 'file'), csv: true },
    ];
    for (const [k, variant] of variants.entries()) {
      const bytes = variant.bytes();
      const file = await bench.claim(`big-${k}.arrow`, bytes);
      const name = `big_${k}`;
      const started = performance.now();
      const outcome = await bench.ingest(file, name, { remote: variant.csv ?? false });
      const ms = performance.now() - started;
      assert.deepEqual(outcome, { rows, attempts: 1 });
      assert.equal(await count(bench.pool, name), rows);
      const sums = await bench.pool.query<{ s: string }>(`SELECT SUM(id)::text AS s FROM ${name}`);
      assert.equal(sums[0]!.s, String((rows * (rows - 1)) / 2));
      console.log(
        `arrow ${variant.label}: ${rows} rows, ${batches.length} batches, ${(bytes.length / 1048576).toFixed(1)} MiB ` +
          `in ${ms.toFixed(0)} ms ` +
          `(${((rows / ms) * 1000).toFixed(0)} rows/s); peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`,
      );
    }
  });
});
