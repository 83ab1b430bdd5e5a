/**
 * The one reader of SQL type names (`parseSqlType`), and Arrow's pass-through rule built on it.
 * Pure logic: no database. The fit rules every typed ingester shares are in type-policy.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as arrow from '../../../plugins/arrow/types.ts';
import { INTEGER_DIGITS, isIntegerFamily, parseSqlType, type SqlType, wholeDigits } from '../../../src/columns/sql-types.ts';
import type { LogicalType } from '../../../src/types.ts';

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
    [{ family: 'interval' }, 'interval', 'INTERVAL'],
    [{ family: 'array', element: { family: 'interval' } }, 'interval[]'],
  ];
  for (const [expected, ...spellings] of readings) {
    it(`reads ${spellings.map((sql) => JSON.stringify(sql)).join(', ')} as ${JSON.stringify(expected)}`, () => {
      for (const sql of spellings) assert.deepEqual(parseSqlType(sql), expected, JSON.stringify(sql));
    });
  }

  // Types no ingester maps to keep the database's own spelling, for messages.
  const others = [
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

describe('Arrow: a column passed through as it is', () => {
  it('Arrow passes a column through only when the table has exactly its type', () => {
    assert.equal(arrow.isSameType(dec(10, 2), parseSqlType('numeric(10,2)')), true);
    assert.equal(arrow.isSameType(dec(10, 2), parseSqlType('numeric(12,2)')), false);
    assert.equal(arrow.isSameType(t('json'), parseSqlType('text')), true);
    assert.equal(arrow.isSameType(t('text'), parseSqlType('character varying(20)')), false);
    assert.equal(arrow.isSameType(t('integer'), parseSqlType('bigint')), false);
    assert.equal(arrow.isSameType(t('timestamptz'), parseSqlType('timestamptz')), true);
    assert.equal(arrow.isSameType(t('interval'), parseSqlType('interval')), true);
    assert.equal(arrow.isSameType(t('timestamp'), parseSqlType('timestamp(3)')), false);
  });
});
