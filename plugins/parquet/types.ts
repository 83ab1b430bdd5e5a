/**
 * Parquet column types → hyperwatch's `LogicalType`, and whether a file column fits a column of an
 * existing table.
 *
 * The annotation wins over the physical type: the (newer) logical type when the footer has one,
 * else the (legacy) converted type, else the physical type alone.
 *
 * | Parquet physical type  | annotation                              | LogicalType      | hyperd reads it |
 * | ---------------------- | --------------------------------------- | ---------------- | --------------- |
 * | BOOLEAN                |                                         | boolean          | yes             |
 * | INT32                  | none, INT(32, signed), INT_32           | integer          | yes             |
 * | INT32                  | INT(8/16, signed), INT_8, INT_16        | smallint         | yes             |
 * | INT32                  | INT(8, unsigned), UINT_8                | smallint         | yes             |
 * | INT32                  | INT(16, unsigned), UINT_16              | integer          | yes             |
 * | INT32                  | INT(32, unsigned), UINT_32              | bigint           | yes             |
 * | INT64                  | none, INT(64, signed), INT_64           | bigint           | yes             |
 * | INT64                  | INT(64, unsigned), UINT_64              | decimal(20,0)    | no              |
 * | INT32, INT64, FIXED_LEN_BYTE_ARRAY | DECIMAL(p,s)                | decimal(p,s)     | yes             |
 * | BYTE_ARRAY             | DECIMAL(p,s)                            | decimal(p,s)     | no              |
 * | FLOAT                  |                                         | real             | yes             |
 * | FIXED_LEN_BYTE_ARRAY(2)| FLOAT16                                 | real             | no              |
 * | DOUBLE                 |                                         | double           | yes             |
 * | BYTE_ARRAY             | STRING, UTF8                            | text             | yes             |
 * | BYTE_ARRAY             | ENUM                                    | text             | no              |
 * | BYTE_ARRAY             | JSON                                    | json             | yes             |
 * | FIXED_LEN_BYTE_ARRAY(16)| UUID                                   | text             | no              |
 * | BYTE_ARRAY             | none                                    | bytes            | yes             |
 * | FIXED_LEN_BYTE_ARRAY   | none                                    | bytes            | no              |
 * | INT32                  | DATE                                    | date             | yes             |
 * | INT32                  | TIME(MILLIS), TIME_MILLIS               | time             | no              |
 * | INT64                  | TIME(MICROS), TIME_MICROS               | time             | yes             |
 * | INT64                  | TIME(NANOS)                             | time             | no              |
 * | INT64                  | TIMESTAMP(unit, isAdjustedToUTC=true)   | timestamptz      | yes             |
 * | INT64                  | TIMESTAMP(unit, isAdjustedToUTC=false)  | timestamp        | yes             |
 * | INT64                  | TIMESTAMP_MILLIS, TIMESTAMP_MICROS (1)  | timestamptz      | yes             |
 * | INT96                  | none (legacy Impala/Spark timestamps)   | timestamp        | no (4)          |
 * | group                  | LIST, MAP, or a plain group (struct)    | json             | no              |
 * | any, REPEATED          | (a legacy list without LIST annotation) | json             | no              |
 * | any                    | NULL / UNKNOWN (always-null column)     | text             | no              |
 * | INT32, INT64, FLBA     | DECIMAL(p,s) with p > 38                | text (exact)     | no              |
 * | BYTE_ARRAY             | GEOMETRY, GEOGRAPHY (WKB)               | bytes            | no              |
 * | any                    | a logical type newer than this table    | as its physical type (2)   |       |
 * | group                  | holding TIME, INTERVAL, BSON, or DECIMAL > 15 digits | schema error (3) |  |
 * | anything else: INTERVAL, BSON, FLOAT16 not on 2 bytes, ...       | schema error   |                 |
 *
 * (1) The legacy converted types mean instants in UTC (the Parquet spec's compatibility rules).
 * (2) The spec says a reader that does not know a logical type reads the physical type.
 * (4) hyperd reads INT96 nanoseconds as unsigned, where Arrow C++ and DuckDB read them signed:
 *     decoded here, where a value the two readings disagree on is refused (see `int96Text`).
 * (3) Inside lists, maps and structs the decoder hands out TIME as bare integers, decimals as
 *     floats and cannot read INTERVAL or BSON: such a column is refused, never landed altered.
 *
 * "hyperd reads it" is what hyperd (main.0.0.26359) does with `external(path, FORMAT => 'parquet')`,
 * checked one type at a time: for the "no" rows it answers 42804 ("a data type that cannot be read
 * by Hyper"), or was not tried. A file with any such column is loaded through the fallback
 * (decoded here, streamed as CSV) even when hyperd could read the file itself.
 */
import type { SchemaTree } from 'hyparquet';
import type { LogicalType } from '../../src/types.ts';
import { describeParquetType, type MapResult, type ParquetColumn, type TimeUnit, type ValueCodec } from './column.ts';

const unsupported = (node: SchemaTree, reason: string): MapResult => ({ ok: false, parquetType: describeParquetType(node), reason });

function column(node: SchemaTree, type: LogicalType, hyperReads: boolean, codec: ValueCodec, decimal = false): MapResult {
  return { ok: true, column: { name: node.element.name, type, parquetType: describeParquetType(node), hyperReads, codec, decimal } };
}

const PLAIN: ValueCodec = { kind: 'plain' };
/** NUMERIC's widest precision, in Hyper and in PostgreSQL's typmod form. */
const MAX_DECIMAL_DIGITS = 38;
/** Digits a double holds exactly: the most a decimal inside a nested column may have. */
const NESTED_DECIMAL_DIGITS = 15;
/** Logical types this table knows; any other is read as its physical type (the spec's rule). */
const KNOWN_LOGICAL_TYPES = new Set([
  'STRING',
  'MAP',
  'LIST',
  'ENUM',
  'DECIMAL',
  'DATE',
  'TIME',
  'TIMESTAMP',
  'INTEGER',
  'NULL',
  'JSON',
  'BSON',
  'UUID',
  'FLOAT16',
  'VARIANT',
  'GEOMETRY',
  'GEOGRAPHY',
]);
const STRING: ValueCodec = { kind: 'string' };

function integerType(node: SchemaTree, bitWidth: number, signed: boolean): MapResult {
  const physical = node.element.type;
  if (physical !== (bitWidth === 64 ? 'INT64' : 'INT32'))
    return unsupported(node, `an INT(${bitWidth}) annotation on ${physical ?? 'a group'} is inconsistent`);
  if (signed) {
    if (bitWidth <= 16) return column(node, { kind: 'smallint' }, true, PLAIN);
    return column(node, { kind: bitWidth === 32 ? 'integer' : 'bigint' }, true, PLAIN);
  }
  if (bitWidth === 8) return column(node, { kind: 'smallint' }, true, PLAIN);
  if (bitWidth === 16) return column(node, { kind: 'integer' }, true, PLAIN);
  if (bitWidth === 32) return column(node, { kind: 'bigint' }, true, { kind: 'uint32' });
  // 2^64 - 1 needs 20 digits; hyperd refuses unsigned 64-bit columns.
  return column(node, { kind: 'decimal', precision: 20, scale: 0 }, false, PLAIN);
}

function decimalType(node: SchemaTree, precision: number | undefined, scale: number | undefined): MapResult {
  const physical = node.element.type;
  if (!precision || precision < 1 || (scale ?? 0) < 0 || (scale ?? 0) > precision) {
    return unsupported(
      node,
      `DECIMAL needs a precision of at least 1 and a scale between 0 and the precision (found ${precision ?? 'none'}, ${scale ?? 0})`,
    );
  }
  if (physical !== 'INT32' && physical !== 'INT64' && physical !== 'FIXED_LEN_BYTE_ARRAY' && physical !== 'BYTE_ARRAY') {
    return unsupported(node, `a DECIMAL annotation on ${physical ?? 'a group'} is inconsistent`);
  }
  const capacity =
    physical === 'INT32'
      ? 9
      : physical === 'INT64'
        ? 18
        : physical === 'FIXED_LEN_BYTE_ARRAY'
          ? Math.floor((8 * (node.element.type_length ?? 0) - 1) * Math.log10(2))
          : Infinity;
  if (precision > capacity)
    return unsupported(
      node,
      `DECIMAL(${precision},${scale ?? 0}) needs more digits ` +
        `than ${describeParquetType({ ...node, element: { ...node.element, logical_type: undefined, converted_type: undefined } })} ` +
        `holds (${capacity})`,
    );
  // No database column holds more than 38 digits: the exact digits land as text.
  if (precision > MAX_DECIMAL_DIGITS) return column(node, { kind: 'text' }, false, { kind: 'decimal', scale: scale ?? 0 }, true);
  return column(
    node,
    { kind: 'decimal', precision, scale: scale ?? 0 },
    physical !== 'BYTE_ARRAY',
    { kind: 'decimal', scale: scale ?? 0 },
    true,
  );
}

function timeType(node: SchemaTree, unit: TimeUnit): MapResult {
  const expected = unit === 'MILLIS' ? 'INT32' : 'INT64';
  if (node.element.type !== expected) return unsupported(node, `TIME(${unit}) must be stored as ${expected}`);
  return column(node, { kind: 'time' }, unit === 'MICROS', { kind: 'time', unit });
}

function timestampType(node: SchemaTree, utc: boolean): MapResult {
  if (node.element.type !== 'INT64') return unsupported(node, 'TIMESTAMP must be stored as INT64');
  // Our parsers format every timestamp as UTC wall-clock text; `+00` makes it an instant.
  return column(node, { kind: utc ? 'timestamptz' : 'timestamp' }, true, utc ? { kind: 'string', suffix: '+00' } : STRING);
}

function requirePhysical(
  node: SchemaTree,
  physical: string,
  type: LogicalType,
  hyperReads: boolean,
  codec: ValueCodec,
  what: string,
): MapResult {
  if (node.element.type !== physical) return unsupported(node, `${what} must be stored as ${physical}`);
  return column(node, type, hyperReads, codec);
}

/** The LogicalType of one top-level column of the file, or why it has none. */
export function mapParquetColumn(node: SchemaTree): MapResult {
  const e = node.element;
  if (e.logical_type?.type === 'VARIANT') return unsupported(node, 'the VARIANT logical type is not supported');
  if (node.children.length > 0 || e.repetition_type === 'REPEATED') {
    // hyparquet assembles lists, maps and structs into JavaScript values; they land as JSON text.
    // A repeated leaf (a legacy list without its LIST group) is its own element.
    const fields = node.children.length > 0 ? node.children : [node];
    const refused = nestedRefusal(fields);
    if (refused) return unsupported(node, refused);
    const leaves = nestedLeaves(fields);
    const rawBytes = leaves.some((c) => c.codec.kind === 'bytes');
    if (rawBytes && leaves.some((c) => c.codec.kind === 'utf8')) {
      return unsupported(
        node,
        'it holds both raw binary and ENUM fields, which the decoder cannot tell apart inside a list, map or struct',
      );
    }
    const mapped = column(node, { kind: 'json' }, false, { kind: 'nested', utf8: !rawBytes });
    const uint32 = leaves.filter((c) => c.codec.kind === 'uint32').map((c) => c.name);
    return mapped.ok && uint32.length > 0 ? { ok: true, column: { ...mapped.column, nestedUint32: uint32 } } : mapped;
  }
  return mapLeaf(node);
}

/** Why a leaf inside a list, map or struct would not land as it is in the file (see (3) above). */
function nestedRefusal(fields: readonly SchemaTree[]): string | undefined {
  for (const child of fields) {
    const path = child.path.join('.');
    if (child.children.length > 0) {
      const inner = nestedRefusal(child.children);
      if (inner) return inner;
      continue;
    }
    const mapped = mapLeaf({ ...child, element: { ...child.element, repetition_type: 'OPTIONAL' } });
    if (!mapped.ok) return `its field "${path}" has Parquet type ${mapped.parquetType}: ${mapped.reason}`;
    const { type, codec } = mapped.column;
    if (codec.kind === 'time') return `its field "${path}" is a TIME, which inside a list, map or struct cannot be loaded exactly`;
    if (codec.kind === 'decimal' && (type.kind !== 'decimal' || type.precision > NESTED_DECIMAL_DIGITS)) {
      return (
        `its field "${path}" is a decimal of more than ${NESTED_DECIMAL_DIGITS} digits, which inside a list, map or struct ` +
        `cannot be loaded exactly`
      );
    }
  }
  return undefined;
}

function nestedLeaves(fields: readonly SchemaTree[]): ParquetColumn[] {
  return fields.flatMap((child) => {
    if (child.children.length > 0) return nestedLeaves(child.children);
    const mapped = mapLeaf({ ...child, element: { ...child.element, repetition_type: 'OPTIONAL' } });
    return mapped.ok ? [{ ...mapped.column, name: child.path.join('.') }] : [];
  });
}

function mapLeaf(node: SchemaTree): MapResult {
  const e = node.element;
  const lt = e.logical_type && KNOWN_LOGICAL_TYPES.has(e.logical_type.type) ? e.logical_type : undefined;
  if (lt) {
    switch (lt.type) {
      case 'STRING':
        return requirePhysical(node, 'BYTE_ARRAY', { kind: 'text' }, true, STRING, 'STRING');
      case 'ENUM':
        return requirePhysical(node, 'BYTE_ARRAY', { kind: 'text' }, false, { kind: 'utf8' }, 'ENUM');
      case 'JSON':
        return requirePhysical(node, 'BYTE_ARRAY', { kind: 'json' }, true, STRING, 'JSON');
      case 'UUID':
        return requirePhysical(node, 'FIXED_LEN_BYTE_ARRAY', { kind: 'text' }, false, STRING, 'UUID');
      case 'FLOAT16':
        return requirePhysical(node, 'FIXED_LEN_BYTE_ARRAY', { kind: 'real' }, false, { kind: 'float' }, 'FLOAT16');
      case 'DATE':
        return requirePhysical(node, 'INT32', { kind: 'date' }, true, STRING, 'DATE');
      case 'DECIMAL':
        return decimalType(node, lt.precision, lt.scale);
      case 'INTEGER':
        return integerType(node, lt.bitWidth, lt.isSigned);
      case 'TIME':
        return timeType(node, lt.unit);
      case 'TIMESTAMP':
        return timestampType(node, lt.isAdjustedToUTC);
      case 'NULL':
        return column(node, { kind: 'text' }, false, STRING);
      case 'GEOMETRY':
      case 'GEOGRAPHY':
        // Well-known binary: the bytes land as they are, for the database's spatial functions.
        return requirePhysical(node, 'BYTE_ARRAY', { kind: 'bytes' }, false, { kind: 'bytes' }, lt.type);
      default:
        return unsupported(node, `the ${lt.type} logical type is not supported`);
    }
  }
  switch (e.converted_type) {
    case undefined:
      break;
    case 'UTF8':
      return requirePhysical(node, 'BYTE_ARRAY', { kind: 'text' }, true, STRING, 'UTF8');
    case 'ENUM':
      return requirePhysical(node, 'BYTE_ARRAY', { kind: 'text' }, false, { kind: 'utf8' }, 'ENUM');
    case 'JSON':
      return requirePhysical(node, 'BYTE_ARRAY', { kind: 'json' }, true, STRING, 'JSON');
    case 'DECIMAL':
      return decimalType(node, e.precision, e.scale);
    case 'DATE':
      return requirePhysical(node, 'INT32', { kind: 'date' }, true, STRING, 'DATE');
    case 'TIME_MILLIS':
      return timeType(node, 'MILLIS');
    case 'TIME_MICROS':
      return timeType(node, 'MICROS');
    case 'TIMESTAMP_MILLIS':
    case 'TIMESTAMP_MICROS':
      return timestampType(node, true);
    case 'INT_8':
    case 'INT_16':
    case 'INT_32':
    case 'INT_64':
      return integerType(node, Number(e.converted_type.slice(4)), true);
    case 'UINT_8':
    case 'UINT_16':
    case 'UINT_32':
    case 'UINT_64':
      return integerType(node, Number(e.converted_type.slice(5)), false);
    default:
      return unsupported(node, `the ${e.converted_type} type is not supported`);
  }
  switch (e.type) {
    case 'BOOLEAN':
      return column(node, { kind: 'boolean' }, true, PLAIN);
    case 'INT32':
      return column(node, { kind: 'integer' }, true, PLAIN);
    case 'INT64':
      return column(node, { kind: 'bigint' }, true, PLAIN);
    case 'INT96':
      // Readers disagree on nanoseconds past 2^63 (signed in Arrow C++ and DuckDB, unsigned in
      // hyperd) and hyparquet misreads them: decoded here, where such a value is refused.
      return column(node, { kind: 'timestamp' }, false, { kind: 'int96' });
    case 'FLOAT':
      return column(node, { kind: 'real' }, true, { kind: 'float' });
    case 'DOUBLE':
      return column(node, { kind: 'double' }, true, { kind: 'float' });
    case 'BYTE_ARRAY':
      return column(node, { kind: 'bytes' }, true, { kind: 'bytes' });
    case 'FIXED_LEN_BYTE_ARRAY':
      return column(node, { kind: 'bytes' }, false, { kind: 'bytes' });
    default:
      return unsupported(node, 'the column has no physical type');
  }
}
