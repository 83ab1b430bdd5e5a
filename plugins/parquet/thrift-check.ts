/**
 * The Thrift structures of a Parquet file (its footer, each page header) checked against the
 * format's definition (parquet.thrift) before hyparquet reads them. hyparquet's Thrift reader is
 * untyped: it keeps every field under its id with whatever wire type the bytes say, so one flipped
 * bit in a type nibble hands the decoder a bigint where a number belongs ("Cannot mix BigInt and
 * other types"), a number where a string belongs, or no name at all ("Cannot read properties of
 * undefined"). Here a field the definition knows must have its type, a required field must be
 * there, and an enum must hold one of its values: what a generated Thrift reader (Arrow C++,
 * arrow-rs) insists on, for the fields a reader uses (some writers leave out fields parquet.thrift
 * calls required but nothing reads, such as a row group's `total_byte_size`: those may be missing).
 * Fields the definition does not know are left alone (a newer writer's).
 */
import { deserializeTCompactProtocol } from 'hyparquet/src/thrift.js';
import { isUtf8 } from '../shared/utf8.ts';

import { ENCODINGS, type FieldSpec, type FieldType, FILE_META_DATA, GROUP_VAR_INT, PAGE_HEADER, type StructSpec } from './thrift-spec.ts';

/** A name (a column's, a path's) whose bytes are not UTF-8 (`utf8`; other strings are `string`). */
export class NameNotUtf8 extends Error {
  constructor(
    readonly where: string,
    readonly bytes: Uint8Array,
  ) {
    super(`${where} is not valid UTF-8`);
    this.name = 'NameNotUtf8';
  }
}

/** A Thrift structure that does not match its definition: `where` is its path (`row_groups[0].columns[1].meta_data.codec`). */
export class ThriftMismatch extends Error {
  constructor(
    readonly where: string,
    readonly what: string,
  ) {
    // `where` is a field's path, or (the encoding itself broken) empty.
    super(where === '' ? `its Thrift encoding ${what}` : `its field ${where} ${what}`);
    this.name = 'ThriftMismatch';
  }
}

function kindOf(value: unknown): string {
  if (typeof value === 'bigint') return 'i64';
  if (typeof value === 'number') return 'an integer or double';
  if (typeof value === 'boolean') return 'bool';
  if (value instanceof Uint8Array) return 'binary (string)';
  if (Array.isArray(value)) return 'list';
  return 'struct';
}

const INT_RANGE: Record<'i8' | 'i16' | 'i32', readonly [number, number]> = {
  i8: [-128, 127],
  i16: [-32768, 32767],
  i32: [-(2 ** 31), 2 ** 31 - 1],
};

function describe(type: FieldType): string {
  if (typeof type === 'string') return type === 'utf8' ? 'string' : type;
  return 'list' in type ? `list<${describe(type.list)}>` : type.struct.name;
}

function check(value: unknown, type: FieldType, where: string, spec?: FieldSpec): void {
  const wrong = (): never => {
    throw new ThriftMismatch(where, `has Thrift type ${kindOf(value)} where the format has ${describe(type)}`);
  };
  if (typeof type === 'string') {
    switch (type) {
      case 'bool':
        if (typeof value !== 'boolean') wrong();
        return;
      case 'i64':
        if (typeof value !== 'bigint') wrong();
        if (spec?.count && (value as bigint) < 0n) throw new ThriftMismatch(where, `is ${String(value)}, a count below 0`);
        return;
      case 'double':
        if (typeof value !== 'number') wrong();
        return;
      case 'binary':
        if (!(value instanceof Uint8Array)) wrong();
        return;
      case 'utf8':
      case 'string':
        if (!(value instanceof Uint8Array)) wrong();
        if (!isUtf8(value as Uint8Array)) {
          if (type === 'utf8') throw new NameNotUtf8(where, value as Uint8Array);
          throw new ThriftMismatch(where, 'is a string that is not valid UTF-8');
        }
        return;
      default: {
        if (typeof value !== 'number' || !Number.isInteger(value)) wrong();
        const [min, max] = INT_RANGE[type];
        const n = value as number;
        if (n < min || n > max) throw new ThriftMismatch(where, `is ${n}, outside the range of an ${type}`);
        if (spec?.enumMax !== undefined && (n < 0 || n > spec.enumMax || (spec.enumMax === ENCODINGS && n === GROUP_VAR_INT))) {
          throw new ThriftMismatch(where, `is ${n}, which is not one of the values the format defines (0..${spec.enumMax})`);
        }
        return;
      }
    }
  }
  if ('list' in type) {
    if (!Array.isArray(value)) wrong();
    const list = value as unknown[];
    for (let i = 0; i < list.length; i++) check(list[i], type.list, `${where}[${i}]`, spec);
    return;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Uint8Array) wrong();
  checkStruct(value as Record<string, unknown>, type.struct, where);
}

function checkStruct(value: Record<string, unknown>, spec: StructSpec, where: string): void {
  if (spec.union) {
    const set = Object.keys(value).length;
    if (set !== 1) throw new ThriftMismatch(where, `(a ${spec.name}, a union) has ${set} fields set, not one`);
  }
  for (const [id, field] of Object.entries(spec.fields)) {
    const present = value[`field_${id}`];
    const path = where === '' ? field.name : `${where}.${field.name}`;
    if (present === undefined) {
      if (field.required) throw new ThriftMismatch(path, `(a required field of ${spec.name}) is missing`);
      continue;
    }
    check(present, field.type, path, field);
  }
}

/** Thrift's own bound on nested structs and lists (TProtocol's default recursion limit). */
const MAX_THRIFT_DEPTH = 64;

/**
 * Walks one compact-protocol struct at `at` as a generated reader skips it, checking what
 * hyparquet's reader lets through: every wire type one the protocol defines (also of an empty
 * list's elements), varints of at most 10 bytes, lengths inside the bytes, nesting bounded.
 * Returns where the struct ends.
 */
/** The compact protocol's wire type of each field type of the definition. */
function wireType(type: FieldType): number {
  if (typeof type !== 'string') return 'list' in type ? 9 : 12;
  return { bool: -1, i8: 3, i16: 4, i32: 5, i64: 6, double: 7, binary: 8, utf8: 8, string: 8 }[type];
}

const isBool = (wire: number) => wire === 1 || wire === 2;

function readFieldId(bytes: Uint8Array, at: number, where: string): [number, number] {
  let zigzag = 0;
  for (let k = 0; k < 5; k++) {
    if (at + k >= bytes.length) throw new ThriftMismatch(where, 'ends inside a field id');
    const byte = bytes[at + k]!;
    zigzag += (byte & 0x7f) * 2 ** (7 * k);
    if (!(byte & 0x80)) return [zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2, at + k + 1];
  }
  throw new ThriftMismatch(where, 'holds a field id of more than 5 bytes');
}

/**
 * Walks one compact-protocol struct at `at` as a generated reader reads it, checking what
 * hyparquet's reader lets through: every wire type one the protocol defines (also of an empty
 * list's elements), each field the definition (`spec`) knows of its exact wire type (a generated
 * reader skips a field of another and then misses it: an i16 is no i32), varints of at most 10
 * bytes, lengths inside the bytes, nesting bounded. Returns where the struct ends.
 */
function walkStruct(bytes: Uint8Array, at: number, depth: number, where: string, spec?: StructSpec): number {
  if (depth > MAX_THRIFT_DEPTH) throw new ThriftMismatch(where, `nests structures more than ${MAX_THRIFT_DEPTH} deep`);
  let i = at;
  let id = 0;
  for (;;) {
    if (i >= bytes.length) throw new ThriftMismatch(where, 'ends without its STOP');
    const head = bytes[i++]!;
    const type = head & 0x0f;
    // STOP is the byte 0: a field id delta beside it is no field at all (arrow-rs refuses it).
    if (type === 0) {
      if (head !== 0) throw new ThriftMismatch(where, `holds a STOP marker of ${head} (not 0)`);
      return i;
    }
    if (head >> 4 === 0) [id, i] = readFieldId(bytes, i, where);
    else id += head >> 4;
    const field = spec?.fields[id];
    const path = field ? (where === '' ? field.name : `${where}.${field.name}`) : where;
    if (field) {
      const expected = wireType(field.type);
      if (expected === -1 ? !isBool(type) : type !== expected)
        throw new ThriftMismatch(path, `has Thrift wire type ${type} where the format has ${describe(field.type)}`);
    }
    i = walkValue(bytes, i, type, depth, path, field?.type);
  }
}

function skipVarint(bytes: Uint8Array, at: number, where: string): number {
  for (let k = 0; k < 10; k++) {
    if (at + k >= bytes.length) throw new ThriftMismatch(where, 'ends inside a number');
    if (!(bytes[at + k]! & 0x80)) return at + k + 1;
  }
  throw new ThriftMismatch(where, 'holds a number of more than 10 bytes');
}

function readLength(bytes: Uint8Array, at: number, where: string): { value: number; end: number } {
  let value = 0;
  for (let k = 0; k < 5; k++) {
    if (at + k >= bytes.length) throw new ThriftMismatch(where, 'ends inside a length');
    const byte = bytes[at + k]!;
    value += (byte & 0x7f) * 2 ** (7 * k);
    if (!(byte & 0x80)) return { value, end: at + k + 1 };
  }
  throw new ThriftMismatch(where, 'holds a length of more than 5 bytes');
}

function walkValue(bytes: Uint8Array, at: number, type: number, depth: number, where: string, expected?: FieldType): number {
  switch (type) {
    case 1:
    case 2:
      return at;
    case 3:
      if (at >= bytes.length) throw new ThriftMismatch(where, 'ends inside a byte');
      return at + 1;
    case 4:
    case 5:
    case 6:
      return skipVarint(bytes, at, where);
    case 7:
      if (at + 8 > bytes.length) throw new ThriftMismatch(where, 'ends inside a double');
      return at + 8;
    case 8: {
      const { value, end } = readLength(bytes, at, where);
      if (end + value > bytes.length) throw new ThriftMismatch(where, `holds a binary of ${value} bytes past its end`);
      return end + value;
    }
    case 9:
    case 10: {
      if (at >= bytes.length) throw new ThriftMismatch(where, 'ends inside a list header');
      const head = bytes[at]!;
      const element = head & 0x0f;
      let size = head >> 4;
      let i = at + 1;
      if (size === 15) ({ value: size, end: i } = readLength(bytes, i, where));
      if (element < 1 || element > 12)
        throw new ThriftMismatch(where, `holds a list of elements of Thrift type ${element}, which the protocol does not define`);
      const of = expected !== undefined && typeof expected !== 'string' && 'list' in expected ? expected.list : undefined;
      if (of !== undefined) {
        const wanted = wireType(of);
        if (wanted === -1 ? !isBool(element) : element !== wanted)
          throw new ThriftMismatch(where, `holds a list of Thrift wire type ${element} where the format has ${describe(of)}`);
      }
      if (depth + 1 > MAX_THRIFT_DEPTH) throw new ThriftMismatch(where, `nests structures more than ${MAX_THRIFT_DEPTH} deep`);
      // Booleans in a list take a byte each.
      for (let k = 0; k < size; k++) i = walkValue(bytes, i, element === 1 || element === 2 ? 3 : element, depth + 1, `${where}[${k}]`, of);
      return i;
    }
    case 11: {
      const { value: size, end } = readLength(bytes, at, where);
      if (size === 0) return end;
      if (end >= bytes.length) throw new ThriftMismatch(where, 'ends inside a map header');
      const key = bytes[end]! >> 4;
      const value = bytes[end]! & 0x0f;
      let i = end + 1;
      for (let k = 0; k < size; k++) {
        i = walkValue(bytes, i, key, depth + 1, where);
        i = walkValue(bytes, i, value, depth + 1, where);
      }
      return i;
    }
    case 12:
      return walkStruct(
        bytes,
        at,
        depth + 1,
        where,
        expected !== undefined && typeof expected !== 'string' && 'struct' in expected ? expected.struct : undefined,
      );
    default:
      throw new ThriftMismatch(where, `holds a field of Thrift type ${type}, which the protocol does not define`);
  }
}

function decode(bytes: Uint8Array, offset: number, end: number, spec: StructSpec): { value: Record<string, unknown>; end: number } {
  walkStruct(bytes.subarray(0, end), offset, 0, '', spec);
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, end), offset };
  const value = deserializeTCompactProtocol(reader) as Record<string, unknown>;
  return { value, end: reader.offset };
}

/** Bytes a statistic of each physical type (by its Type enum) takes; BYTE_ARRAY any, FIXED_LEN_BYTE_ARRAY its length. */
const STAT_BYTES: Record<number, number> = { 0: 1, 1: 4, 2: 8, 3: 12, 4: 4, 5: 8 };

type Raw = Record<string, unknown>;

/**
 * What a footer's structures say of each other: each column chunk's min and max statistics of the
 * size its physical type has (DuckDB and arrow-rs refuse others), and row group ordinals on all
 * row groups or none (arrow-rs refuses a mix).
 */
function checkConsistency(footer: Raw): void {
  const schema = footer.field_2 as Raw[];
  const groups = footer.field_4 as Raw[];
  const leaves = schema.filter((e) => !((e.field_5 as number | undefined) ?? 0));
  const ordinals = groups.filter((g) => g.field_7 !== undefined).length;
  if (ordinals !== 0 && ordinals !== groups.length)
    throw new ThriftMismatch('row_groups', `give ${ordinals} of ${groups.length} row groups an ordinal (all or none)`);
  for (const [g, group] of groups.entries()) {
    for (const [c, chunk] of (group.field_1 as Raw[]).entries()) {
      const meta = chunk.field_3 as Raw | undefined;
      const stats = meta?.field_12 as Raw | undefined;
      if (!meta || !stats) continue;
      const type = meta.field_1 as number;
      const size = type === 7 ? (leaves[c]?.field_2 as number | undefined) : STAT_BYTES[type];
      if (size === undefined) continue;
      for (const [id, name] of [
        [1, 'max'],
        [2, 'min'],
        [5, 'max_value'],
        [6, 'min_value'],
      ] as const) {
        const value = stats[`field_${id}`] as Uint8Array | undefined;
        if (value !== undefined && value.length !== size)
          throw new ThriftMismatch(
            `row_groups[${g}].columns[${c}].meta_data.statistics.${name}`,
            `is ${value.length} bytes where its type has ${size}`,
          );
      }
    }
  }
}

/**
 * Checks a footer (the Thrift bytes of its FileMetaData); throws `ThriftMismatch`, or what hyparquet's
 * reader throws on bytes that are not Thrift at all.
 */
export function checkFooterThrift(bytes: Uint8Array): void {
  const footer = decode(bytes, 0, bytes.length, FILE_META_DATA).value;
  checkStruct(footer, FILE_META_DATA, '');
  checkConsistency(footer);
}

/** Checks the page header at `offset` of `bytes`; returns where it ends. */
export function checkPageHeaderThrift(bytes: Uint8Array, offset: number): number {
  const { value, end } = decode(bytes, offset, bytes.length, PAGE_HEADER);
  checkStruct(value, PAGE_HEADER, '');
  return end;
}
