/**
 * `take`: a column's rows picked by index (-1 for NULL) into a new column of the same type, values
 * copied (Utf8View and BinaryView into Utf8 and Binary). What expanding list views and run-end
 * encoded columns needs (expand.ts), for every type a table column can take; a union is refused
 * before any batch is read (it has no column type).
 */
import { Binary, BufferType, Data, DataType, Field, LargeList, List, makeData, makeVector, Struct, Utf8 } from 'apache-arrow';
import { buildVarBinary } from './columns.ts';
import { IpcProblem } from './problem.ts';

type Typed = {
  readonly length: number;
  subarray(a: number, b: number): Typed;
  set(v: Typed, at: number): void;
  readonly constructor: new (n: number) => Typed;
};

const encoder = new TextEncoder();

function validityOf(data: Data, rows: ArrayLike<number>): { nullBitmap: Uint8Array; nullCount: number } {
  const bitmap = new Uint8Array((rows.length + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < rows.length; i++) {
    const k = rows[i]!;
    if (k >= 0 && data.getValid(k)) bitmap[i >> 3]! |= 1 << (i & 7);
    else nullCount++;
  }
  return { nullBitmap: bitmap, nullCount };
}

/** The child rows of list rows `rows` (each the range its offsets give), and the new offsets. */
function listRanges(data: Data, rows: ArrayLike<number>, large: boolean): { childRows: Int32Array; offsets: Int32Array | BigInt64Array } {
  const source = data.valueOffsets as ArrayLike<number | bigint>;
  const offsets = large ? new BigInt64Array(rows.length + 1) : new Int32Array(rows.length + 1);
  let total = 0;
  const starts: number[] = [];
  for (let i = 0; i < rows.length; i++) {
    const k = rows[i]!;
    const valid = k >= 0 && data.getValid(k);
    const start = valid ? Number(source[k]) : 0;
    const size = valid ? Number(source[k + 1]) - start : 0;
    starts.push(start, size);
    total += size;
    if (total > 0x7fffffff)
      throw new IpcProblem('ARROW_BATCH_TOO_LARGE', 'an expanded list column holds more than 2^31 values in one record batch');
    offsets[i + 1] = (large ? BigInt(total) : total) as never;
  }
  const childRows = new Int32Array(total);
  let at = 0;
  for (let i = 0; i < starts.length; i += 2) for (let j = 0; j < starts[i + 1]!; j++) childRows[at++] = starts[i]! + j;
  return { childRows, offsets };
}

/** Rows `rows` of `data` (-1: NULL), as a new column starting at row 0. */
export function take(data: Data, rows: ArrayLike<number>): Data {
  const type: DataType = data.type;
  const n = rows.length;
  if (data.offset !== 0 && data.children.length > 0)
    throw new IpcProblem('ARROW_UNSUPPORTED', 'a sliced nested column inside a list view or run-end encoded column');
  if (DataType.isNull(type)) return makeData({ type, length: n, nullCount: n });
  const bits = validityOf(data, rows);
  if (DataType.isBool(type)) {
    const values = data.values as Uint8Array;
    const out = new Uint8Array((n + 7) >> 3);
    for (let i = 0; i < n; i++) {
      const k = rows[i]!;
      if (k < 0) continue;
      const bit = data.offset + k;
      if ((values[bit >> 3]! >> (bit & 7)) & 1) out[i >> 3]! |= 1 << (i & 7);
    }
    return makeData({ type, length: n, ...bits, data: out });
  }
  if (DataType.isUtf8(type) || DataType.isLargeUtf8(type) || DataType.isBinary(type) || DataType.isLargeBinary(type)) {
    const offsets = data.valueOffsets as ArrayLike<number | bigint>;
    const bytes = data.values as Uint8Array;
    const target = DataType.isUtf8(type) || DataType.isLargeUtf8(type) ? new Utf8() : new Binary();
    return buildVarBinary(target, n, bits, (i) =>
      rows[i]! >= 0 && data.getValid(rows[i]!) ? bytes.subarray(Number(offsets[rows[i]!]), Number(offsets[rows[i]! + 1])) : null,
    );
  }
  if (DataType.isUtf8View(type) || DataType.isBinaryView(type)) {
    const vector = makeVector(data);
    const text = DataType.isUtf8View(type);
    return buildVarBinary(text ? new Utf8() : new Binary(), n, bits, (i) => {
      const k = rows[i]!;
      if (k < 0 || !data.getValid(k)) return null;
      const value = vector.get(k) as string | Uint8Array;
      return typeof value === 'string' ? encoder.encode(value) : value;
    });
  }
  if (DataType.isDictionary(type))
    return makeData({
      type,
      length: n,
      ...bits,
      data: copyFixed(data.values as unknown as Typed, 1, rows) as never,
      dictionary: data.dictionary!,
    });
  if (DataType.isList(type) || DataType.isLargeList(type) || DataType.isMap(type)) {
    const { childRows, offsets } = listRanges(data, rows, DataType.isLargeList(type));
    const child = take(data.children[0]!, childRows);
    const field = type.children[0]! as Field;
    const rebuilt = DataType.isList(type)
      ? new List(new Field(field.name, child.type, field.nullable))
      : DataType.isLargeList(type)
        ? new LargeList(new Field(field.name, child.type, field.nullable))
        : type;
    return new Data(rebuilt, 0, n, bits.nullCount, { [BufferType.OFFSET]: offsets, [BufferType.VALIDITY]: bits.nullBitmap }, [child]);
  }
  if (DataType.isFixedSizeList(type)) {
    const size = type.listSize;
    const childRows = new Int32Array(n * size);
    for (let i = 0; i < n; i++) for (let j = 0; j < size; j++) childRows[i * size + j] = rows[i]! < 0 ? -1 : rows[i]! * size + j;
    const child = take(data.children[0]!, childRows);
    const field = type.children[0]!;
    const rebuilt = Object.assign(Object.create(Object.getPrototypeOf(type) as object) as DataType, type, {
      children: [new Field(field.name, child.type, field.nullable)],
    });
    return new Data(rebuilt, 0, n, bits.nullCount, { [BufferType.VALIDITY]: bits.nullBitmap }, [child]);
  }
  if (DataType.isStruct(type)) {
    const children = data.children.map((child) => take(child, rows));
    const rebuilt = new Struct(type.children.map((f, k) => new Field(f.name, children[k]!.type, f.nullable)));
    return makeData({ type: rebuilt, length: n, ...bits, children });
  }
  if (DataType.isUnion(type)) throw new IpcProblem('ARROW_UNSUPPORTED_TYPE', 'a union inside a list view or run-end encoded column');
  // Every other type is fixed-width: `stride` elements of `values` per row.
  return makeData({ type, length: n, ...bits, data: copyFixed(data.values as unknown as Typed, data.stride, rows) as never } as never);
}

function copyFixed(values: Typed, stride: number, rows: ArrayLike<number>): Typed {
  const out = new values.constructor(rows.length * stride);
  for (let i = 0; i < rows.length; i++) {
    const k = rows[i]!;
    if (k >= 0) out.set(values.subarray(k * stride, (k + 1) * stride), i * stride);
  }
  return out;
}
