/**
 * Rewrites of Arrow columns into the types Hyper's ARROWSTREAM reader takes (see the table in
 * types.ts): dictionaries decoded, 64-bit offsets narrowed, half floats widened, nanoseconds cut
 * to microseconds, nested values as JSON text. Buffers are reused where the layout allows it
 * (large → regular offsets keep the value bytes; fixed-size binary gets offsets only).
 */
import {
  Binary,
  BufferType,
  Data,
  DataType,
  DateDay,
  DateUnit,
  Decimal,
  Field,
  Float32,
  IntervalMonthDayNano,
  makeData,
  makeVector,
  Precision,
  RecordBatch,
  Schema,
  Struct,
  Timestamp,
  TimeUnit,
  Utf8,
} from 'apache-arrow';
import { uint16ToFloat64 } from 'apache-arrow/util/math';
import { BatchTooLarge, buildVarBinary, decodeDictionary, MAX_INT32, sameValidity, utf8FromStrings } from './columns.ts';
import { formatDecimal, makeFormatter } from './format.ts';
import { IpcProblem } from './problem.ts';
import { isNested } from './types.ts';

/** Hyper's NUMERIC holds at most 38 digits; wider decimals become their text. */
const MAX_DECIMAL_DIGITS = 38;

/** Rewrites one column for Hyper; returns it unchanged when Hyper takes it as it is. */
export function toWire(data: Data): Data {
  const type: DataType = data.type;
  if (DataType.isDictionary(type)) return toWire(decodeDictionary(data));
  if (DataType.isNull(type)) {
    return new Data(new Utf8(), 0, data.length, data.length, {
      [BufferType.OFFSET]: new Int32Array(data.length + 1),
      [BufferType.DATA]: new Uint8Array(0),
      [BufferType.VALIDITY]: new Uint8Array((data.length + 7) >> 3),
    });
  }
  if (DataType.isFloat(type) && type.precision === Precision.HALF) {
    const halves = data.values as Uint16Array;
    const floats = new Float32Array(data.length);
    for (let i = 0; i < data.length; i++) floats[i] = uint16ToFloat64(halves[i]!);
    return makeData({ type: new Float32(), length: data.length, ...sameValidity(data), data: floats });
  }
  if (DataType.isDecimal(type) && type.precision > MAX_DECIMAL_DIGITS) {
    const stride = type.bitWidth / 32;
    const words = data.values as Uint32Array;
    return utf8FromStrings(data, (i) => formatDecimal(words, i * stride, stride, type.scale));
  }
  if (DataType.isDuration(type)) return durationAsInterval(data, type.unit);
  if (DataType.isDecimal(type) && type.bitWidth < 128) {
    const stride = type.bitWidth / 32;
    const words = data.values as Uint32Array;
    const wide = new Uint32Array(data.length * 4);
    for (let i = 0; i < data.length; i++) {
      const top = words[i * stride + stride - 1]!;
      const sign = top & 0x80000000 ? 0xffffffff : 0;
      for (let w = 0; w < 4; w++) wide[i * 4 + w] = w < stride ? words[i * stride + w]! : sign;
    }
    return makeData({ type: new Decimal(type.scale, type.precision, 128), length: data.length, ...sameValidity(data), data: wide });
  }
  if (DataType.isLargeUtf8(type) || DataType.isLargeBinary(type)) {
    // Same value bytes, 32-bit offsets (rebased when the first offset is not 0).
    const large = data.valueOffsets as BigInt64Array;
    const offsets = new Int32Array(data.length + 1);
    const base = large[0] ?? 0n;
    for (let i = 0; i <= data.length; i++) {
      const offset = large[i]! - base;
      if (offset > BigInt(MAX_INT32)) throw new BatchTooLarge();
      offsets[i] = Number(offset);
    }
    const bits = sameValidity(data);
    return new Data(DataType.isLargeUtf8(type) ? new Utf8() : new Binary(), 0, data.length, bits.nullCount, {
      [BufferType.OFFSET]: offsets,
      [BufferType.DATA]: (data.values as Uint8Array).subarray(Number(base)),
      [BufferType.VALIDITY]: bits.nullBitmap,
    });
  }
  if (DataType.isFixedSizeBinary(type)) {
    // Same value bytes; offsets are just multiples of the width.
    const width = type.byteWidth;
    if (data.length * width > MAX_INT32) throw new BatchTooLarge();
    const offsets = new Int32Array(data.length + 1);
    for (let i = 0; i <= data.length; i++) offsets[i] = i * width;
    const bits = sameValidity(data);
    return new Data(new Binary(), 0, data.length, bits.nullCount, {
      [BufferType.OFFSET]: offsets,
      [BufferType.DATA]: (data.values as Uint8Array).subarray(0, data.length * width),
      [BufferType.VALIDITY]: bits.nullBitmap,
    });
  }
  if (DataType.isUtf8View(type)) {
    const vector = makeVector(data);
    return utf8FromStrings(data, (i) => String(vector.get(i)));
  }
  if (DataType.isBinaryView(type)) {
    const vector = makeVector(data);
    return buildVarBinary(new Binary(), data.length, sameValidity(data), (i) => (data.getValid(i) ? (vector.get(i) as Uint8Array) : null));
  }
  if (DataType.isDate(type) && type.unit === DateUnit.MILLISECOND) {
    // Hyper takes only whole days in Date64 ("date in millisecond is not a multiple of 86400000").
    const millis = data.values as ArrayLike<number | bigint>;
    const days = new Int32Array(data.length);
    for (let i = 0; i < data.length; i++) days[i] = Math.floor(Number(millis[i]) / 86_400_000);
    return makeData({ type: new DateDay(), length: data.length, ...sameValidity(data), data: days });
  }
  if (DataType.isTimestamp(type) && type.unit === TimeUnit.NANOSECOND) {
    const nanos = data.values as BigInt64Array;
    const micros = new BigInt64Array(data.length);
    for (let i = 0; i < data.length; i++) {
      const v = nanos[i]!;
      const q = v / 1000n;
      micros[i] = v % 1000n < 0n ? q - 1n : q;
    }
    return makeData({ type: new Timestamp(TimeUnit.MICROSECOND, type.timezone), length: data.length, ...sameValidity(data), data: micros });
  }
  if (isNested(type)) {
    const format = makeFormatter(data);
    return utf8FromStrings(data, (i) => format.json(i));
  }
  return data;
}

const NANOS_PER: Record<TimeUnit, bigint> = {
  [TimeUnit.SECOND]: 1_000_000_000n,
  [TimeUnit.MILLISECOND]: 1_000_000n,
  [TimeUnit.MICROSECOND]: 1_000n,
  [TimeUnit.NANOSECOND]: 1n,
};
const INT64_MAX = (1n << 63n) - 1n;

/** Durations as month-day-nanosecond intervals (no months, no days), which Hyper reads. */
function durationAsInterval(data: Data, unit: TimeUnit): Data {
  const values = data.values as BigInt64Array;
  const out = new ArrayBuffer(data.length * 16);
  const view = new DataView(out);
  for (let i = 0; i < data.length; i++) {
    const nanos = values[i]! * NANOS_PER[unit];
    if (nanos > INT64_MAX || nanos < -INT64_MAX)
      throw new IpcProblem(
        'ARROW_UNSUPPORTED',
        `a duration of ${values[i]} ${TimeUnit[unit].toLowerCase()}s is longer than an interval holds (about 292 years)`,
      );
    view.setBigInt64(i * 16 + 8, nanos, true);
  }
  return makeData({ type: new IntervalMonthDayNano(), length: data.length, ...sameValidity(data), data: new Int32Array(out) });
}

/**
 * The schema batches are re-encoded with: each field with its wire type and the name and
 * nullability it must carry (Hyper matches columns by exact name, and a NOT NULL column only takes
 * a non-nullable field).
 */
export function wireSchema(fields: readonly { readonly name: string; readonly type: DataType; readonly nullable: boolean }[]): Schema {
  return new Schema(fields.map((f) => new Field(f.name, f.type, f.nullable)));
}

/** Wire type of a field, from the type alone (matches what `toWire` produces). */
export function wireType(type: DataType): DataType {
  if (DataType.isDictionary(type)) return wireType(type.dictionary);
  if (DataType.isNull(type) || DataType.isLargeUtf8(type) || DataType.isUtf8View(type)) return new Utf8();
  if (DataType.isLargeBinary(type) || DataType.isBinaryView(type) || DataType.isFixedSizeBinary(type)) return new Binary();
  if (DataType.isFloat(type) && type.precision === Precision.HALF) return new Float32();
  if (DataType.isDecimal(type) && type.precision > MAX_DECIMAL_DIGITS) return new Utf8();
  if (DataType.isDecimal(type) && type.bitWidth < 128) return new Decimal(type.scale, type.precision, 128);
  if (DataType.isDuration(type)) return new IntervalMonthDayNano();
  if (DataType.isDate(type) && type.unit === DateUnit.MILLISECOND) return new DateDay();
  if (DataType.isTimestamp(type) && type.unit === TimeUnit.NANOSECOND) return new Timestamp(TimeUnit.MICROSECOND, type.timezone);
  if (isNested(type)) return new Utf8();
  return type;
}

/** One decoded batch, its columns rewritten for Hyper, under `schema` (from `wireSchema`). */
export function wireBatch(batch: RecordBatch, schema: Schema): RecordBatch {
  const children = batch.schema.fields.map((_, k) => toWire(batch.data.children[k]!));
  const fixed = children.map((child, k) => (child.type === schema.fields[k]!.type ? child : retype(child, schema.fields[k]!.type)));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: batch.numRows, nullCount: 0, children: fixed }));
}

/** The same buffers under the schema's type object (the writer compares types by identity in places). */
function retype(data: Data, type: DataType): Data {
  return new Data(type, data.offset, data.length, data.nullCount, data.buffers, data.children, data.dictionary);
}
