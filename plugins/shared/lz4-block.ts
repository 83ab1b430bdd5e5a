/**
 * One LZ4 block (the raw block format: Parquet's LZ4_RAW pages, the blocks inside LZ4 frames and
 * Hadoop's framing), decoded with every length and match offset checked against its input and its
 * output: a damaged block fails instead of writing past its output or reading before its start.
 */
/** One LZ4 block from `input[start, end)` into `out` at `o`; matches may reach back to `floor`. */
export function lz4Block(
  input: Uint8Array,
  start: number,
  end: number,
  out: Uint8Array,
  o: number,
  floor: number,
  bad: (why: string) => Error,
): number {
  let i = start;
  while (i < end) {
    const token = input[i++]!;
    let literals = token >> 4;
    if (literals === 15) {
      let b: number;
      do {
        if (i >= end) throw bad('has a block that ends inside a length');
        b = input[i++]!;
        literals += b;
      } while (b === 255);
    }
    if (i + literals > end) throw bad('has literals past the end of its block');
    if (o + literals > out.length) throw bad(`holds more than the ${out.length} bytes announced`);
    out.set(input.subarray(i, i + literals), o);
    i += literals;
    o += literals;
    if (i === end) break;
    if (i + 2 > end) throw bad('has a block that ends inside a match');
    const offset = input[i]! | (input[i + 1]! << 8);
    i += 2;
    if (offset === 0 || o - offset < floor) throw bad(`has a match offset (${offset}) before the start of its data`);
    let match = (token & 15) + 4;
    if ((token & 15) === 15) {
      let b: number;
      do {
        if (i >= end) throw bad('has a block that ends inside a length');
        b = input[i++]!;
        match += b;
      } while (b === 255);
    }
    if (o + match > out.length) throw bad(`holds more than the ${out.length} bytes announced`);
    // Byte by byte: a match may overlap the bytes it is writing (a run).
    for (let from = o - offset, k = 0; k < match; k++) out[o++] = out[from + k]!;
  }
  return o;
}
