/**
 * `rows` rows of (id BIGINT, ts TIMESTAMP, name TEXT, amount DOUBLE) as one apache-arrow record
 * batch: the Arrow file the side-by-side scripts (arrow-check-pass.ts, format-server-read.ts) load.
 */
import { Float64, Int64, Table, TimestampMicrosecond, Utf8, vectorFromArray } from 'apache-arrow';

export function arrowRows(rows: number): Table {
  const ids = Array.from({ length: rows }, (_, i) => BigInt(i));
  return new Table({
    id: vectorFromArray(ids, new Int64()),
    ts: vectorFromArray(
      ids.map((i) => 1_700_000_000_000 + Number(i) * 1000),
      new TimestampMicrosecond(),
    ),
    name: vectorFromArray(
      ids.map((i) => `name-${i % 1000n}`),
      new Utf8(),
    ),
    amount: vectorFromArray(
      ids.map((i) => Number(i) * 0.25),
      new Float64(),
    ),
  });
}
