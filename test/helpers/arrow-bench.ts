/**
 * Arrow test data and the Arrow ingester on a real hyperd, shared by the Arrow test files: column
 * builders, a small table of four columns with the rows Hyper gives back for it, and a ZSTD
 * frame writer that needs no compressor.
 */
import assert from 'node:assert/strict';
import {
  Decimal,
  Float64,
  Int32,
  makeData,
  makeVector,
  Table,
  TimestampMillisecond,
  Utf8,
  vectorFromArray,
  type DataType,
  type Vector,
} from 'apache-arrow';
import { arrowIngester } from '../../plugins/arrow/index.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import type { Logger } from '../../src/types.ts';
import { columnTypes, type PluginBench, type PluginTarget, usePluginBench } from './plugin-bench.ts';

/** Quiet unless ARROW_TEST_LOG is set: the ingester's warnings, printed then. */
export const quiet: Logger = {
  debug() {},
  info() {},
  warn: (m) => {
    if (process.env.ARROW_TEST_LOG) console.log('WARN', m);
  },
  error() {},
};

/** A column of test data: an Arrow vector, nullable unless said otherwise. */
export function col(values: readonly unknown[], type: DataType): Vector {
  return vectorFromArray(values, type);
}

/** A decimal column from its 32-bit words (little-endian two's complement); `nulls` marks null rows. */
export function decimalVector(words: readonly number[], precision: number, scale: number, nulls: readonly number[] = []): Vector {
  const length = words.length / 4;
  const bitmap = new Uint8Array((length + 7) >> 3);
  for (let i = 0; i < length; i++) if (!nulls.includes(i)) bitmap[i >> 3]! |= 1 << (i & 7);
  return makeVector(
    makeData({
      type: new Decimal(scale, precision, 128),
      length,
      nullCount: nulls.length,
      nullBitmap: bitmap,
      data: new Uint32Array(words),
    }),
  );
}

export function table(columns: Record<string, Vector>): Table {
  return new Table(columns);
}

export const basic = (): Table =>
  table({
    id: col([1, 2, 3], new Int32()),
    name: col(['alpha', 'b,"c"\nd', null], new Utf8()),
    score: col([1.5, null, -2.25], new Float64()),
    at: col([new Date(Date.UTC(2024, 1, 29, 12, 0, 0)), null, new Date(0)], new TimestampMillisecond()),
  });

export const expectedBasic = [
  { id: '1', name: 'alpha', score: '1.5', at: '2024-02-29 12:00:00' },
  { id: '2', name: 'b,"c"\nd', score: null, at: null },
  { id: '3', name: null, score: '-2.25', at: '1970-01-01 00:00:00' },
];

/** `data` as a ZSTD frame of raw (stored) blocks: valid ZSTD without a compressor. */
export function zstdRawFrame(data: Uint8Array): Uint8Array {
  const header = [
    0x28,
    0xb5,
    0x2f,
    0xfd,
    0xa0,
    data.length & 0xff,
    (data.length >> 8) & 0xff,
    (data.length >> 16) & 0xff,
    (data.length >>> 24) & 0xff,
  ];
  const parts: Uint8Array[] = [Uint8Array.from(header)];
  let at = 0;
  do {
    const n = Math.min(131072, data.length - at);
    const block = (n << 3) | (at + n >= data.length ? 1 : 0);
    parts.push(Uint8Array.of(block & 0xff, (block >> 8) & 0xff, (block >> 16) & 0xff), data.subarray(at, at + n));
    at += n;
  } while (at < data.length);
  return concatBytes(parts);
}

export interface ArrowBench {
  readonly bench: PluginBench;
  /** The table's columns as name → SQL type, or null when there is no such table. */
  tableColumns(target: PluginTarget, name: string): Promise<Record<string, string> | null>;
  /** Every column as text, rows ordered by the first column. */
  rowsOf(target: PluginTarget, name: string): Promise<Record<string, string | null>[]>;
}

/** The Arrow ingester on a hyperd database of the enclosing `describe`. */
export function useArrowBench(): ArrowBench {
  // The Arrow ingester asks for one retry at most (as CSV, when Hyper refuses the Arrow data).
  const bench = usePluginBench(arrowIngester, { maxAttempts: 5, logger: quiet });

  return {
    bench,
    tableColumns: (target, name) => columnTypes(target.pool, name),
    async rowsOf(target, name) {
      const columns = await target.pool.transaction((conn) => conn.describeTable({ name }));
      assert.ok(columns, `table ${name} exists`);
      const list = columns.map((c) => `"${c.name}"::text AS "${c.name}"`).join(', ');
      const rows = await target.pool.query<Record<string, string | null>>(`SELECT ${list} FROM "${name}" ORDER BY 1`);
      return rows.map((row) => ({ ...row }));
    },
  };
}
