/**
 * The physical layout of each column, read straight from the schema's flatbuffer (not through
 * apache-arrow's decoder, which fails on types it does not know with a message about the footer
 * and ignores the byte order): which buffers each field has, how wide its values are, and how a
 * value's bytes are swapped when the file is big-endian.
 *
 * Checked here, before anything is allocated: every type is one this reader decodes, widths are
 * the ones the format allows, nesting is at most `MAX_DEPTH` deep, dictionary ids are distinct.
 */
import { ByteBuffer } from 'flatbuffers';
import { Decimal as FbDecimal } from 'apache-arrow/fb/decimal';
import { Date as FbDate } from 'apache-arrow/fb/date';
import { Endianness } from 'apache-arrow/fb/endianness';
import type { Field as FbField } from 'apache-arrow/fb/field';
import { FixedSizeBinary as FbFixedSizeBinary } from 'apache-arrow/fb/fixed-size-binary';
import { FixedSizeList as FbFixedSizeList } from 'apache-arrow/fb/fixed-size-list';
import { FloatingPoint as FbFloatingPoint } from 'apache-arrow/fb/floating-point';
import { Int as FbInt } from 'apache-arrow/fb/int';
import { Interval as FbInterval } from 'apache-arrow/fb/interval';
import { Message as FbMessage } from 'apache-arrow/fb/message';
import { Schema as FbSchema } from 'apache-arrow/fb/schema';
import { Time as FbTime } from 'apache-arrow/fb/time';
import { Timestamp as FbTimestamp } from 'apache-arrow/fb/timestamp';
import { Duration as FbDuration } from 'apache-arrow/fb/duration';
import { Type } from 'apache-arrow/fb/type';
import { Union as FbUnion } from 'apache-arrow/fb/union';
import { corrupt, IpcProblem } from './problem.ts';

/** Deeper nesting than this is refused (the format sets no limit; Arrow C++ stops at 64 too). */
export const MAX_DEPTH = 64;
/** More fields than this in one schema (all levels) is refused as implausible. */
const MAX_FIELDS = 100_000;

/**
 * How a field's own node is laid out in a record batch (children follow in order):
 * - `null`: no buffers; `bool`: validity, bits; `fixed`: validity, `width`-byte values;
 * - `var32`/`var64`: validity, 32/64-bit offsets, bytes; `view`: validity, 16-byte views, then
 *   the batch's variadic data buffers;
 * - `list32`/`list64`: validity, offsets (child); `fixed-list`: validity (child); `struct`:
 *   validity (children); `sparse-union`: type ids (children); `dense-union`: type ids, 32-bit offsets (children);
 * - `list-view32`/`list-view64`: validity, offsets, sizes (child); `run-end`: no buffers (run ends, values);
 * - `indices`: a dictionary-encoded field: validity, `width`-byte indices into dictionary `dictionaryId`.
 */
export type Layout =
  | 'null'
  | 'bool'
  | 'fixed'
  | 'var32'
  | 'var64'
  | 'view'
  | 'list32'
  | 'list64'
  | 'list-view32'
  | 'list-view64'
  | 'run-end'
  | 'fixed-list'
  | 'struct'
  | 'sparse-union'
  | 'dense-union'
  | 'indices';

export interface Shape {
  /** Where the field is, for messages: `col`, `col.child`. */
  readonly path: string;
  /** The top-level column it belongs to. */
  readonly column: string;
  readonly layout: Layout;
  /** Bytes per value (fixed, indices). */
  readonly width: number;
  /** A value's parts, in bytes, each swapped on its own in a big-endian file (empty: bytes as they are). */
  readonly swap: readonly number[];
  readonly children: readonly Shape[];
  /** FixedSizeList: values per row. */
  readonly listSize: number;
  /** Unions: the type ids the children have. */
  readonly typeIds: readonly number[];
  readonly dictionaryId: bigint | undefined;
  /** Dictionary indices are signed integers (the usual case). */
  readonly signed: boolean;
}

export interface SchemaShape {
  readonly bigEndian: boolean;
  readonly fields: readonly Shape[];
  /** The values of each dictionary (their shape), by id. */
  readonly dictionaries: ReadonlyMap<bigint, Shape>;
  /** A list-view or run-end encoded field is somewhere in it: batches go through transport (encoded.ts). */
  readonly encoded: boolean;
}

const UNSUPPORTED: Partial<Record<Type, string>> = {
  [Type.NONE]: 'NONE (no type)',
};

function typeName(type: number): string {
  return (Type as unknown as Record<number, string>)[type] ?? `unknown type id ${type}`;
}

interface Walk {
  count: number;
  readonly dictionaries: Map<bigint, Shape>;
}

function shapeOf(field: FbField, path: string, column: string, depth: number, walk: Walk): Shape {
  if (++walk.count > MAX_FIELDS) throw corrupt(`the schema has more than ${MAX_FIELDS} fields`);
  if (depth > MAX_DEPTH) throw corrupt(`column "${column}" is nested more than ${MAX_DEPTH} levels deep (at ${path})`, column);
  const children: Shape[] = [];
  for (let k = 0; k < field.childrenLength(); k++) {
    const child = field.children(k);
    if (!child) throw corrupt(`field ${path} has a missing child ${k}`, column);
    children.push(shapeOf(child, `${path}.${child.name() ?? k}`, column, depth + 1, walk));
  }
  const values = valueShape(field, path, column, children);
  const encoding = field.dictionary();
  if (!encoding) return values;
  const id = encoding.id();
  // apache-arrow keys dictionaries by a JavaScript number: ids past 2^53 cannot be told apart.
  if (id < -(2n ** 53n) || id > 2n ** 53n)
    throw new IpcProblem(
      'ARROW_UNSUPPORTED',
      `field ${path} has dictionary id ${id}, beyond the ids this reader tells apart (±2^53)`,
      column,
    );
  // Two fields may share a dictionary (one dictionary batch serves both), when its values are of one type.
  const shared = walk.dictionaries.get(id);
  if (shared !== undefined && !sameLayout(shared, values))
    throw corrupt(`dictionary id ${id} is used by two fields of different types (${shared.path} and ${path})`, column);
  if (shared === undefined) walk.dictionaries.set(id, values);
  const index = encoding.indexType();
  const bits = index ? index.bitWidth() : 32;
  if (![8, 16, 32, 64].includes(bits)) throw corrupt(`field ${path} has dictionary indices of ${bits} bits`, column);
  return {
    path,
    column,
    layout: 'indices',
    width: bits / 8,
    swap: bits > 8 ? [bits / 8] : [],
    children: [],
    listSize: 0,
    typeIds: [],
    dictionaryId: id,
    signed: index ? index.isSigned() : true,
  };
}

/** Whether two fields' values are laid out alike (the same type, as far as their buffers go). */
function sameLayout(a: Shape, b: Shape): boolean {
  return (
    a.layout === b.layout &&
    a.width === b.width &&
    a.listSize === b.listSize &&
    a.dictionaryId === b.dictionaryId &&
    a.typeIds.join() === b.typeIds.join() &&
    a.children.length === b.children.length &&
    a.children.every((child, k) => sameLayout(child, b.children[k]!))
  );
}

/** The most digits a decimal of each width holds (the Arrow spec's bounds). */
const DECIMAL_DIGITS: Record<number, number> = { 32: 9, 64: 18, 128: 38, 256: 76 };

function valueShape(field: FbField, path: string, column: string, children: Shape[]): Shape {
  const type = field.typeType();
  const base = {
    path,
    column,
    children,
    listSize: 0,
    typeIds: [] as number[],
    dictionaryId: undefined,
    signed: false,
    width: 0,
    swap: [] as number[],
  };
  const fixed = (width: number, swap: number[] = [width]): Shape => ({ ...base, layout: 'fixed', width, swap: width === 1 ? [] : swap });
  const unsupported = UNSUPPORTED[type];
  if (unsupported !== undefined)
    throw new IpcProblem(
      'ARROW_UNSUPPORTED_TYPE',
      `column "${column}" has Arrow type ${unsupported}${path === column ? '' : ` (at ${path})`}, which this reader does not decode`,
      column,
    );
  const need = (n: number): void => {
    if (children.length !== n) throw corrupt(`field ${path} of type ${typeName(type)} has ${children.length} children, not ${n}`, column);
  };
  switch (type) {
    case Type.Null:
      return { ...base, layout: 'null' };
    case Type.Bool:
      return { ...base, layout: 'bool' };
    case Type.Int: {
      const bits = (field.type(new FbInt()) as FbInt | null)?.bitWidth() ?? 0;
      if (![8, 16, 32, 64].includes(bits)) throw corrupt(`field ${path} is an integer of ${bits} bits`, column);
      return fixed(bits / 8);
    }
    case Type.FloatingPoint: {
      const precision = (field.type(new FbFloatingPoint()) as FbFloatingPoint | null)?.precision() ?? 0;
      if (precision < 0 || precision > 2) throw corrupt(`field ${path} has floating-point precision ${precision}`, column);
      return fixed(2 << precision);
    }
    case Type.Decimal: {
      const decimal = field.type(new FbDecimal()) as FbDecimal | null;
      const bits = decimal?.bitWidth() ?? 128;
      if (![32, 64, 128, 256].includes(bits)) throw corrupt(`field ${path} is a decimal of ${bits} bits`, column);
      const precision = decimal?.precision() ?? 0;
      if (precision < 1 || precision > DECIMAL_DIGITS[bits]!)
        throw corrupt(`field ${path} is a ${bits}-bit decimal of precision ${precision}, outside 1..${DECIMAL_DIGITS[bits]}`, column);
      return fixed(bits / 8);
    }
    case Type.Date: {
      // DAY (int32) or MILLISECOND (int64), the default MILLISECOND.
      const unit = (field.type(new FbDate()) as FbDate | null)?.unit() ?? 1;
      if (unit !== 0 && unit !== 1) throw corrupt(`field ${path} is a date of unit ${unit}`, column);
      return fixed(unit === 0 ? 4 : 8);
    }
    case Type.Time: {
      const time = field.type(new FbTime()) as FbTime | null;
      const bits = time?.bitWidth() ?? 32;
      const unit = time?.unit() ?? 1;
      // SECOND and MILLISECOND are 32-bit, MICROSECOND and NANOSECOND 64-bit (the spec's pairs).
      if (unit < 0 || unit > 3 || bits !== (unit <= 1 ? 32 : 64))
        throw corrupt(`field ${path} is a time of unit ${unit} in ${bits} bits`, column);
      return fixed(bits / 8);
    }
    case Type.Timestamp:
    case Type.Duration: {
      const unit =
        type === Type.Timestamp
          ? ((field.type(new FbTimestamp()) as FbTimestamp | null)?.unit() ?? 0)
          : ((field.type(new FbDuration()) as FbDuration | null)?.unit() ?? 1);
      if (unit < 0 || unit > 3) throw corrupt(`field ${path} has time unit ${unit}`, column);
      return fixed(8);
    }
    case Type.Interval: {
      const unit = (field.type(new FbInterval()) as FbInterval | null)?.unit() ?? 0;
      // YEAR_MONTH: int32 months; DAY_TIME: int32 days, int32 ms; MONTH_DAY_NANO: int32, int32, int64.
      if (unit === 0) return fixed(4);
      if (unit === 1) return fixed(8, [4, 4]);
      if (unit === 2) return fixed(16, [4, 4, 8]);
      throw corrupt(`field ${path} has interval unit ${unit}`, column);
    }
    case Type.FixedSizeBinary: {
      const width = (field.type(new FbFixedSizeBinary()) as FbFixedSizeBinary | null)?.byteWidth() ?? -1;
      if (width < 1) throw corrupt(`field ${path} is fixed-size binary of width ${width}`, column);
      return { ...base, layout: 'fixed', width, swap: [] };
    }
    case Type.Binary:
    case Type.Utf8:
      return { ...base, layout: 'var32' };
    case Type.LargeBinary:
    case Type.LargeUtf8:
      return { ...base, layout: 'var64' };
    case Type.BinaryView:
    case Type.Utf8View:
      return { ...base, layout: 'view', width: 16 };
    case Type.List:
    case Type.Map:
      need(1);
      return { ...base, layout: 'list32' };
    case Type.LargeList:
      need(1);
      return { ...base, layout: 'list64' };
    case Type.ListView:
      need(1);
      return { ...base, layout: 'list-view32', width: 4, swap: [4] };
    case Type.LargeListView:
      need(1);
      return { ...base, layout: 'list-view64', width: 8, swap: [8] };
    case Type.RunEndEncoded: {
      need(2);
      const runEnds = children[0]!;
      if (runEnds.layout !== 'fixed' || ![2, 4, 8].includes(runEnds.width))
        throw corrupt(`field ${path} is run-end encoded with run ends that are not 16, 32 or 64-bit integers`, column);
      return { ...base, layout: 'run-end' };
    }
    case Type.FixedSizeList: {
      need(1);
      const listSize = (field.type(new FbFixedSizeList()) as FbFixedSizeList | null)?.listSize() ?? -1;
      if (listSize < 0) throw corrupt(`field ${path} is a fixed-size list of size ${listSize}`, column);
      return { ...base, layout: 'fixed-list', listSize };
    }
    case Type.Struct_:
      return { ...base, layout: 'struct' };
    case Type.Union: {
      const union = field.type(new FbUnion()) as FbUnion | null;
      const ids = union?.typeIdsArray();
      const typeIds = ids ? Array.from(ids) : children.map((_, k) => k);
      if (typeIds.length !== children.length)
        throw corrupt(`union field ${path} lists ${typeIds.length} type ids for ${children.length} children`, column);
      return { ...base, layout: union?.mode() === 1 ? 'dense-union' : 'sparse-union', typeIds };
    }
    default:
      throw new IpcProblem(
        'ARROW_UNSUPPORTED_TYPE',
        `column "${column}" has an Arrow type this reader does not know (${typeName(type)})${path === column ? '' : ` at ${path}`}`,
        column,
      );
  }
}

/** The layout of a schema (from a schema message or a file footer). */
export function shapeOfSchema(schema: FbSchema): SchemaShape {
  const walk: Walk = { count: 0, dictionaries: new Map() };
  const fields: Shape[] = [];
  for (let k = 0; k < schema.fieldsLength(); k++) {
    const field = schema.fields(k);
    if (!field) throw corrupt(`the schema's field ${k} is missing`);
    const name = field.name() ?? '';
    fields.push(shapeOf(field, name, name, 1, walk));
  }
  const encoded = (shape: Shape): boolean =>
    shape.layout === 'list-view32' || shape.layout === 'list-view64' || shape.layout === 'run-end' || shape.children.some(encoded);
  return { bigEndian: schema.endianness() === Endianness.Big, fields, dictionaries: walk.dictionaries, encoded: fields.some(encoded) };
}

/**
 * Reads a flatbuffer accessor chain, turning the RangeErrors and TypeErrors a damaged flatbuffer
 * causes into a corrupt-file problem about `what`.
 */
export function readFlatbuffer<T>(what: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof IpcProblem) throw error;
    throw corrupt(`${what} cannot be decoded (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** The message in `metadata` (its flatbuffer, without the length prefix). */
export function fbMessage(metadata: Uint8Array): FbMessage {
  return FbMessage.getRootAsMessage(new ByteBuffer(metadata));
}

export { FbSchema };
