/**
 * How the Parquet ingester maps Parquet column types to logical ones, and which logical types fit
 * an existing table's columns. Pure logic: no database.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SchemaElement, SchemaTree } from 'hyparquet';
import { describeParquetType } from '../../../plugins/parquet/column.ts';
import { mapParquetColumn } from '../../../plugins/parquet/types.ts';
import { fitsColumn } from '../../../src/columns/type-policy.ts';
import { parseSqlType } from '../../../src/columns/sql-types.ts';
import type { LogicalType } from '../../../src/types.ts';

function leaf(
  element: Omit<SchemaElement, 'name' | 'repetition_type'> & { name?: string; repetition_type?: SchemaElement['repetition_type'] },
): SchemaTree {
  return { children: [], count: 1, element: { name: 'c', repetition_type: 'OPTIONAL', ...element }, path: [element.name ?? 'c'] };
}

describe('parquet type mapping', () => {
  const cases: [string, SchemaTree, LogicalType | null, boolean?][] = [
    ['BOOLEAN', leaf({ type: 'BOOLEAN' }), { kind: 'boolean' }, true],
    ['INT32', leaf({ type: 'INT32' }), { kind: 'integer' }, true],
    ['INT32 INT_8', leaf({ type: 'INT32', converted_type: 'INT_8' }), { kind: 'smallint' }, true],
    [
      'INT32 INT(16,signed)',
      leaf({ type: 'INT32', logical_type: { type: 'INTEGER', bitWidth: 16, isSigned: true } }),
      { kind: 'smallint' },
      true,
    ],
    ['INT32 UINT_8', leaf({ type: 'INT32', converted_type: 'UINT_8' }), { kind: 'smallint' }, true],
    ['INT32 UINT_16', leaf({ type: 'INT32', converted_type: 'UINT_16' }), { kind: 'integer' }, true],
    ['INT32 UINT_32', leaf({ type: 'INT32', converted_type: 'UINT_32' }), { kind: 'bigint' }, true],
    ['INT64', leaf({ type: 'INT64' }), { kind: 'bigint' }, true],
    ['INT64 UINT_64', leaf({ type: 'INT64', converted_type: 'UINT_64' }), { kind: 'decimal', precision: 20, scale: 0 }, false],
    ['FLOAT', leaf({ type: 'FLOAT' }), { kind: 'real' }, true],
    ['DOUBLE', leaf({ type: 'DOUBLE' }), { kind: 'double' }, true],
    ['FLBA FLOAT16', leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 2, logical_type: { type: 'FLOAT16' } }), { kind: 'real' }, false],
    [
      'FLBA DECIMAL',
      leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 8, converted_type: 'DECIMAL', precision: 18, scale: 3 }),
      { kind: 'decimal', precision: 18, scale: 3 },
      true,
    ],
    [
      'INT64 DECIMAL (logical)',
      leaf({ type: 'INT64', logical_type: { type: 'DECIMAL', precision: 12, scale: 2 } }),
      { kind: 'decimal', precision: 12, scale: 2 },
      true,
    ],
    [
      'BYTE_ARRAY DECIMAL',
      leaf({ type: 'BYTE_ARRAY', converted_type: 'DECIMAL', precision: 30, scale: 3 }),
      { kind: 'decimal', precision: 30, scale: 3 },
      false,
    ],
    ['BYTE_ARRAY STRING', leaf({ type: 'BYTE_ARRAY', logical_type: { type: 'STRING' } }), { kind: 'text' }, true],
    ['BYTE_ARRAY UTF8', leaf({ type: 'BYTE_ARRAY', converted_type: 'UTF8' }), { kind: 'text' }, true],
    ['BYTE_ARRAY ENUM', leaf({ type: 'BYTE_ARRAY', converted_type: 'ENUM' }), { kind: 'text' }, false],
    ['BYTE_ARRAY JSON', leaf({ type: 'BYTE_ARRAY', converted_type: 'JSON' }), { kind: 'json' }, true],
    ['FLBA UUID', leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'UUID' } }), { kind: 'text' }, false],
    ['BYTE_ARRAY', leaf({ type: 'BYTE_ARRAY' }), { kind: 'bytes' }, true],
    ['INT32 DATE', leaf({ type: 'INT32', converted_type: 'DATE' }), { kind: 'date' }, true],
    ['INT32 TIME_MILLIS', leaf({ type: 'INT32', converted_type: 'TIME_MILLIS' }), { kind: 'time' }, false],
    [
      'INT64 TIME(MICROS)',
      leaf({ type: 'INT64', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'MICROS' } }),
      { kind: 'time' },
      true,
    ],
    [
      'INT64 TIMESTAMP(UTC)',
      leaf({ type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' } }),
      { kind: 'timestamptz' },
      true,
    ],
    [
      'INT64 TIMESTAMP(local)',
      leaf({ type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MILLIS' } }),
      { kind: 'timestamp' },
      true,
    ],
    ['INT64 TIMESTAMP_MICROS', leaf({ type: 'INT64', converted_type: 'TIMESTAMP_MICROS' }), { kind: 'timestamptz' }, true],
    // Decoded here: hyperd reads INT96 nanoseconds unsigned, other readers signed (see types.ts).
    ['INT96', leaf({ type: 'INT96' }), { kind: 'timestamp' }, false],
    ['REPEATED INT32', leaf({ type: 'INT32', repetition_type: 'REPEATED' }), { kind: 'json' }, false],
    ['BYTE_ARRAY GEOMETRY (WKB)', leaf({ type: 'BYTE_ARRAY', logical_type: { type: 'GEOMETRY' } }), { kind: 'bytes' }, false],
    ['BYTE_ARRAY GEOGRAPHY (WKB)', leaf({ type: 'BYTE_ARRAY', logical_type: { type: 'GEOGRAPHY' } }), { kind: 'bytes' }, false],
    // A logical type from a newer spec: its physical type, as the spec tells readers.
    [
      'INT32 with an unknown logical type',
      leaf({ type: 'INT32', logical_type: { field_40: {} } as unknown as SchemaElement['logical_type'] }),
      { kind: 'integer' },
      true,
    ],
    [
      'FLBA DECIMAL(40,2)',
      leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 17, logical_type: { type: 'DECIMAL', precision: 40, scale: 2 } }),
      { kind: 'text' },
      false,
    ],
    ['FLBA INTERVAL', leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 12, converted_type: 'INTERVAL' }), null],
    ['BYTE_ARRAY BSON', leaf({ type: 'BYTE_ARRAY', converted_type: 'BSON' }), null],
    ['BYTE_ARRAY VARIANT', leaf({ type: 'BYTE_ARRAY', logical_type: { type: 'VARIANT' } }), null],
    ['BYTE_ARRAY DATE (inconsistent)', leaf({ type: 'BYTE_ARRAY', converted_type: 'DATE' }), null],
    ['INT32 DECIMAL without precision', leaf({ type: 'INT32', converted_type: 'DECIMAL' }), null],
  ];
  for (const [label, node, expected, hyperReads] of cases) {
    it(`${label} → ${expected ? JSON.stringify(expected) : 'unsupported'}`, () => {
      const mapped = mapParquetColumn(node);
      if (expected === null) {
        assert.equal(mapped.ok, false);
        return;
      }
      assert.ok(mapped.ok, JSON.stringify(mapped));
      assert.deepEqual(mapped.column.type, expected);
      assert.equal(mapped.column.hyperReads, hyperReads);
    });
  }

  it('maps groups (lists, maps, structs) to json', () => {
    const element = leaf({ type: 'INT32', name: 'element', repetition_type: 'REQUIRED' });
    const list: SchemaTree = {
      children: [
        { children: [element], count: 2, element: { name: 'list', repetition_type: 'REPEATED', num_children: 1 }, path: ['l', 'list'] },
      ],
      count: 3,
      element: { name: 'l', repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'LIST' },
      path: ['l'],
    };
    const mapped = mapParquetColumn(list);
    assert.ok(mapped.ok);
    assert.deepEqual(mapped.column.type, { kind: 'json' });
    assert.equal(describeParquetType(list), 'group LIST');
  });

  it('refuses nested columns whose fields would not land as they are', () => {
    const listOf = (element: SchemaTree): SchemaTree => ({
      children: [
        { children: [element], count: 2, element: { name: 'list', repetition_type: 'REPEATED', num_children: 1 }, path: ['l', 'list'] },
      ],
      count: 3,
      element: { name: 'l', repetition_type: 'OPTIONAL', num_children: 1, converted_type: 'LIST' },
      path: ['l'],
    });
    const field = (element: Omit<SchemaElement, 'name'>): SchemaTree => ({
      children: [],
      count: 1,
      element: { name: 'element', ...element },
      path: ['l', 'list', 'element'],
    });
    const time = mapParquetColumn(listOf(field({ type: 'INT64', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'MICROS' } })));
    assert.ok(!time.ok);
    assert.match(time.reason, /"l\.list\.element" is a TIME/);
    const wide = mapParquetColumn(
      listOf(field({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'DECIMAL', precision: 30, scale: 2 } })),
    );
    assert.ok(!wide.ok);
    assert.match(wide.reason, /decimal of more than 15 digits/);
    const interval = mapParquetColumn(listOf(field({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 12, converted_type: 'INTERVAL' })));
    assert.ok(!interval.ok);
    assert.match(interval.reason, /INTERVAL/);
    const narrow = mapParquetColumn(listOf(field({ type: 'INT64', logical_type: { type: 'DECIMAL', precision: 12, scale: 2 } })));
    assert.ok(narrow.ok);
    const enums = mapParquetColumn(listOf(field({ type: 'BYTE_ARRAY', converted_type: 'ENUM' })));
    assert.ok(enums.ok && enums.column.codec.kind === 'nested' && enums.column.codec.utf8, 'ENUM fields inside are read as text');
    const bytes = mapParquetColumn(listOf(field({ type: 'BYTE_ARRAY' })));
    assert.ok(bytes.ok && bytes.column.codec.kind === 'nested' && !bytes.column.codec.utf8, 'raw binary inside stays bytes');
  });

  it('describes Parquet types for messages', () => {
    assert.equal(
      describeParquetType(leaf({ type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } })),
      'INT64 TIMESTAMP(MICROS, UTC)',
    );
    assert.equal(
      describeParquetType(leaf({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 12, converted_type: 'INTERVAL' })),
      'FIXED_LEN_BYTE_ARRAY(12) INTERVAL',
    );
  });
});

describe('parquet compatibility with existing columns', () => {
  const cases: [LogicalType, string, boolean][] = [
    [{ kind: 'integer' }, 'bigint', true],
    [{ kind: 'integer' }, 'integer', true],
    [{ kind: 'bigint' }, 'integer', false],
    [{ kind: 'smallint' }, 'numeric(5,0)', true],
    [{ kind: 'integer' }, 'numeric(18,3)', true],
    [{ kind: 'bigint' }, 'numeric(18,0)', false],
    [{ kind: 'bigint' }, 'double precision', true],
    [{ kind: 'integer' }, 'double precision', true],
    [{ kind: 'real' }, 'double precision', true],
    [{ kind: 'double' }, 'real', false],
    [{ kind: 'decimal', precision: 10, scale: 3 }, 'numeric(18,3)', true],
    [{ kind: 'decimal', precision: 10, scale: 3 }, 'numeric(18,2)', false],
    [{ kind: 'decimal', precision: 18, scale: 3 }, 'numeric(16,3)', false],
    [{ kind: 'decimal', precision: 9, scale: 0 }, 'integer', true],
    [{ kind: 'decimal', precision: 10, scale: 2 }, 'double precision', true],
    [{ kind: 'decimal', precision: 30, scale: 2 }, 'numeric', true],
    [{ kind: 'text' }, 'bigint', false],
    [{ kind: 'text' }, 'character varying(10)', true],
    [{ kind: 'text' }, 'json', true],
    [{ kind: 'bigint' }, 'text', true],
    [{ kind: 'timestamp' }, 'text', true],
    [{ kind: 'date' }, 'timestamp', true],
    [{ kind: 'date' }, 'timestamp with time zone', true],
    [{ kind: 'timestamp' }, 'timestamptz', true],
    [{ kind: 'timestamptz' }, 'timestamp(6) with time zone', true],
    [{ kind: 'time' }, 'time without time zone', true],
    [{ kind: 'bytes' }, 'bytea', true],
    [{ kind: 'json' }, 'jsonb', true],
    [{ kind: 'boolean' }, 'integer', false],
    [{ kind: 'integer' }, 'interval', false],
  ];
  for (const [type, sqlType, expected] of cases) {
    it(`${JSON.stringify(type)} into ${sqlType}: ${expected ? 'fits' : 'does not fit'}`, () => {
      assert.equal(fitsColumn(type, parseSqlType(sqlType)), expected);
    });
  }
});
