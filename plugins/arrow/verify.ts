/**
 * The FlatBuffers of Arrow IPC (message metadata and the file footer) verified before anything
 * reads them, as Arrow C++ (`flatbuffers::Verifier`, depth 128) and arrow-rs (which also checks
 * that strings are UTF-8) verify them: every offset inside the buffer and aligned, every vtable
 * inside the buffer and of even size, every table's fields inside the buffer and aligned, every
 * vector's length inside the buffer, every string NUL-terminated and UTF-8, unions by their type,
 * nesting and the number of tables bounded. The JavaScript readers (flatbuffers, apache-arrow)
 * check none of this: a damaged offset reads whatever bytes it points at.
 *
 * The tables are those of Arrow's Message.fbs, Schema.fbs and File.fbs, field by field (index =
 * the field's position in the .fbs); fields a newer writer adds are not looked at.
 */

import { corrupt, IpcProblem } from './problem.ts';

/** What a field holds. */
type Kind =
  | { readonly scalar: number }
  | { readonly table: () => TableSpec }
  | { readonly string: true }
  | { readonly vectorOf: number }
  | { readonly vectorOfTables: () => TableSpec }
  | { readonly union: Readonly<Record<number, () => TableSpec>> };

interface TableSpec {
  readonly name: string;
  readonly fields: readonly (readonly [string, Kind])[];
}

const i8: Kind = { scalar: 1 };
const i16: Kind = { scalar: 2 };
const i32: Kind = { scalar: 4 };
const i64: Kind = { scalar: 8 };
const str: Kind = { string: true };
const table = (spec: () => TableSpec): Kind => ({ table: spec });
const tables = (spec: () => TableSpec): Kind => ({ vectorOfTables: spec });
const emptyTable = (name: string): TableSpec => ({ name, fields: [] });

const KEY_VALUE: TableSpec = {
  name: 'KeyValue',
  fields: [
    ['key', str],
    ['value', str],
  ],
};
const INT: TableSpec = {
  name: 'Int',
  fields: [
    ['bitWidth', i32],
    ['is_signed', i8],
  ],
};
const TYPES: Record<number, () => TableSpec> = {
  1: () => emptyTable('Null'),
  2: () => INT,
  3: () => ({ name: 'FloatingPoint', fields: [['precision', i16]] }),
  4: () => emptyTable('Binary'),
  5: () => emptyTable('Utf8'),
  6: () => emptyTable('Bool'),
  7: () => ({
    name: 'Decimal',
    fields: [
      ['precision', i32],
      ['scale', i32],
      ['bitWidth', i32],
    ],
  }),
  8: () => ({ name: 'Date', fields: [['unit', i16]] }),
  9: () => ({
    name: 'Time',
    fields: [
      ['unit', i16],
      ['bitWidth', i32],
    ],
  }),
  10: () => ({
    name: 'Timestamp',
    fields: [
      ['unit', i16],
      ['timezone', str],
    ],
  }),
  11: () => ({ name: 'Interval', fields: [['unit', i16]] }),
  12: () => emptyTable('List'),
  13: () => emptyTable('Struct_'),
  14: () => ({
    name: 'Union',
    fields: [
      ['mode', i16],
      ['typeIds', { vectorOf: 4 }],
    ],
  }),
  15: () => ({ name: 'FixedSizeBinary', fields: [['byteWidth', i32]] }),
  16: () => ({ name: 'FixedSizeList', fields: [['listSize', i32]] }),
  17: () => ({ name: 'Map', fields: [['keysSorted', i8]] }),
  18: () => ({ name: 'Duration', fields: [['unit', i16]] }),
  19: () => emptyTable('LargeBinary'),
  20: () => emptyTable('LargeUtf8'),
  21: () => emptyTable('LargeList'),
  22: () => emptyTable('RunEndEncoded'),
  23: () => emptyTable('BinaryView'),
  24: () => emptyTable('Utf8View'),
  25: () => emptyTable('ListView'),
  26: () => emptyTable('LargeListView'),
};
const DICTIONARY_ENCODING: TableSpec = {
  name: 'DictionaryEncoding',
  fields: [
    ['id', i64],
    ['indexType', table(() => INT)],
    ['isOrdered', i8],
    ['dictionaryKind', i16],
  ],
};
const FIELD: TableSpec = {
  name: 'Field',
  fields: [
    ['name', str],
    ['nullable', i8],
    ['type_type', i8],
    ['type', { union: TYPES }],
    ['dictionary', table(() => DICTIONARY_ENCODING)],
    ['children', tables(() => FIELD)],
    ['custom_metadata', tables(() => KEY_VALUE)],
  ],
};
const SCHEMA: TableSpec = {
  name: 'Schema',
  fields: [
    ['endianness', i16],
    ['fields', tables(() => FIELD)],
    ['custom_metadata', tables(() => KEY_VALUE)],
    ['features', { vectorOf: 8 }],
  ],
};
const RECORD_BATCH: TableSpec = {
  name: 'RecordBatch',
  fields: [
    ['length', i64],
    ['nodes', { vectorOf: 16 }],
    ['buffers', { vectorOf: 16 }],
    [
      'compression',
      table(() => ({
        name: 'BodyCompression',
        fields: [
          ['codec', i8],
          ['method', i8],
        ],
      })),
    ],
    ['variadicBufferCounts', { vectorOf: 8 }],
  ],
};
const MESSAGE: TableSpec = {
  name: 'Message',
  fields: [
    ['version', i16],
    ['header_type', i8],
    [
      'header',
      {
        union: {
          1: () => SCHEMA,
          2: () => ({
            name: 'DictionaryBatch',
            fields: [
              ['id', i64],
              ['data', table(() => RECORD_BATCH)],
              ['isDelta', i8],
            ],
          }),
          3: () => RECORD_BATCH,
          // Tensors are refused once read; their tables are only located here.
          4: () => emptyTable('Tensor'),
          5: () => emptyTable('SparseTensor'),
        },
      },
    ],
    ['bodyLength', i64],
    ['custom_metadata', tables(() => KEY_VALUE)],
  ],
};
const FOOTER: TableSpec = {
  name: 'Footer',
  fields: [
    ['version', i16],
    ['schema', table(() => SCHEMA)],
    ['dictionaries', { vectorOf: 24 }],
    ['recordBatches', { vectorOf: 24 }],
    ['custom_metadata', tables(() => KEY_VALUE)],
  ],
};

/** Arrow C++'s bound on nesting; its bound on tables is 8 per byte of the buffer. */
const MAX_DEPTH = 128;
/** Offsets and sizes are 31-bit in FlatBuffers. */
const MAX_BUFFER = 0x7fffffff;

/** What verification found wrong: `where` is the path to it (`Message.header.fields[2].name`). */
export class FlatbufferInvalid extends Error {
  constructor(
    readonly where: string,
    readonly what: string,
    /** A field's name whose bytes are not UTF-8 (else some other string, or not about a string). */
    readonly fieldName = false,
  ) {
    super(`${where}: ${what}`);
    this.name = 'FlatbufferInvalid';
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

class Verifier {
  readonly #view: DataView;
  readonly #bytes: Uint8Array;
  #depth = 0;
  #tables = 0;
  readonly #maxTables: number;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.#maxTables = 8 * bytes.length;
  }

  #inside(at: number, size: number, align: number, where: string, what: string): void {
    if (at < 0 || at + size > this.#bytes.length)
      throw new FlatbufferInvalid(where, `${what} lies outside the ${this.#bytes.length}-byte buffer (at ${at}, ${size} bytes)`);
    if (align > 1 && at % align !== 0) throw new FlatbufferInvalid(where, `${what} at ${at} is not aligned to ${align} bytes`);
  }

  /** The position an offset at `at` points to. */
  #offset(at: number, where: string): number {
    this.#inside(at, 4, 4, where, 'an offset');
    const o = this.#view.getUint32(at, true);
    if (o === 0 || o > MAX_BUFFER) throw new FlatbufferInvalid(where, `an offset of ${o}`);
    this.#inside(at + o, 1, 1, where, 'the target of an offset');
    return at + o;
  }

  root(spec: TableSpec): void {
    if (this.#bytes.length < 8 || this.#bytes.length > MAX_BUFFER)
      throw new FlatbufferInvalid(spec.name, `a buffer of ${this.#bytes.length} bytes`);
    this.table(this.#offset(0, spec.name), spec, spec.name);
  }

  table(at: number, spec: TableSpec, where: string): void {
    if (++this.#depth > MAX_DEPTH) throw new FlatbufferInvalid(where, `tables nested more than ${MAX_DEPTH} deep`);
    if (++this.#tables > this.#maxTables) throw new FlatbufferInvalid(where, `more than ${this.#maxTables} tables`);
    this.#inside(at, 4, 4, where, 'a table');
    const vtable = at - this.#view.getInt32(at, true);
    this.#inside(vtable, 2, 2, where, 'a vtable');
    const vsize = this.#view.getUint16(vtable, true);
    // The JavaScript reader reads vtable entries as signed 16-bit numbers: past 2^15 they would point backwards.
    if (vsize % 2 !== 0 || vsize >= 0x8000) throw new FlatbufferInvalid(where, `a vtable of ${vsize} bytes`);
    this.#inside(vtable, vsize, 2, where, 'a vtable');
    const types = new Map<number, number>();
    spec.fields.forEach(([name, kind], k) => {
      const entry = 4 + 2 * k;
      const fieldOffset = entry + 2 <= vsize ? this.#view.getUint16(vtable + entry, true) : 0;
      if (fieldOffset === 0) return;
      const path = `${where}.${name}`;
      if (fieldOffset >= 0x8000) throw new FlatbufferInvalid(path, `a field offset of ${fieldOffset}`);
      const field = at + fieldOffset;
      if ('scalar' in kind) {
        this.#inside(field, kind.scalar, kind.scalar, path, 'a field');
        if (kind.scalar === 1) types.set(k, this.#bytes[field]!);
        return;
      }
      const target = this.#offset(field, path);
      if ('string' in kind) this.string(target, path, name === 'name' && spec === FIELD);
      else if ('table' in kind) this.table(target, kind.table(), path);
      else if ('vectorOf' in kind) this.vector(target, kind.vectorOf, path);
      else if ('vectorOfTables' in kind) {
        const n = this.vector(target, 4, path);
        const element = kind.vectorOfTables();
        for (let i = 0; i < n; i++) this.table(this.#offset(target + 4 + 4 * i, `${path}[${i}]`), element, `${path}[${i}]`);
      } else {
        // A union's type is the field before it (`header_type`, `type_type`): NONE or a type this
        // reader does not know is left for the reader to refuse, as the reference verifiers do.
        const type = types.get(k - 1) ?? 0;
        const element = kind.union[type];
        if (element) this.table(target, element(), path);
      }
    });
    this.#depth--;
  }

  /** A vector of `n` elements of `size` bytes at `at`; returns `n`. */
  vector(at: number, size: number, where: string): number {
    this.#inside(at, 4, 4, where, 'a vector length');
    const n = this.#view.getUint32(at, true);
    if (n >= MAX_BUFFER / size) throw new FlatbufferInvalid(where, `a vector of ${n} elements`);
    this.#inside(at + 4, n * size, 1, where, `a vector of ${n} elements`);
    return n;
  }

  string(at: number, where: string, fieldName: boolean): void {
    const n = this.vector(at, 1, where);
    this.#inside(at + 4 + n, 1, 1, where, "a string's terminating NUL");
    if (this.#bytes[at + 4 + n] !== 0) throw new FlatbufferInvalid(where, 'a string without its terminating NUL');
    try {
      utf8.decode(this.#bytes.subarray(at + 4, at + 4 + n));
    } catch {
      throw new FlatbufferInvalid(where, 'a string that is not valid UTF-8', fieldName);
    }
  }
}

function verified(what: string, bytes: Uint8Array, spec: TableSpec): void {
  try {
    new Verifier(bytes).root(spec);
  } catch (error) {
    if (!(error instanceof FlatbufferInvalid)) throw error;
    if (error.fieldName) throw new IpcProblem('ENCODING_INVALID', `a field name in ${what} (${error.where}) is not valid UTF-8`);
    throw corrupt(`${what} fails FlatBuffers verification: ${error.message}`);
  }
}

/** Verifies a message's metadata (the flatbuffer after its length prefix); throws an `IpcProblem`. */
export function verifyMessage(bytes: Uint8Array, what: string): void {
  verified(what, bytes, MESSAGE);
}

/** Verifies a file footer's flatbuffer; throws an `IpcProblem`. */
export function verifyFooter(bytes: Uint8Array): void {
  verified('the Arrow file footer', bytes, FOOTER);
}
