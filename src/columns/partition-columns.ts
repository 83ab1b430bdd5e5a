/**
 * Partition columns (`partitionColumns`): the `key=value` folders between the watched directory
 * and a file (`date=2026-12-01/region=eu/part-0.parquet`, as Hive, Spark and DuckDB write them)
 * become columns `key` with `value` on every row of the file. A value is typed as CSV inference
 * would type it alone: an ISO date a DATE, an integer a BIGINT (`007` TEXT), anything else TEXT; percent-escapes
 * are decoded as Hive writes them (`%3D`, `%2F`, ...), and `__HIVE_DEFAULT_PARTITION__` (Hive's
 * NULL) is NULL. They are filled like the source columns (source-columns.ts), by each ingester's
 * way of adding constants to a file's rows.
 */
import { err, ok, type Result } from 'neverthrow';
import { ingestError } from '../errors.ts';
import type { IngestError, LogicalType } from '../types.ts';

/** Hive's name for a NULL partition value. */
export const HIVE_NULL = '__HIVE_DEFAULT_PARTITION__';

export interface PartitionValue {
  readonly name: string;
  readonly type: LogicalType;
  /** The value as text; null for NULL. */
  readonly text: string | null;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** No leading zero: as in CSV inference, `007` (an id, a zip code) stays TEXT. */
const INTEGER = /^-?(0|[1-9]\d{0,18})$/;
const INT64_MAX = 2n ** 63n - 1n;

/** DATE for a real calendar date, BIGINT for an integer that fits (no leading zero), else TEXT. */
export function partitionType(text: string | null): LogicalType {
  if (text === null) return { kind: 'text' };
  const date = DATE.exec(text);
  if (date) {
    const [y, m, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
    const day = new Date(Date.UTC(y, m - 1, d));
    if (day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d) return { kind: 'date' };
  }
  if (INTEGER.test(text)) {
    const n = BigInt(text);
    if (n <= INT64_MAX && n >= -INT64_MAX - 1n) return { kind: 'bigint' };
  }
  return { kind: 'text' };
}

/** `%3D` → `=`; a malformed escape is kept as written (Hive writes only well-formed ones). */
function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** Whether a folder's name is `key=value` with a key: one that `partitionValues` takes. */
export function isPartitionFolder(segment: string): boolean {
  return segment.indexOf('=') > 0;
}

/**
 * The partition values of `name` (a path relative to the watched directory, `/`-separated): one
 * per folder, in path order. A folder that is not `key=value`, an empty key, or a key given
 * twice fails the file, with the segment and the fix. `skipFolders`: leading folders that are not
 * partitions (a marker folder, `readyWhen: 'marker'`).
 */
export function partitionValues(name: string, skipFolders = 0): Result<PartitionValue[], IngestError> {
  const segments = name.split('/').slice(skipFolders, -1);
  const values: PartitionValue[] = [];
  const seen = new Set<string>();
  for (const segment of segments) {
    const at = segment.indexOf('=');
    const key = isPartitionFolder(segment) ? decode(segment.slice(0, at)) : '';
    if (key === '') return err(notKeyValue(name, segment));
    if (seen.has(key.toLowerCase())) return err(keyTwice(name, key));
    seen.add(key.toLowerCase());
    const raw = segment.slice(at + 1);
    const text = raw === HIVE_NULL ? null : decode(raw);
    values.push({ name: key, type: partitionType(text), text });
  }
  return ok(values);
}

function notKeyValue(name: string, segment: string): IngestError {
  return ingestError(
    'data',
    'PARTITION_NOT_KEY_VALUE',
    `${name}: folder "${segment}" is not a partition folder key=value, and partitionColumns is on; nothing was loaded`,
    'Put the file in key=value folders only (date=2026-12-01/region=eu/part-0.parquet), or watch the folder above the ' +
      'partitions (the one holding date=...), or turn partitionColumns off (drop --partition-columns); then drop the file again.',
    { file: name },
  );
}

function keyTwice(name: string, key: string): IngestError {
  return ingestError(
    'data',
    'PARTITION_KEY_TWICE',
    `${name}: partition key "${key}" is given by two of its folders; nothing was loaded`,
    'Give each key once on the path (date=2026-12-01/region=eu/...), then drop the file again.',
    { file: name, column: key },
  );
}
