/**
 * Arrow types → hyperwatch's `LogicalType`, and what Hyper's `COPY ... FORMAT ARROWSTREAM` takes
 * as it is.
 *
 * | Arrow type                                | LogicalType               | Hyper ARROWSTREAM wire              |
 * | ----------------------------------------- | ------------------------- | ----------------------------------- |
 * | Null (all values null)                    | text                      | rewritten as Utf8 (all null)        |
 * | Bool                                      | boolean                   | as is                               |
 * | Int8, Int16                               | smallint                  | as is                               |
 * | Int32                                     | integer                   | as is                               |
 * | Int64                                     | bigint                    | as is                               |
 * | Uint8 / Uint16 / Uint32                   | smallint / integer / bigint (next wider signed) | as is         |
 * | Uint64                                    | decimal(20,0)             | as is (needs 128-bit numerics)      |
 * | Float16                              | real                      | rewritten as Float32 (Hyper: "HALF precision float not supported") |
 * | Float32                                   | real                      | as is (needs 32-bit floats)         |
 * | Float64                                   | double                    | as is                               |
 * | Decimal128/256(p,s), p ≤ 38               | decimal(p,s)              | as is                               |
 * | Decimal256(p,s), p > 38                   | text (the exact digits)   | rewritten as Utf8                   |
 * | Decimal32/64(p,s)                         | decimal(p,s)              | rewritten as Decimal128             |
 * | Utf8                                      | text                      | as is                               |
 * | LargeUtf8, Utf8View                       | text                      | rewritten as Utf8                   |
 * | Binary                                    | bytes                     | as is                               |
 * | LargeBinary, BinaryView, FixedSizeBinary  | bytes                     | rewritten as Binary                 |
 * | Date (day)                                | date                      | as is                               |
 * | Date (millisecond)                     | date                      | rewritten as days (Hyper refuses values that are not whole days) |
 * | Time (any unit)                           | time                      | as is (nanoseconds truncated to µs) |
 * | Timestamp s/ms/µs with a time zone        | timestamptz               | as is                               |
 * | Timestamp s/ms/µs without                 | timestamp                 | as is                               |
 * | Timestamp ns (with or without zone)       | timestamptz / timestamp   | rewritten as µs ("Hyper does not support nanosecond times") |
 * | List, LargeList, FixedSizeList, Struct, Map | json (JSON text)        | rewritten as Utf8 JSON (Hyper wants `array(...)`, no struct) |
 * | Dictionary<K, V>                          | the mapping of V          | decoded to V (Hyper: "dictionary encoding ... not supported") |
 * | Interval (any unit)                       | interval                  | as is                               |
 * | Duration (any unit)           | interval           | rewritten as Interval<MONTH_DAY_NANO> (Hyper: "Error while reading arrow file") |
 * | ListView, LargeListView                   | json (as the List it stands for) | expanded, then as List      |
 * | RunEndEncoded<R, V>                       | the mapping of V          | expanded to V                       |
 * | Union                                     | unsupported: schema error |                                     |
 *
 * Found by testing against hyperd: ARROWSTREAM matches Arrow fields to table columns by exact
 * (case-sensitive) name, and only when the table column's type is exactly the one Hyper derives
 * from the Arrow type (no widening, not even int32 → bigint; a NOT NULL column needs a
 * non-nullable field). Everything else goes through a cast (see `index.ts`).
 */
import { DataType, DateUnit, Precision, TimeUnit, type Field } from 'apache-arrow';
import type { SqlType } from '../../src/columns/sql-types.ts';
import type { LogicalType } from '../../src/types.ts';

/** Why a field's values must be rewritten before Hyper's ARROWSTREAM reader takes them. */
export type WireRewrite =
  | 'none'
  | 'null-to-utf8'
  | 'float16'
  | 'decimal128'
  | 'decimal-text'
  | 'duration'
  | 'large-utf8'
  | 'utf8-view'
  | 'large-binary'
  | 'binary-view'
  | 'fixed-binary'
  | 'date-ms'
  | 'timestamp-ns'
  | 'json'
  | 'dictionary';

export interface FieldMapping {
  readonly type: LogicalType;
  readonly rewrite: WireRewrite;
}

/** The Arrow type could not be mapped: `description` names it for the error message. */
export interface Unsupported {
  readonly unsupported: string;
}

/** Hyper's NUMERIC holds at most 38 digits. */
const MAX_DECIMAL_PRECISION = 38;

/** Maps one Arrow type; `Unsupported` for types with no faithful column type. */
export function mapArrowType(type: DataType): FieldMapping | Unsupported {
  if (DataType.isDictionary(type)) {
    const inner = mapArrowType(type.dictionary);
    return 'unsupported' in inner ? inner : { type: inner.type, rewrite: 'dictionary' };
  }
  if (DataType.isNull(type)) return { type: { kind: 'text' }, rewrite: 'null-to-utf8' };
  if (DataType.isBool(type)) return { type: { kind: 'boolean' }, rewrite: 'none' };
  if (DataType.isInt(type)) {
    const width = type.bitWidth;
    if (type.isSigned) {
      return { type: { kind: width <= 16 ? 'smallint' : width === 32 ? 'integer' : 'bigint' }, rewrite: 'none' };
    }
    if (width === 8) return { type: { kind: 'smallint' }, rewrite: 'none' };
    if (width === 16) return { type: { kind: 'integer' }, rewrite: 'none' };
    if (width === 32) return { type: { kind: 'bigint' }, rewrite: 'none' };
    return { type: { kind: 'decimal', precision: 20, scale: 0 }, rewrite: 'none' };
  }
  if (DataType.isFloat(type)) {
    if (type.precision === Precision.HALF) return { type: { kind: 'real' }, rewrite: 'float16' };
    return { type: { kind: type.precision === Precision.SINGLE ? 'real' : 'double' }, rewrite: 'none' };
  }
  if (DataType.isDecimal(type)) {
    if (type.scale < 0 || type.scale > type.precision)
      return { unsupported: `${describeArrowType(type)} (a scale between 0 and the precision)` };
    // Wider than a NUMERIC holds: the exact digits, as text.
    if (type.precision > MAX_DECIMAL_PRECISION) return { type: { kind: 'text' }, rewrite: 'decimal-text' };
    return {
      type: { kind: 'decimal', precision: type.precision, scale: type.scale },
      rewrite: type.bitWidth < 128 ? 'decimal128' : 'none',
    };
  }
  if (DataType.isUtf8(type)) return { type: { kind: 'text' }, rewrite: 'none' };
  if (DataType.isLargeUtf8(type)) return { type: { kind: 'text' }, rewrite: 'large-utf8' };
  if (DataType.isUtf8View(type)) return { type: { kind: 'text' }, rewrite: 'utf8-view' };
  if (DataType.isBinary(type)) return { type: { kind: 'bytes' }, rewrite: 'none' };
  if (DataType.isLargeBinary(type)) return { type: { kind: 'bytes' }, rewrite: 'large-binary' };
  if (DataType.isBinaryView(type)) return { type: { kind: 'bytes' }, rewrite: 'binary-view' };
  if (DataType.isFixedSizeBinary(type)) return { type: { kind: 'bytes' }, rewrite: 'fixed-binary' };
  if (DataType.isInterval(type)) return { type: { kind: 'interval' }, rewrite: 'none' };
  // A duration is an interval of days and time only (no months): nanoseconds cut to microseconds, as for timestamps.
  if (DataType.isDuration(type)) return { type: { kind: 'interval' }, rewrite: 'duration' };
  if (DataType.isDate(type)) return { type: { kind: 'date' }, rewrite: type.unit === DateUnit.MILLISECOND ? 'date-ms' : 'none' };
  if (DataType.isTime(type)) return { type: { kind: 'time' }, rewrite: 'none' };
  if (DataType.isTimestamp(type)) {
    return {
      type: { kind: type.timezone ? 'timestamptz' : 'timestamp' },
      rewrite: type.unit === TimeUnit.NANOSECOND ? 'timestamp-ns' : 'none',
    };
  }
  if (isNested(type)) {
    // JSON text needs every nested value to be representable too.
    for (const child of type.children) {
      const inner = mapArrowType(child.type);
      if ('unsupported' in inner) return { unsupported: `${describeArrowType(type)} (holds ${inner.unsupported})` };
    }
    return { type: { kind: 'json' }, rewrite: 'json' };
  }
  return { unsupported: describeArrowType(type) };
}

/** `Int32`, `Timestamp<MICROSECOND, UTC>`, `Dictionary<Int32, Utf8>`: the type as Arrow names it. */
export function describeArrowType(type: DataType): string {
  return String(type);
}

export function describeField(field: Field): string {
  return `${describeArrowType(field.type)}${field.nullable ? '' : ' not null'}`;
}

// ---------------------------------------------------------------------------------------------
// Fitting an existing table's column (its type read by `parseSqlType`)
// ---------------------------------------------------------------------------------------------

/**
 * ARROWSTREAM's exact types are the ones Hyper reports, where a numeric always has its precision
 * and a time type never has a `(p)`: PostgreSQL's `numeric` without a precision and `timestamp(p)`
 * are never the same type (such columns are loaded with a cast, if the type policy lets them).
 */
function isOutsideArrowRules(to: SqlType): boolean {
  if (to.family === 'numeric') return to.precision === undefined;
  return (to.family === 'time' || to.family === 'timestamp' || to.family === 'timestamptz') && to.fractionalDigits !== undefined;
}

/** Is the table column's type exactly the file column's (no cast needed at all)? */
export function isSameType(from: LogicalType, to: SqlType): boolean {
  if (isOutsideArrowRules(to)) return false;
  if (from.kind === 'decimal') return to.family === 'numeric' && to.precision === from.precision && to.scale === from.scale;
  // Arrow carries JSON as plain text: only a TEXT column (no length limit) takes it without a cast.
  if (from.kind === 'json' || from.kind === 'text') return to.family === 'text' && to.length === undefined;
  return from.kind === to.family;
}

/** A type that lands as JSON text: lists of every kind, structs and maps. */
export function isNested(type: DataType): boolean {
  return (
    DataType.isList(type) || DataType.isLargeList(type) || DataType.isFixedSizeList(type) || DataType.isStruct(type) || DataType.isMap(type)
  );
}
