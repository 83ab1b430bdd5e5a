/**
 * The one reader of SQL type names (`parseSqlType`), the fit rules every typed ingester shares,
 * and the Arrow and Parquet rules built on them, side by side. Pure logic: no database.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as arrow from '../plugins/arrow/types.ts';
import * as parquet from '../plugins/parquet/types.ts';
import { isLosslessFit } from '../src/column-fit.ts';
import { INTEGER_DIGITS, isIntegerFamily, parseSqlType, type SqlType, wholeDigits } from '../src/sql-types.ts';
import type { LogicalType } from '../src/types.ts';

describe('parseSqlType', () => {
  // Each reading, then the spellings that give it: as Hyper or PostgreSQL report it first, then
  // aliases either accepts in DDL, then other case and spacing.
  const readings: [SqlType, ...string[]][] = [
    [{ family: 'boolean' }, 'boolean', 'bool', 'BOOLEAN'],
    [{ family: 'smallint' }, 'smallint', 'int2'],
    [{ family: 'integer' }, 'integer', 'int', 'int4', 'INTEGER', ' Integer\t'],
    [{ family: 'bigint' }, 'bigint', 'int8', '  BigInt\n'],
    [{ family: 'real' }, 'real', 'float4'],
    [{ family: 'double' }, 'double precision', 'float8', 'float', 'double', 'Double   Precision'],
    [{ family: 'numeric', precision: 18, scale: 3 }, 'numeric(18,3)', 'decimal(18,3)', 'NUMERIC ( 18 , 3 )', 'numeric(18, 3)'],
    [{ family: 'numeric', precision: 5, scale: 0 }, 'numeric(5,0)', 'decimal(5)', 'Numeric (5)'],
    [{ family: 'numeric', scale: 0 }, 'numeric', 'decimal'],
    [{ family: 'text' }, 'text', 'character varying', 'bpchar', 'name', 'citext', 'varchar', 'TEXT'],
    [{ family: 'text', length: 20 }, 'character varying(20)', 'varchar(20)', 'char varying(20)', 'Character Varying (20)'],
    [{ family: 'text', length: 3 }, 'character(3)', 'char(3)', 'bpchar(3)'],
    // CHARACTER alone is CHARACTER(1)
    [{ family: 'text', length: 1 }, 'character(1)', 'character', 'char'],
    [{ family: 'json' }, 'json', 'jsonb'],
    [{ family: 'bytes' }, 'bytea'],
    [{ family: 'date' }, 'date', 'DATE'],
    [{ family: 'uuid' }, 'uuid'],
    [{ family: 'time' }, 'time', 'time without time zone', 'Time  Without Time Zone'],
    [{ family: 'time', fractionalDigits: 3 }, 'time(3) without time zone', 'time(3)'],
    [{ family: 'timestamp' }, 'timestamp', 'timestamp without time zone'],
    [{ family: 'timestamp', fractionalDigits: 0 }, 'timestamp(0) without time zone', 'timestamp(0)', 'TIMESTAMP ( 0 )'],
    [{ family: 'timestamptz' }, 'timestamptz', 'timestamp with time zone', 'TIMESTAMP WITH TIME ZONE'],
    [{ family: 'timestamptz', fractionalDigits: 6 }, 'timestamp(6) with time zone', 'timestamptz(6)', 'TIMESTAMP (6)  WITH\nTIME ZONE'],
    // Arrays: PostgreSQL spells every dimension count as one `[]`; the element is read as above.
    [{ family: 'array', element: { family: 'text' } }, 'text[]', 'TEXT [ ]'],
    [{ family: 'array', element: { family: 'text', length: 5 } }, 'character varying(5)[]'],
    [{ family: 'array', element: { family: 'integer' } }, 'integer[]', 'int[][]', 'INT [ ] [ ]', 'int4[3]'],
    [{ family: 'array', element: { family: 'numeric', precision: 10, scale: 2 } }, 'numeric(10,2)[]'],
    [{ family: 'array', element: { family: 'other', sql: 'interval' } }, 'interval[]'],
  ];
  for (const [expected, ...spellings] of readings) {
    it(`reads ${spellings.map((sql) => JSON.stringify(sql)).join(', ')} as ${JSON.stringify(expected)}`, () => {
      for (const sql of spellings) assert.deepEqual(parseSqlType(sql), expected, JSON.stringify(sql));
    });
  }

  // Types no ingester maps to keep the database's own spelling, for messages.
  const others = [
    'interval',
    'oid',
    'tabgeography',
    'money',
    'bit(3)',
    'time with time zone',
    'timetz',
    '"char"',
    'mood',
    's.Mood',
    'text.kind',
    'textual',
    'Integer Precision',
    'numeric(5,-2)',
    'numeric(x)',
    'varchar(n)',
    'bytes',
    '',
  ];
  for (const sql of others) {
    it(`reads ${JSON.stringify(sql)} as a type of its own`, () => {
      assert.deepEqual(parseSqlType(sql), { family: 'other', sql });
    });
  }

  it('knows the digits of integer types and of numerics', () => {
    assert.deepEqual(INTEGER_DIGITS, { smallint: 5, integer: 10, bigint: 19 });
    // The largest value of each type has exactly that many digits.
    assert.equal(String(2 ** 15 - 1).length, INTEGER_DIGITS.smallint);
    assert.equal(String(2 ** 31 - 1).length, INTEGER_DIGITS.integer);
    assert.equal(String(2n ** 63n - 1n).length, INTEGER_DIGITS.bigint);
    assert.equal(isIntegerFamily('bigint'), true);
    assert.equal(isIntegerFamily('numeric'), false);
    assert.equal(isIntegerFamily('toString'), false);
    assert.equal(wholeDigits({ precision: 18, scale: 3 }), 15);
    assert.equal(wholeDigits({ scale: 0 }), Infinity);
  });
});

const t = (kind: Exclude<LogicalType['kind'], 'decimal'>): LogicalType => ({ kind });
const dec = (precision: number, scale: number): LogicalType => ({ kind: 'decimal', precision, scale });

describe('isLosslessFit', () => {
  // [file type, table column types it fits, table column types it does not fit]
  const cases: [LogicalType, string[], string[]][] = [
    [t('smallint'), ['smallint', 'bigint', 'numeric(5,0)', 'real', 'double precision'], ['numeric(4,0)', 'boolean']],
    [t('integer'), ['integer', 'numeric(10,0)', 'numeric', 'double precision'], ['smallint', 'numeric(11,2)', 'real']],
    [t('bigint'), ['bigint', 'numeric(19,0)', 'numeric'], ['integer', 'double precision']],
    [t('real'), ['real', 'double precision'], ['numeric(10,2)']],
    [t('double'), ['double precision'], ['real', 'numeric']],
    [dec(10, 2), ['numeric(10,2)', 'numeric(12,2)', 'numeric(11,3)', 'numeric', 'double precision'], ['numeric(12,1)', 'numeric(10,3)', 'bigint']],
    [dec(15, 0), ['double precision', 'numeric(15,0)'], ['bigint', 'integer']],
    [dec(16, 2), ['numeric(16,2)'], ['double precision']],
    [t('date'), ['date', 'timestamp', 'timestamp with time zone'], ['time']],
    [t('timestamp'), ['timestamp without time zone'], ['date', 'timestamptz']],
    [t('boolean'), ['boolean', 'character varying(1)', 'text'], ['integer']],
    [t('json'), ['json', 'jsonb', 'text'], ['bytea']],
    [t('bytes'), ['bytea', 'text'], ['json']],
    [t('text'), ['text', 'character(3)', 'name'], ['json', 'uuid', 'text[]', 'interval']],
  ];
  for (const [type, fits, misfits] of cases) {
    it(`${JSON.stringify(type)} fits ${fits.join(', ')}; not ${misfits.join(', ')}`, () => {
      for (const sql of fits) assert.equal(isLosslessFit(type, parseSqlType(sql)), true, sql);
      for (const sql of misfits) assert.equal(isLosslessFit(type, parseSqlType(sql)), false, sql);
    });
  }
});

describe('Arrow and Parquet rules on the one reading of a column type', () => {
  // [file type, columns Arrow alone takes it into, columns Parquet alone takes it into]
  const differences: [LogicalType, string[], string[]][] = [
    [t('bigint'), ['double precision'], ['text[]', 'character varying(3)[]']],
    [t('timestamp'), ['timestamp with time zone'], ['timestamp(3) without time zone']],
    [t('timestamptz'), ['timestamp without time zone'], ['timestamp(6) with time zone']],
    [t('time'), [], ['time(6) without time zone']],
    [t('text'), [], ['json', 'jsonb', 'uuid']],
    [dec(20, 0), [], ['double precision', 'numeric']],
    [dec(9, 0), [], ['integer', 'bigint']],
  ];
  for (const [type, arrowOnly, parquetOnly] of differences) {
    it(`${JSON.stringify(type)}: only Arrow into ${arrowOnly.join(', ') || 'nothing'}, only Parquet into ${parquetOnly.join(', ')}`, () => {
      for (const sql of arrowOnly) assert.deepEqual([arrow.isCompatible(type, parseSqlType(sql)), parquet.isCompatible(type, parseSqlType(sql))], [true, false], sql);
      for (const sql of parquetOnly) assert.deepEqual([arrow.isCompatible(type, parseSqlType(sql)), parquet.isCompatible(type, parseSqlType(sql))], [false, true], sql);
    });
  }

  it('agree on the rest', () => {
    const both: [LogicalType, string][] = [[t('integer'), 'bigint'], [t('bigint'), 'character varying(3)'], [dec(10, 2), 'numeric(12,3)'], [t('date'), 'timestamptz']];
    const neither: [LogicalType, string][] = [[dec(10, 0), 'integer'], [t('bigint'), 'integer[]'], [t('integer'), 'interval'], [t('text'), 'bigint']];
    for (const [type, sql] of both) assert.deepEqual([arrow.isCompatible(type, parseSqlType(sql)), parquet.isCompatible(type, parseSqlType(sql))], [true, true], sql);
    for (const [type, sql] of neither) assert.deepEqual([arrow.isCompatible(type, parseSqlType(sql)), parquet.isCompatible(type, parseSqlType(sql))], [false, false], sql);
  });

  it('Arrow passes a column through only when the table has exactly its type', () => {
    assert.equal(arrow.isSameType(dec(10, 2), parseSqlType('numeric(10,2)')), true);
    assert.equal(arrow.isSameType(dec(10, 2), parseSqlType('numeric(12,2)')), false);
    assert.equal(arrow.isSameType(t('json'), parseSqlType('text')), true);
    assert.equal(arrow.isSameType(t('text'), parseSqlType('character varying(20)')), false);
    assert.equal(arrow.isSameType(t('integer'), parseSqlType('bigint')), false);
    assert.equal(arrow.isSameType(t('timestamptz'), parseSqlType('timestamptz')), true);
  });

  it('Parquet takes any value into text and arrays of text, nothing else', () => {
    assert.equal(parquet.takesText(parseSqlType('character(3)')), true);
    assert.equal(parquet.takesText(parseSqlType('character varying(5)[]')), true);
    assert.equal(parquet.takesText(parseSqlType('json')), false);
    assert.equal(parquet.takesText(parseSqlType('integer[]')), false);
  });
});
