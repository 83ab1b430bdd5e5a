/**
 * Conformance cases no writer at hand makes, written by the tiny writer: what Spark puts in files
 * (INT96 timestamps) and newer spec features (GEOMETRY, GEOGRAPHY, logical types unknown to the
 * reader, decimals wider than 38 digits, a dictionary offset of 0 for "none").
 */
import { writeFile } from 'node:fs/promises';
import { stated } from './conformance-parquet.ts';
import { LANDS, type WriterCase } from './conformance-parquet-cases.ts';
import { miniParquet, plain, type ThriftField } from './conformance-parquet-mini.ts';

/** INT96: nanoseconds of the day (8 bytes), then the Julian day (4 bytes), little-endian, as Spark writes it. */
function int96(julianDay: number, nanos: bigint): Uint8Array {
  const b = new Uint8Array(12);
  const v = new DataView(b.buffer);
  v.setBigUint64(0, nanos, true);
  v.setUint32(8, julianDay, true);
  return b;
}

/** A DECIMAL's unscaled value as `width` bytes of big-endian two's complement. */
function twosComplement(value: bigint, width: number): Uint8Array {
  const b = new Uint8Array(width);
  let v = BigInt.asUintN(width * 8, value);
  for (let i = width - 1; i >= 0; i--) {
    b[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return b;
}

const text = (value: string) => new TextEncoder().encode(value);
const hex = (text: string) => Uint8Array.from(text.match(/../g)!.map((h) => parseInt(h, 16)));
const POINT_1_2 = '0101000000000000000000f03f0000000000000040';
const POINT_3_4 = '010100000000000000000008400000000000001040';

export function handWrittenCases(): WriterCase[] {
  const logical = (id: number, value: readonly ThriftField[] = []): ThriftField[] => [{ id, type: 'struct', value }];
  const file = miniParquet(
    [
      { name: 'id', type: 1, data: plain.i32([1, 2]) },
      { name: 'i96', type: 3, data: plain.fixed([int96(2460311, 3723004005000n), int96(2440588, 0n)]) },
      { name: 'geom', type: 6, logicalType: logical(17), data: plain.bytes([hex(POINT_1_2), hex(POINT_3_4)]) },
      { name: 'geog', type: 6, logicalType: logical(18), data: plain.bytes([hex(POINT_3_4), hex(POINT_1_2)]) },
      // A logical type from a newer spec (union field 40): read as its physical type, INT32.
      { name: 'future', type: 1, logicalType: logical(40), data: plain.i32([7, -7]) },
      {
        name: 'wide',
        type: 7,
        typeLength: 17,
        convertedType: 5,
        scale: 2,
        precision: 40,
        logicalType: logical(5, [
          { id: 1, type: 'i32', value: 2 },
          { id: 2, type: 'i32', value: 40 },
        ]),
        data: plain.fixed([twosComplement(1234567890123456789012345678901234567890n, 17), twosComplement(-1n, 17)]),
      },
    ],
    2,
    { dictionaryOffsetZero: true },
  );
  const sparkLike = miniParquet(
    [
      { name: 'id', type: 1, data: plain.i32([1, 2]) },
      { name: 'i96', type: 3, data: plain.fixed([int96(2460311, 3723004005000n), int96(2440588, 0n)]) },
      { name: 'future', type: 1, logicalType: logical(40), data: plain.i32([7, -7]) },
      { name: 'js', type: 6, convertedType: 19, data: plain.bytes([text('{"a": [1, 2]}'), text('null')]) },
    ],
    2,
    { dictionaryOffsetZero: true },
  );
  const bson = miniParquet(
    [
      { name: 'id', type: 1, data: plain.i32([1]) },
      { name: 'doc', type: 6, convertedType: 20, data: plain.bytes([Uint8Array.from([5, 0, 0, 0, 0])]) },
    ],
    1,
  );
  return [
    {
      name: 'hand-written: BSON',
      expect: {
        refused: {
          kind: 'schema',
          code: 'PARQUET_UNSUPPORTED_TYPE',
          column: 'doc',
          mentions: /column "doc" has Parquet type BYTE_ARRAY BSON/,
        },
      },
      write: (path) => writeFile(path, bson),
    },
    {
      name: 'hand-written: INT96 (Spark), JSON, a future logical type, dictionary offset 0',
      expect: LANDS,
      write: (path) => writeFile(path, sparkLike),
      stated: stated(
        [
          ['id', 'text'],
          ['i96', 'temporal'],
          ['future', 'text'],
          ['js', 'text'],
        ],
        [
          ['1', '2024-01-01 01:02:03.004005', '7', '{"a": [1, 2]}'],
          ['2', '1970-01-01 00:00:00', '-7', 'null'],
        ],
      ),
    },
    {
      name: 'hand-written: INT96 (Spark), GEOMETRY and GEOGRAPHY (WKB), a future logical type, DECIMAL(40,2), dictionary offset 0',
      expect: LANDS,
      write: (path) => writeFile(path, file),
      stated: stated(
        [
          ['id', 'text'],
          ['i96', 'temporal'],
          ['geom', 'blob'],
          ['geog', 'blob'],
          ['future', 'text'],
          ['wide', 'decimal'],
        ],
        [
          ['1', '2024-01-01 01:02:03.004005', POINT_1_2, POINT_3_4, '7', '12345678901234567890123456789012345678.90'],
          ['2', '1970-01-01 00:00:00', POINT_3_4, POINT_1_2, '-7', '-0.01'],
        ],
      ),
    },
  ];
}
