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
  const cases: [string, SqlType][] = [
    // As Hyper reports them (format_type, database versions 2 and 4)
    ['integer', { family: 'integer' }],
    ['smallint', { family: 'smallint' }],
    ['bigint', { family: 'bigint' }],
    ['real', { family: 'real' }],
    ['double precision', { family: 'double' }],
    ['numeric(18,3)', { family: 'numeric', precision: 18, scale: 3 }],
    ['numeric(38,0)', { family: 'numeric', precision: 38, scale: 0 }],
    ['text', { family: 'text' }],
    ['character varying(20)', { family: 'text', length: 20 }],
    ['character(1)', { family: 'text', length: 1 }],
    ['boolean', { family: 'boolean' }],
    ['date', { family: 'date' }],
    ['time', { family: 'time' }],
    ['timestamp', { family: 'timestamp' }],
    ['timestamptz', { family: 'timestamptz' }],
    ['bytea', { family: 'bytes' }],
    ['json', { family: 'json' }],
    ['uuid', { family: 'uuid' }],
    // As PostgreSQL reports them
    ['numeric', { family: 'numeric', scale: 0 }],
    ['character varying', { family: 'text' }],
    ['bpchar', { family: 'text' }],
    ['name', { family: 'text' }],
    ['citext', { family: 'text' }],
    ['jsonb', { family: 'json' }],
    ['time without time zone', { family: 'time' }],
    ['time(3) without time zone', { family: 'time', fractionalDigits: 3 }],
    ['timestamp without time zone', { family: 'timestamp' }],
    ['timestamp(0) without time zone', { family: 'timestamp', fractionalDigits: 0 }],
    ['timestamp with time zone', { family: 'timestamptz' }],
    ['timestamp(6) with time zone', { family: 'timestamptz', fractionalDigits: 6 }],
    // Aliases the databases accept in DDL
    ['int', { family: 'integer' }],
    ['int2', { family: 'smallint' }],
    ['int4', { family: 'integer' }],
    ['int8', { family: 'bigint' }],
    ['float4', { family: 'real' }],
    ['float8', { family: 'double' }],
    ['float', { family: 'double' }],
    ['double', { family: 'double' }],
    ['bool', { family: 'boolean' }],
    ['decimal(5)', { family: 'numeric', precision: 5, scale: 0 }],
    ['varchar', { family: 'text' }],
    ['varchar(10)', { family: 'text', length: 10 }],
    ['char varying(4)', { family: 'text', length: 4 }],
    ['char(2)', { family: 'text', length: 2 }],
    ['character', { family: 'text', length: 1 }],
    ['char', { family: 'text', length: 1 }],
    ['timestamptz(3)', { family: 'timestamptz', fractionalDigits: 3 }],
    // Case and spacing
    ['INTEGER', { family: 'integer' }],
    ['  bigint\t', { family: 'bigint' }],
    ['Double   Precision', { family: 'double' }],
    ['NUMERIC ( 18 , 3 )', { family: 'numeric', precision: 18, scale: 3 }],
    ['numeric(18, 3)', { family: 'numeric', precision: 18, scale: 3 }],
    ['Character Varying (20)', { family: 'text', length: 20 }],
    ['TIMESTAMP (3)  WITH\nTIME ZONE', { family: 'timestamptz', fractionalDigits: 3 }],
    ['Time Without Time Zone', { family: 'time' }],
    // Arrays: the element type is read the same way
    ['text[]', { family: 'array', element: { family: 'text' } }],
    ['character varying(5)[]', { family: 'array', element: { family: 'text', length: 5 } }],
    ['integer[]', { family: 'array', element: { family: 'integer' } }],
    ['INT [ ] [ ]', { family: 'array', element: { family: 'integer' } }],
    ['numeric(10,2)[3]', { family: 'array', element: { family: 'numeric', precision: 10, scale: 2 } }],
    ['interval[]', { family: 'array', element: { family: 'other', sql: 'interval' } }],
  ];
  for (const [sql, expected] of cases) {
    it(`reads ${JSON.stringify(sql)}`, () => {
      assert.deepEqual(parseSqlType(sql), expected);
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
  const cases: [LogicalType, string, boolean][] = [
    [t('integer'), 'integer', true],
    [t('smallint'), 'bigint', true],
    [t('bigint'), 'integer', false],
    [t('integer'), 'numeric(10,0)', true],
    [t('integer'), 'numeric(11,2)', false],
    [t('bigint'), 'numeric', true],
    [t('smallint'), 'real', true],
    [t('integer'), 'real', false],
    [t('integer'), 'double precision', true],
    [t('bigint'), 'double precision', false],
    [t('real'), 'double precision', true],
    [t('double'), 'real', false],
    [dec(10, 2), 'numeric(12,2)', true],
    [dec(10, 2), 'numeric(12,1)', false],
    [dec(10, 2), 'numeric(10,3)', false],
    [dec(30, 5), 'numeric', true],
    [dec(15, 2), 'double precision', true],
    [dec(16, 2), 'double precision', false],
    [t('date'), 'timestamp with time zone', true],
    [t('timestamp'), 'date', false],
    [t('bytes'), 'text', true],
    [t('boolean'), 'character varying(1)', true],
    [t('json'), 'jsonb', true],
    [t('text'), 'json', false],
    [t('boolean'), 'integer', false],
    [t('text'), 'text[]', false],
    [t('text'), 'interval', false],
  ];
  for (const [type, sql, expected] of cases) {
    it(`${JSON.stringify(type)} into ${sql}: ${expected}`, () => {
      assert.equal(isLosslessFit(type, parseSqlType(sql)), expected);
    });
  }
});

describe('Arrow and Parquet rules on the one reading of a column type', () => {
  // [file type, table column type, Arrow fits, Parquet fits]: one case where they agree, then where they differ.
  const cases: [LogicalType, string, boolean, boolean][] = [
    [t('integer'), 'bigint', true, true],
    [t('bigint'), 'double precision', true, false],
    [t('timestamp'), 'timestamp with time zone', true, false],
    [t('timestamptz'), 'timestamp without time zone', true, false],
    [dec(20, 0), 'double precision', false, true],
    [dec(9, 0), 'integer', false, true],
    [dec(10, 0), 'integer', false, false],
    [t('text'), 'json', false, true],
    [t('text'), 'uuid', false, true],
    [dec(10, 2), 'numeric', false, true],
    [t('timestamp'), 'timestamp(3) without time zone', false, true],
    [t('time'), 'time(6) without time zone', false, true],
    [t('bigint'), 'text[]', false, true],
    [t('bigint'), 'integer[]', false, false],
    [t('bigint'), 'character varying(3)', true, true],
    [t('integer'), 'interval', false, false],
  ];
  for (const [type, sql, arrowFits, parquetFits] of cases) {
    it(`${JSON.stringify(type)} into ${sql}: Arrow ${arrowFits}, Parquet ${parquetFits}`, () => {
      const column = parseSqlType(sql);
      assert.equal(arrow.isCompatible(type, column), arrowFits, 'Arrow');
      assert.equal(parquet.isCompatible(type, column), parquetFits, 'Parquet');
    });
  }

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
