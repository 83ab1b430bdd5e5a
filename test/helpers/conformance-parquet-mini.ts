/**
 * A tiny Parquet writer for tests: flat REQUIRED columns, PLAIN encoding, one row group. It writes
 * what the other writers at hand cannot (INT96, ENUM, INTERVAL, GEOMETRY, ...), and, through
 * `Hostile`, files whose footer or page headers state sizes, counts and offsets that are wrong.
 */
import { Buffer } from 'node:buffer';

// ---------------------------------------------------------------------------------------------
// A tiny Parquet writer: flat REQUIRED columns, PLAIN encoding, uncompressed, one row group.
// hyperd cannot write INT96, unsigned ints, ENUM, UUID, INTERVAL ...; this can.
// ---------------------------------------------------------------------------------------------

export type ThriftField =
  | { readonly id: number; readonly type: 'i32' | 'i64'; readonly value: number | bigint }
  | { readonly id: number; readonly type: 'bin'; readonly value: string }
  | { readonly id: number; readonly type: 'bool'; readonly value: boolean }
  | { readonly id: number; readonly type: 'struct'; readonly value: readonly ThriftField[] }
  | { readonly id: number; readonly type: 'list'; readonly elem: 'i32'; readonly value: readonly number[] }
  | { readonly id: number; readonly type: 'list'; readonly elem: 'bin'; readonly value: readonly string[] }
  | { readonly id: number; readonly type: 'list'; readonly elem: 'struct'; readonly value: readonly (readonly ThriftField[])[] };

/** Thrift compact protocol, just what a footer and a page header need. */
export function thrift(fields: readonly ThriftField[]): Uint8Array {
  const out: number[] = [];
  const varint = (n: bigint) => {
    let v = n;
    do {
      let b = Number(v & 0x7fn);
      v >>= 7n;
      if (v > 0n) b |= 0x80;
      out.push(b);
    } while (v > 0n);
  };
  const zigzag = (n: bigint) => varint(n >= 0n ? n << 1n : (-n << 1n) - 1n);
  const binary = (s: string) => {
    const bytes = new TextEncoder().encode(s);
    varint(BigInt(bytes.length));
    out.push(...bytes);
  };
  const listHeader = (size: number, elemType: number) => {
    if (size < 15) out.push((size << 4) | elemType);
    else {
      out.push(0xf0 | elemType);
      varint(BigInt(size));
    }
  };
  const struct = (list: readonly ThriftField[]) => {
    let last = 0;
    for (const f of [...list].sort((a, b) => a.id - b.id)) {
      const typeId = f.type === 'bool' ? (f.value ? 1 : 2) : { i32: 5, i64: 6, bin: 8, list: 9, struct: 12 }[f.type];
      // Short form: the id as a delta of 1..15 from the last; long form: the type, then the id.
      if (f.id > last && f.id - last <= 15) out.push(((f.id - last) << 4) | typeId);
      else {
        out.push(typeId);
        zigzag(BigInt(f.id));
      }
      last = f.id;
      switch (f.type) {
        case 'i32':
        case 'i64':
          zigzag(BigInt(f.value));
          break;
        case 'bin':
          binary(f.value);
          break;
        case 'bool':
          break;
        case 'struct':
          struct(f.value);
          break;
        case 'list':
          if (f.elem === 'i32') {
            listHeader(f.value.length, 5);
            for (const v of f.value) zigzag(BigInt(v));
          } else if (f.elem === 'bin') {
            listHeader(f.value.length, 8);
            for (const v of f.value) binary(v);
          } else {
            listHeader(f.value.length, 12);
            for (const v of f.value) struct(v);
          }
      }
    }
    out.push(0);
  };
  struct(fields);
  return Uint8Array.from(out);
}

export interface MiniColumn {
  readonly name: string;
  /** 0 BOOLEAN, 1 INT32, 2 INT64, 3 INT96, 4 FLOAT, 5 DOUBLE, 6 BYTE_ARRAY, 7 FIXED_LEN_BYTE_ARRAY */
  readonly type: number;
  readonly typeLength?: number;
  /** Parquet's ConvertedType enum: 4 ENUM, 5 DECIMAL, 7 TIME_MILLIS, 11 UINT_8, 13 UINT_32, 19 JSON, 21 INTERVAL ... */
  readonly convertedType?: number;
  readonly scale?: number;
  readonly precision?: number;
  /** The LogicalType union, as thrift fields. */
  readonly logicalType?: readonly ThriftField[];
  /** PLAIN-encoded values of every row. */
  readonly data: Uint8Array;
}

/** Sizes, counts and offsets a damaged or hostile file states wrongly (the first column's). */
export interface Hostile {
  readonly pageNumValues?: number;
  readonly uncompressedPageSize?: number;
  readonly compressedPageSize?: number;
  /** The column chunk's codec in the footer (the bytes stay uncompressed): 1 SNAPPY ... */
  readonly codec?: number;
  readonly dataPageOffset?: number | bigint;
  readonly chunkNumValues?: number | bigint;
  /** The row group's row count (the file's stays `numRows`). */
  readonly groupRows?: number | bigint;
  /** The footer's own row total (the row group's stays `numRows`): a writer's wrong sum. */
  readonly fileRows?: number | bigint;
  /** `dictionary_page_offset: 0` in the column chunk (some writers' way of saying "none"). */
  readonly dictionaryOffsetZero?: boolean;
}

export function miniParquet(columns: readonly MiniColumn[], numRows: number, hostile: Hostile = {}): Uint8Array {
  const parts: Uint8Array[] = [new TextEncoder().encode('PAR1')];
  let offset = 4;
  const chunks: ThriftField[][] = [];
  for (const [index, col] of columns.entries()) {
    const h: Hostile = index === 0 ? hostile : {};
    const dataPageHeader: ThriftField[] = [
      { id: 1, type: 'i32', value: h.pageNumValues ?? numRows },
      { id: 2, type: 'i32', value: 0 }, // PLAIN
      { id: 3, type: 'i32', value: 3 }, // RLE
      { id: 4, type: 'i32', value: 3 },
    ];
    const header = thrift([
      { id: 1, type: 'i32', value: 0 }, // DATA_PAGE
      { id: 2, type: 'i32', value: h.uncompressedPageSize ?? col.data.length },
      { id: 3, type: 'i32', value: h.compressedPageSize ?? col.data.length },
      { id: 5, type: 'struct', value: dataPageHeader },
    ]);
    const size = header.length + col.data.length;
    chunks.push([
      { id: 2, type: 'i64', value: h.dataPageOffset ?? offset },
      {
        id: 3,
        type: 'struct',
        value: [
          { id: 1, type: 'i32', value: col.type },
          { id: 2, type: 'list', elem: 'i32', value: [0] },
          { id: 3, type: 'list', elem: 'bin', value: [col.name] },
          { id: 4, type: 'i32', value: h.codec ?? 0 }, // UNCOMPRESSED
          { id: 5, type: 'i64', value: h.chunkNumValues ?? numRows },
          { id: 6, type: 'i64', value: size },
          { id: 7, type: 'i64', value: size },
          { id: 9, type: 'i64', value: h.dataPageOffset ?? offset },
          ...(h.dictionaryOffsetZero ? [{ id: 11, type: 'i64', value: 0 } as const] : []),
        ],
      },
    ]);
    parts.push(header, col.data);
    offset += size;
  }
  const schema: ThriftField[][] = [
    [
      { id: 4, type: 'bin', value: 'schema' },
      { id: 5, type: 'i32', value: columns.length },
    ],
  ];
  for (const col of columns) {
    const element: ThriftField[] = [
      { id: 1, type: 'i32', value: col.type },
      { id: 3, type: 'i32', value: 0 }, // REQUIRED
      { id: 4, type: 'bin', value: col.name },
    ];
    if (col.typeLength !== undefined) element.push({ id: 2, type: 'i32', value: col.typeLength });
    if (col.convertedType !== undefined) element.push({ id: 6, type: 'i32', value: col.convertedType });
    if (col.scale !== undefined) element.push({ id: 7, type: 'i32', value: col.scale });
    if (col.precision !== undefined) element.push({ id: 8, type: 'i32', value: col.precision });
    if (col.logicalType) element.push({ id: 10, type: 'struct', value: col.logicalType });
    schema.push(element);
  }
  const footer = thrift([
    { id: 1, type: 'i32', value: 1 },
    { id: 2, type: 'list', elem: 'struct', value: schema },
    { id: 3, type: 'i64', value: hostile.fileRows ?? numRows },
    {
      id: 4,
      type: 'list',
      elem: 'struct',
      value: [
        [
          { id: 1, type: 'list', elem: 'struct', value: chunks },
          { id: 2, type: 'i64', value: offset - 4 },
          { id: 3, type: 'i64', value: hostile.groupRows ?? numRows },
        ],
      ],
    },
  ]);
  const length = new Uint8Array(4);
  new DataView(length.buffer).setUint32(0, footer.length, true);
  parts.push(footer, length, new TextEncoder().encode('PAR1'));
  return Buffer.concat(parts);
}

export const plain = {
  i32(values: readonly number[]): Uint8Array {
    const b = new Uint8Array(values.length * 4);
    const v = new DataView(b.buffer);
    values.forEach((x, i) => v.setInt32(i * 4, x, true));
    return b;
  },
  i64(values: readonly bigint[]): Uint8Array {
    const b = new Uint8Array(values.length * 8);
    const v = new DataView(b.buffer);
    values.forEach((x, i) => v.setBigInt64(i * 8, x, true));
    return b;
  },
  bytes(values: readonly Uint8Array[]): Uint8Array {
    return Buffer.concat(
      values.flatMap((x) => {
        const length = Buffer.alloc(4);
        length.writeUInt32LE(x.length);
        return [length, x];
      }),
    );
  },
  fixed(values: readonly Uint8Array[]): Uint8Array {
    return Buffer.concat(values);
  },
};
