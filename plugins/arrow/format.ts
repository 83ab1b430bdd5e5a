/**
 * Arrow values as text: for CSV (the COPY path of databases without ARROWSTREAM) and for the JSON
 * text that nested columns (list, struct, map) become. Values are read from the column buffers,
 * not through `Vector.get`, which rounds timestamps to milliseconds and decimals to its own type.
 *
 * Text forms are the one per type of plugins/shared/csv-text.ts: ISO dates and times with microseconds,
 * `+00` on instants, `\x` hex for bytes, decimals exact from their integer representation.
 */
import { DataType, DateUnit, IntervalUnit, makeVector, Precision, TimeUnit, type Data } from 'apache-arrow';
import { uint16ToFloat64 } from 'apache-arrow/util/math';
import { decodeDictionary } from './columns.ts';
import { formatDate, formatDecimal as decimalText, formatTimeOfDay, formatTimestamp, hexBytes } from '../shared/csv-text.ts';

export interface Formatter {
  /** The value as SQL text, or null for NULL. */
  text(index: number): string | null;
  /** The value as a JSON literal (`null` for NULL). */
  json(index: number): string;
}

/** Multiplier (or, for nanoseconds, divisor) from a time unit to microseconds. */
function toMicros(unit: TimeUnit, value: bigint): bigint {
  switch (unit) {
    case TimeUnit.SECOND:
      return value * 1_000_000n;
    case TimeUnit.MILLISECOND:
      return value * 1_000n;
    case TimeUnit.MICROSECOND:
      return value;
    case TimeUnit.NANOSECOND: {
      // Floor, not truncation, so instants before 1970 keep their second.
      const q = value / 1_000n;
      return value % 1_000n < 0n ? q - 1n : q;
    }
  }
}

/** An interval's parts: months, days, microseconds. */
export interface IntervalParts {
  readonly months: number;
  readonly days: number;
  readonly micros: bigint;
}

/** Reads row `i` of an Interval (any unit) or Duration column as interval parts (nanoseconds cut to microseconds). */
function intervalAt(data: Data): (i: number) => IntervalParts {
  const type: DataType = data.type;
  if (DataType.isDuration(type)) {
    const values = data.values as BigInt64Array;
    return (i) => ({ months: 0, days: 0, micros: toMicrosTruncated(type.unit, values[i]!) });
  }
  const words = data.values as Int32Array;
  const view = new DataView(words.buffer, words.byteOffset, words.byteLength);
  if (DataType.isInterval(type) && type.unit === IntervalUnit.YEAR_MONTH)
    return (i) => ({ months: view.getInt32(i * 4, true), days: 0, micros: 0n });
  if (DataType.isInterval(type) && type.unit === IntervalUnit.DAY_TIME)
    return (i) => ({ months: 0, days: view.getInt32(i * 8, true), micros: BigInt(view.getInt32(i * 8 + 4, true)) * 1000n });
  return (i) => ({
    months: view.getInt32(i * 16, true),
    days: view.getInt32(i * 16 + 4, true),
    micros: view.getBigInt64(i * 16 + 8, true) / 1000n,
  });
}

function toMicrosTruncated(unit: TimeUnit, value: bigint): bigint {
  return unit === TimeUnit.NANOSECOND ? value / 1000n : toMicros(unit, value);
}

/** ISO 8601 with signed parts (`P14M3DT-1.500000S`), which Hyper and PostgreSQL both read. */
export function formatInterval({ months, days, micros }: IntervalParts): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const seconds = `${negative ? '-' : ''}${abs / 1_000_000n}.${String(abs % 1_000_000n).padStart(6, '0')}`;
  return `P${months}M${days}DT${seconds}S`;
}

/** A two's-complement little-endian integer of `words` 32-bit words → its decimal text at `scale`. */
export function formatDecimal(words: Uint32Array, start: number, count: number, scale: number): string {
  let value = 0n;
  for (let w = count - 1; w >= 0; w--) value = (value << 32n) | BigInt(words[start + w]!);
  if (words[start + count - 1]! & 0x80000000) value -= 1n << BigInt(32 * count);
  return decimalText(value, scale);
}

/** `Number` JSON cannot hold NaN or ±Infinity: those become null there, as JSON.stringify does. */
const jsonNumber = (text: string | null): string => (text === null || !/^-?\d/.test(text) ? 'null' : text);
const jsonString = (text: string | null): string => (text === null ? 'null' : JSON.stringify(text));

function scalar(data: Data, text: (index: number) => string, json: (text: string | null) => string): Formatter {
  const format = (index: number): string | null => (data.getValid(index) ? text(index) : null);
  return { text: format, json: (index) => json(format(index)) };
}

/** `Vector.get` for types read through apache-arrow (views, booleans). */
function viaGet<T>(data: Data): (index: number) => T {
  const vector = makeVector(data);
  return (index) => vector.get(index) as T;
}

function nested(data: Data, json: (index: number) => string): Formatter {
  return { text: (index) => (data.getValid(index) ? json(index) : null), json: (index) => (data.getValid(index) ? json(index) : 'null') };
}

/** Builds the formatter for one column of one record batch (nested children included, once). */
export function makeFormatter(data: Data): Formatter {
  const type: DataType = data.type;
  if (DataType.isDictionary(type)) return makeFormatter(decodeDictionary(data));
  if (DataType.isNull(type)) return { text: () => null, json: () => 'null' };
  if (DataType.isBool(type)) {
    const get = viaGet<boolean>(data);
    return scalar(
      data,
      (i) => (get(i) ? 'true' : 'false'),
      (t) => t ?? 'null',
    );
  }
  if (DataType.isInt(type)) {
    const values = data.values as ArrayLike<number | bigint>;
    return scalar(data, (i) => String(values[i]), jsonNumber);
  }
  if (DataType.isFloat(type)) {
    const values = data.values as ArrayLike<number>;
    const half = type.precision === Precision.HALF;
    return scalar(data, (i) => String(half ? uint16ToFloat64(values[i]!) : values[i]), jsonNumber);
  }
  if (DataType.isDecimal(type)) {
    const words = data.values as Uint32Array;
    const stride = type.bitWidth / 32;
    return scalar(data, (i) => formatDecimal(words, i * stride, stride, type.scale), jsonNumber);
  }
  if (DataType.isUtf8(type) || DataType.isLargeUtf8(type) || DataType.isBinary(type) || DataType.isLargeBinary(type)) {
    const offsets = data.valueOffsets as ArrayLike<number | bigint>;
    const bytes = data.values as Uint8Array;
    const slice = (i: number): Uint8Array => bytes.subarray(Number(offsets[i]), Number(offsets[i + 1]));
    if (DataType.isUtf8(type) || DataType.isLargeUtf8(type)) {
      const decoder = new TextDecoder();
      return scalar(data, (i) => decoder.decode(slice(i)), jsonString);
    }
    return scalar(data, (i) => hexBytes(slice(i)), jsonString);
  }
  if (DataType.isFixedSizeBinary(type)) {
    const bytes = data.values as Uint8Array;
    const width = type.byteWidth;
    return scalar(data, (i) => hexBytes(bytes.subarray(i * width, (i + 1) * width)), jsonString);
  }
  if (DataType.isUtf8View(type)) {
    const get = viaGet<string>(data);
    return scalar(data, get, jsonString);
  }
  if (DataType.isBinaryView(type)) {
    const get = viaGet<Uint8Array>(data);
    return scalar(data, (i) => hexBytes(get(i)), jsonString);
  }
  if (DataType.isDate(type)) {
    const values = data.values as ArrayLike<number | bigint>;
    const day = type.unit === DateUnit.DAY;
    return scalar(data, (i) => formatDate(day ? Number(values[i]) : Math.floor(Number(values[i]) / 86_400_000)), jsonString);
  }
  if (DataType.isTime(type)) {
    const values = data.values as ArrayLike<number | bigint>;
    const unit = type.unit;
    return scalar(data, (i) => formatTimeOfDay(Number(toMicros(unit, BigInt(values[i]!)))), jsonString);
  }
  if (DataType.isTimestamp(type)) {
    const values = data.values as BigInt64Array;
    const unit = type.unit;
    const zoned = Boolean(type.timezone);
    return scalar(data, (i) => formatTimestamp(toMicros(unit, values[i]!), zoned), jsonString);
  }
  if (DataType.isInterval(type) || DataType.isDuration(type)) {
    const interval = intervalAt(data);
    return scalar(data, (i) => formatInterval(interval(i)), jsonString);
  }
  if (DataType.isList(type) || DataType.isLargeList(type) || DataType.isMap(type)) {
    const offsets = data.valueOffsets as ArrayLike<number | bigint>;
    const child = data.children[0]!;
    const isMap = DataType.isMap(type);
    // A map's child is a struct<key, value>: written as a JSON object, keys as strings.
    const key = isMap ? makeFormatter(child.children[0]!) : undefined;
    const value = makeFormatter(isMap ? child.children[1]! : child);
    return nested(data, (i) => {
      const parts: string[] = [];
      for (let j = Number(offsets[i]), end = Number(offsets[i + 1]); j < end; j++) {
        parts.push(key ? `${JSON.stringify(key.text(j) ?? 'null')}:${value.json(j)}` : value.json(j));
      }
      return key ? `{${parts.join(',')}}` : `[${parts.join(',')}]`;
    });
  }
  if (DataType.isFixedSizeList(type)) {
    const size = type.listSize;
    const value = makeFormatter(data.children[0]!);
    return nested(data, (i) => {
      const parts: string[] = [];
      for (let j = i * size; j < (i + 1) * size; j++) parts.push(value.json(j));
      return `[${parts.join(',')}]`;
    });
  }
  if (DataType.isStruct(type)) {
    const fields = type.children.map((field, k) => ({ name: JSON.stringify(field.name), format: makeFormatter(data.children[k]!) }));
    return nested(data, (i) => `{${fields.map((f) => `${f.name}:${f.format.json(i)}`).join(',')}}`);
  }
  // Unsupported types are refused from the schema before any batch is read (see types.ts).
  throw new TypeError(`no text form for Arrow type ${String(type)}`);
}
