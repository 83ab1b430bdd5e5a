/**
 * The RLE / bit-packed hybrid runs of Parquet pages, read run by run without decoding values:
 * levels (every one at most the column's maximum, one for each value of the page) and
 * RLE-encoded booleans (as many as the page's non-NULL values).
 */
import type { IngestFailure } from '../../src/errors.ts';

type Fail = (what: string, cause?: unknown) => IngestFailure;

/** A run's header (a ULEB128 varint of at most 5 bytes) at `at`, and where the run begins; undefined when it is cut off. */
function runHeader(bytes: Uint8Array, at: number): [number, number] | undefined {
  let header = 0;
  for (let k = 0; k < 5 && at < bytes.length; k++) {
    const byte = bytes[at++]!;
    header += (byte & 0x7f) * 2 ** (7 * k);
    if (!(byte & 0x80)) return [header, at];
  }
  return undefined;
}

/**
 * Every value of an RLE / bit-packed hybrid run of levels at most `max`. With `countZeros`, returns
 * how many levels are 0 (repetition levels: the rows that begin in the page).
 */
export function levelRuns(bytes: Uint8Array, max: number, what: string, fail: Fail, count: number, countZeros = false): number {
  if (max === 0) return count;
  const width = 32 - Math.clz32(max);
  const powerOfTwo = ((max + 1) & max) === 0;
  let at = 0;
  let levels = 0;
  let zeros = 0;
  while (at < bytes.length) {
    const read = runHeader(bytes, at);
    if (read === undefined) throw fail(`has ${what} levels that end inside a run header`);
    const [header, next] = read;
    at = next;
    if (header % 2 === 1) {
      const length = Math.floor(header / 2) * width;
      if (at + length > bytes.length) throw fail(`has ${what} levels that end inside a bit-packed run`);
      if (!powerOfTwo || countZeros) {
        for (let bit = 0; bit + width <= length * 8 && at + (bit >> 3) < bytes.length; bit += width) {
          let value = 0;
          for (let b = 0; b < width; b++) value |= ((bytes[at + ((bit + b) >> 3)]! >> ((bit + b) & 7)) & 1) << b;
          if (value > max) throw fail(`has a ${what} level of ${value}, above the column's ${max}`);
          // Past the page's values, the last group's padding.
          if (value === 0 && levels + bit / width < count) zeros++;
        }
      }
      at += length;
      levels += Math.floor(header / 2) * 8;
    } else {
      levels += Math.floor(header / 2);
      let value = 0;
      const valueBytes = (width + 7) >> 3;
      if (at + valueBytes > bytes.length) throw fail(`has ${what} levels that end inside a run`);
      for (let b = 0; b < valueBytes && at < bytes.length; b++) value |= bytes[at++]! << (8 * b);
      if (value > max) throw fail(`has a ${what} level of ${value}, above the column's ${max}`);
      if (value === 0) zeros += Math.max(0, Math.min(Math.floor(header / 2), count - (levels - Math.floor(header / 2))));
    }
  }
  // Every value of the page has its level (Arrow C++, arrow-rs and DuckDB refuse fewer).
  if (levels < count) throw fail(`has ${what} levels for ${levels} of its ${count} values`);
  return zeros;
}

/** The boolean values `runs` hold (1 bit wide), counted up to `defined`. */
export function booleanRunValues(runs: Uint8Array, defined: number, fail: Fail): number {
  let at = 0;
  let count = 0;
  while (at < runs.length && count < defined) {
    const read = runHeader(runs, at);
    if (read === undefined) throw fail('has boolean values that end inside a run header');
    const [run, next] = read;
    at = next;
    if (run % 2 === 1) {
      const groups = Math.floor(run / 2);
      // A bit-packed run's last group may be cut where the values end.
      const bytes = Math.min(groups, runs.length - at);
      count += Math.min(groups * 8, bytes * 8);
      at += bytes;
    } else {
      if (at >= runs.length) throw fail('has boolean values that end inside a run');
      count += Math.floor(run / 2);
      at++;
    }
  }
  return count;
}
