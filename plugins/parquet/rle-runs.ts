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

/** Set bits of each byte value: the levels of 1 in a bit-packed run of a column whose maximum is 1. */
const ONES = Uint8Array.from({ length: 256 }, (_, b) => {
  let n = 0;
  for (let v = b; v; v &= v - 1) n++;
  return n;
});

/**
 * Checks every level of an RLE / bit-packed hybrid run of levels: each at most `max`, one for
 * each of the page's `count` values. With `counted`, returns how many of those levels equal it
 * (repetition level 0: the rows that begin in the page; definition level `max`: its non-NULL
 * values); without, returns 0. The padding past the page's last value is not counted.
 */
export function levelRuns(bytes: Uint8Array, max: number, what: string, fail: Fail, count: number, counted?: number): number {
  if (max === 0) return counted === 0 ? count : 0;
  const width = 32 - Math.clz32(max);
  const powerOfTwo = ((max + 1) & max) === 0;
  let at = 0;
  let levels = 0;
  let matches = 0;
  while (at < bytes.length) {
    const read = runHeader(bytes, at);
    if (read === undefined) throw fail(`has ${what} levels that end inside a run header`);
    const [header, next] = read;
    at = next;
    if (header % 2 === 1) {
      const length = Math.floor(header / 2) * width;
      if (at + length > bytes.length) throw fail(`has ${what} levels that end inside a bit-packed run`);
      const within = Math.max(0, Math.min(Math.floor(header / 2) * 8, count - levels));
      if (width === 1 && counted === 1) {
        // Levels of 0 and 1 only (a nullable flat column): count the set bits, byte by byte.
        const whole = within >> 3;
        for (let k = 0; k < whole; k++) matches += ONES[bytes[at + k]!]!;
        if (within & 7) matches += ONES[bytes[at + whole]! & ((1 << (within & 7)) - 1)]!;
      } else if (!powerOfTwo || counted !== undefined) {
        for (let bit = 0; bit + width <= length * 8; bit += width) {
          let value = 0;
          for (let b = 0; b < width; b++) value |= ((bytes[at + ((bit + b) >> 3)]! >> ((bit + b) & 7)) & 1) << b;
          if (value > max) throw fail(`has a ${what} level of ${value}, above the column's ${max}`);
          // Past the page's values, the last group's padding.
          if (value === counted && bit / width < within) matches++;
        }
      }
      at += length;
      levels += Math.floor(header / 2) * 8;
    } else {
      const run = Math.floor(header / 2);
      let value = 0;
      const valueBytes = (width + 7) >> 3;
      if (at + valueBytes > bytes.length) throw fail(`has ${what} levels that end inside a run`);
      for (let b = 0; b < valueBytes && at < bytes.length; b++) value |= bytes[at++]! << (8 * b);
      if (value > max) throw fail(`has a ${what} level of ${value}, above the column's ${max}`);
      if (value === counted) matches += Math.max(0, Math.min(run, count - levels));
      levels += run;
    }
  }
  // Every value of the page has its level (Arrow C++, arrow-rs and DuckDB refuse fewer).
  if (levels < count) throw fail(`has ${what} levels for ${levels} of its ${count} values`);
  return matches;
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
