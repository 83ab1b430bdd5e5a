/**
 * The mutations: what goes wrong with files on the way (a bad disk or link, a cut upload, a
 * writer's bug), in the style of AFL's: bit flips, interesting bytes and integers (at random
 * offsets and inside a format's metadata: the Parquet footer, Arrow's schema and footer, a CSV
 * header), truncation, deleted and duplicated blocks, splices of two files, invalid UTF-8, deep
 * nesting and huge fields. Each mutant says what was done to it, for the report.
 */
import type { Rng } from './rng.ts';

export type Format = 'parquet' | 'arrow' | 'csv' | 'json';

export interface Seed {
  /** `duckdb-snappy.parquet`: the writer, what it wrote, and the extension the file is dropped with. */
  readonly name: string;
  readonly format: Format;
  readonly bytes: Uint8Array;
}

export interface Mutant {
  readonly bytes: Uint8Array;
  /** What was done, in order: `bitflip@1234 x3; truncate@5000`. */
  readonly how: string;
}

const INTERESTING_8 = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x10, 0x20, 0x40];
const INTERESTING_32 = [
  0, 1, -1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffffff, -0x80000000, 0xfffffff, 1024, 4096, 65536,
];
const INTERESTING_64 = [0n, 1n, -1n, 0x7fffffffn, 0xffffffffn, 1n << 40n, (1n << 63n) - 1n, -(1n << 63n)];
/** Bytes that are not UTF-8: a lone continuation, a truncated sequence, an overlong form, a surrogate, 0xFF. */
const INVALID_UTF8 = [[0x80], [0xc3], [0xc3, 0x28], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff], [0xf8, 0x88, 0x80, 0x80, 0x80]];

/** A message's body length, read from its flatbuffer (the Message table's field 3), or undefined. */
function messageBodyLength(metadata: Uint8Array): number | undefined {
  try {
    const view = new DataView(metadata.buffer, metadata.byteOffset, metadata.byteLength);
    const table = view.getUint32(0, true);
    const vtable = table - view.getInt32(table, true);
    const vsize = view.getUint16(vtable, true);
    const entry = 4 + 2 * 3;
    const field = entry + 2 <= vsize ? view.getUint16(vtable + entry, true) : 0;
    return field === 0 ? 0 : Number(view.getBigInt64(table + field, true));
  } catch {
    return undefined;
  }
}

/** Where a format keeps what says how to read the rest (its metadata), as [start, end) ranges. */
export function metadataRegions(seed: Seed): [number, number][] {
  const b = seed.bytes;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const size = b.length;
  const regions: [number, number][] = [];
  const add = (start: number, end: number) => {
    if (start >= 0 && end <= size && end > start) regions.push([start, end]);
  };
  switch (seed.format) {
    case 'parquet': {
      if (size < 12) break;
      const length = view.getUint32(size - 8, true);
      add(size - 8 - length, size - 8);
      add(4, Math.min(size, 4 + 64));
      break;
    }
    case 'arrow': {
      const isFile = size > 16 && String.fromCharCode(...b.subarray(0, 6)) === 'ARROW1';
      if (isFile) {
        const length = view.getInt32(size - 10, true);
        add(size - 10 - length, size - 10);
      }
      // Every message's metadata (the schema, each batch's nodes and buffers), walking the framing.
      let at = isFile ? 8 : 0;
      for (let k = 0; k < 64 && at + 8 <= size; k++) {
        const length = view.getInt32(at + 4, true);
        if (view.getInt32(at, true) !== -1 || length <= 0 || at + 8 + length > size) break;
        add(at + 8, at + 8 + length);
        const body = messageBodyLength(b.subarray(at + 8, at + 8 + length));
        if (body === undefined) break;
        at += 8 + length + body;
      }
      break;
    }
    case 'csv': {
      const newline = b.indexOf(0x0a);
      add(0, newline === -1 ? size : newline);
      break;
    }
    case 'json':
      add(0, Math.min(size, 200));
      break;
  }
  return regions;
}

function offsetIn(rng: Rng, seed: Seed, bytes: Uint8Array, width: number): { at: number; where: string } {
  const regions = metadataRegions(seed).filter(([s, e]) => e - s >= width && e <= bytes.length);
  if (regions.length > 0 && rng.chance(0.5)) {
    const [start, end] = rng.pick(regions);
    return { at: rng.between(start, end - width), where: 'meta' };
  }
  return { at: rng.int(Math.max(1, bytes.length - width + 1)), where: '' };
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

type Mutation = (rng: Rng, seed: Seed, bytes: Uint8Array, others: readonly Seed[]) => { bytes: Uint8Array; how: string };

const MUTATIONS: Record<string, Mutation> = {
  bitflip(rng, seed, bytes) {
    const out = bytes.slice();
    const n = rng.pick([1, 1, 1, 2, 4]);
    const { at, where } = offsetIn(rng, seed, out, 1);
    for (let k = 0; k < n; k++) {
      const i = Math.min(out.length - 1, at + rng.int(4));
      out[i]! ^= 1 << rng.int(8);
    }
    return { bytes: out, how: `bitflip${where}@${at} x${n}` };
  },
  byte(rng, seed, bytes) {
    const out = bytes.slice();
    const { at, where } = offsetIn(rng, seed, out, 1);
    const value = rng.pick(INTERESTING_8);
    out[at] = value;
    return { bytes: out, how: `byte${where}@${at}=${value}` };
  },
  int(rng, seed, bytes) {
    const out = bytes.slice();
    const width = rng.pick([2, 4, 8]);
    if (out.length < width) return { bytes: out, how: 'int (too short)' };
    const { at, where } = offsetIn(rng, seed, out, width);
    const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
    const little = rng.chance(0.75);
    if (width === 8) {
      const value = rng.pick(INTERESTING_64);
      view.setBigInt64(at, value, little);
      return { bytes: out, how: `int64${where}@${at}=${value}${little ? '' : ' BE'}` };
    }
    const value = rng.pick(INTERESTING_32);
    if (width === 4) view.setInt32(at, value | 0, little);
    else view.setInt16(at, value & 0xffff, little);
    return { bytes: out, how: `int${width * 8}${where}@${at}=${value}${little ? '' : ' BE'}` };
  },
  truncate(rng, _seed, bytes) {
    const at = rng.int(bytes.length);
    return { bytes: bytes.slice(0, at), how: `truncate@${at}` };
  },
  delete(rng, _seed, bytes) {
    const at = rng.int(bytes.length);
    const length = Math.min(bytes.length - at, rng.between(1, Math.max(1, bytes.length >> 4)));
    return { bytes: concat(bytes.subarray(0, at), bytes.subarray(at + length)), how: `delete@${at}+${length}` };
  },
  duplicate(rng, _seed, bytes) {
    const at = rng.int(bytes.length);
    const length = Math.min(bytes.length - at, rng.between(1, Math.max(1, bytes.length >> 4)));
    const to = rng.int(bytes.length + 1);
    return {
      bytes: concat(bytes.subarray(0, to), bytes.subarray(at, at + length), bytes.subarray(to)),
      how: `duplicate@${at}+${length}->${to}`,
    };
  },
  splice(rng, seed, bytes, others) {
    const same = others.filter((o) => o.format === seed.format && o !== seed);
    if (same.length === 0) return MUTATIONS.delete!(rng, seed, bytes, others);
    const other = rng.pick(same);
    const cut = rng.int(bytes.length);
    const from = rng.int(other.bytes.length);
    return { bytes: concat(bytes.subarray(0, cut), other.bytes.subarray(from)), how: `splice@${cut} ${other.name}@${from}` };
  },
  utf8(rng, seed, bytes) {
    const bad = Uint8Array.from(rng.pick(INVALID_UTF8));
    const { at, where } = offsetIn(rng, seed, bytes, bad.length);
    const out = bytes.slice();
    if (rng.chance(0.5)) {
      out.set(bad.subarray(0, Math.min(bad.length, out.length - at)), at);
      return { bytes: out, how: `utf8${where}@${at}=${Array.from(bad, (b) => b.toString(16)).join(' ')}` };
    }
    return { bytes: concat(bytes.subarray(0, at), bad, bytes.subarray(at)), how: `utf8-insert${where}@${at}` };
  },
  nest(rng, seed, bytes) {
    // Text formats: a value nested past any reader's limit (JSON), or a run of brackets.
    const depth = rng.pick([1001, 1500, 10_000, 100_000]);
    const text = new TextDecoder().decode(bytes);
    if (seed.format === 'json') {
      const match = /:\s*("[^"]*"|-?\d[\d.eE+-]*|true|false|null)/g;
      const found = [...text.matchAll(match)];
      if (found.length > 0) {
        const m = rng.pick(found);
        const value = `${'['.repeat(depth)}1${']'.repeat(depth)}`;
        const at = m.index! + m[0].indexOf(m[1]!);
        return { bytes: new TextEncoder().encode(text.slice(0, at) + value + text.slice(at + m[1]!.length)), how: `nest@${at} x${depth}` };
      }
    }
    const at = rng.int(bytes.length + 1);
    return {
      bytes: concat(bytes.subarray(0, at), new TextEncoder().encode('['.repeat(depth)), bytes.subarray(at)),
      how: `brackets@${at} x${depth}`,
    };
  },
  huge(rng, _seed, bytes) {
    const length = rng.pick([1 << 16, 1 << 20, 8 << 20]);
    const fill = rng.pick([0x41, 0x22, 0x00, 0xff, 0x2c]);
    const at = rng.int(bytes.length + 1);
    return {
      bytes: concat(bytes.subarray(0, at), new Uint8Array(length).fill(fill), bytes.subarray(at)),
      how: `huge@${at} ${length}x${fill.toString(16)}`,
    };
  },
};

/** How often each mutation is picked (bit-level ones most, as AFL's havoc stage does). */
const WEIGHTS: [string, number][] = [
  ['bitflip', 6],
  ['byte', 4],
  ['int', 5],
  ['truncate', 2],
  ['delete', 2],
  ['duplicate', 2],
  ['splice', 2],
  ['utf8', 2],
  ['nest', 1],
  ['huge', 1],
];
const TOTAL = WEIGHTS.reduce((n, [, w]) => n + w, 0);

function pickMutation(rng: Rng, format: Format): string {
  for (;;) {
    let r = rng.int(TOTAL);
    for (const [name, weight] of WEIGHTS) {
      if (r < weight) {
        // Nesting means something only in text.
        if (name === 'nest' && format !== 'json' && format !== 'csv') break;
        return name;
      }
      r -= weight;
    }
  }
}

/** One mutant of `seed`: one to three mutations, stacked. */
export function mutate(rng: Rng, seed: Seed, others: readonly Seed[]): Mutant {
  let bytes = seed.bytes;
  const steps: string[] = [];
  const n = rng.chance(0.7) ? 1 : rng.between(2, 3);
  for (let k = 0; k < n && bytes.length > 0; k++) {
    const step = MUTATIONS[pickMutation(rng, seed.format)]!(rng, seed, bytes, others);
    bytes = step.bytes;
    steps.push(step.how);
  }
  return { bytes, how: steps.join('; ') };
}
