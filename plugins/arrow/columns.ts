/**
 * Low-level column building shared by the Hyper rewrites (wire.ts) and the text forms (format.ts):
 * validity bitmaps, variable-length columns from per-row bytes, and dictionary decoding.
 */
import { Binary, BufferType, Data, DataType, makeBuilder, Utf8 } from 'apache-arrow';

export const MAX_INT32 = 0x7fffffff;

export interface Validity {
  readonly nullBitmap: Uint8Array;
  readonly nullCount: number;
}

/** A fresh validity bitmap starting at row 0; `extra` can null out more rows. */
export function validity(data: Data, extra?: (index: number) => boolean): Validity {
  const bitmap = new Uint8Array((data.length + 7) >> 3);
  let nullCount = 0;
  for (let i = 0; i < data.length; i++) {
    if (data.getValid(i) && (extra === undefined || extra(i))) bitmap[i >> 3]! |= 1 << (i & 7);
    else nullCount++;
  }
  return { nullBitmap: bitmap, nullCount };
}

/** The column's own bitmap when it starts at row 0 (always so for batches read from IPC). */
export function sameValidity(data: Data): Validity {
  if (data.nullCount === 0) return { nullBitmap: new Uint8Array(0), nullCount: 0 };
  return data.offset === 0 && data.nullBitmap && data.nullBitmap.length > 0
    ? { nullBitmap: data.nullBitmap, nullCount: data.nullCount }
    : validity(data);
}

export class BatchTooLarge extends RangeError {
  constructor() {
    super('a record batch holds more than 2 GiB of text or bytes in one column; write smaller record batches');
    this.name = 'BatchTooLarge';
  }
}

/** A Utf8 or Binary column from per-row bytes (`null` rows get no bytes). */
export function buildVarBinary(type: Utf8 | Binary, length: number, bits: Validity, bytesAt: (i: number) => Uint8Array | null): Data {
  const offsets = new Int32Array(length + 1);
  const pieces = new Array<Uint8Array | null>(length);
  let total = 0;
  for (let i = 0; i < length; i++) {
    const piece = bytesAt(i);
    pieces[i] = piece;
    total += piece?.byteLength ?? 0;
    if (total > MAX_INT32) throw new BatchTooLarge();
    offsets[i + 1] = total;
  }
  const values = new Uint8Array(total);
  for (let i = 0; i < length; i++) {
    const piece = pieces[i];
    if (piece) values.set(piece, offsets[i]!);
  }
  return new Data(type, 0, length, bits.nullCount, {
    [BufferType.OFFSET]: offsets,
    [BufferType.DATA]: values,
    [BufferType.VALIDITY]: bits.nullBitmap,
  });
}

const encoder = new TextEncoder();

/** A Utf8 column from per-row strings, nulls where `data` has them. */
export function utf8FromStrings(data: Data, textAt: (i: number) => string): Data {
  return buildVarBinary(new Utf8(), data.length, sameValidity(data), (i) => (data.getValid(i) ? encoder.encode(textAt(i)) : null));
}

type TypedArray =
  | Int8Array
  | Uint8Array
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | Float32Array
  | Float64Array
  | BigInt64Array
  | BigUint64Array;

function isTypedArray(value: unknown): value is TypedArray {
  return ArrayBuffer.isView(value) && !(value instanceof DataView);
}

/**
 * A dictionary-encoded column as plain values: string and binary dictionaries are gathered byte by
 * byte, fixed-width ones value by value, anything else (booleans, nested, several dictionary
 * chunks after deltas) through apache-arrow's builder. A row is null when its index is null or
 * points at a null dictionary entry.
 */
export function decodeDictionary(data: Data): Data {
  const type = data.type;
  if (!DataType.isDictionary(type)) return data;
  const dictionary = data.dictionary;
  if (!dictionary) throw new TypeError('dictionary-encoded column without its dictionary');
  const indices = data.values as ArrayLike<number | bigint>;
  const index = (i: number): number => Number(indices[i]);
  const valueType: DataType = type.dictionary;
  const chunk = dictionary.data.length === 1 ? dictionary.data[0] : undefined;
  if (chunk && chunk.offset === 0) {
    const bits = validity(data, (i) => chunk.getValid(index(i)));
    const valid = (i: number): boolean => data.getValid(i) && chunk.getValid(index(i));
    if (
      DataType.isUtf8(valueType) ||
      DataType.isLargeUtf8(valueType) ||
      DataType.isBinary(valueType) ||
      DataType.isLargeBinary(valueType)
    ) {
      const offsets = chunk.valueOffsets as ArrayLike<number | bigint>;
      const bytes = chunk.values as Uint8Array;
      const target = DataType.isUtf8(valueType) || DataType.isLargeUtf8(valueType) ? new Utf8() : new Binary();
      return buildVarBinary(target, data.length, bits, (i) => {
        if (!valid(i)) return null;
        const k = index(i);
        return bytes.subarray(Number(offsets[k]), Number(offsets[k + 1]));
      });
    }
    const values: unknown = chunk.values;
    if (!DataType.isBool(valueType) && chunk.children.length === 0 && isTypedArray(values)) {
      // Copy each row's value bytes (a value is `stride` elements: decimals are 4 words).
      const width = values.BYTES_PER_ELEMENT * chunk.stride;
      const source = new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
      const out = new Uint8Array(data.length * width);
      for (let i = 0; i < data.length; i++) {
        if (valid(i)) out.set(source.subarray(index(i) * width, (index(i) + 1) * width), i * width);
      }
      const Typed = values.constructor as new (buffer: ArrayBuffer) => TypedArray;
      return new Data(valueType, 0, data.length, bits.nullCount, {
        [BufferType.DATA]: new Typed(out.buffer),
        [BufferType.VALIDITY]: bits.nullBitmap,
      });
    }
  }
  const builder = makeBuilder({ type: valueType, nullValues: [null, undefined] });
  for (let i = 0; i < data.length; i++) builder.append(data.getValid(i) ? dictionary.get(index(i)) : null);
  return builder.finish().flush();
}
