/**
 * A table column's type as the database spells it (`TableColumn.sqlType`, `format_type()` output
 * of Hyper and PostgreSQL), read into one description that every ingester checks file columns
 * against. Only the parts that decide whether a file column fits are kept: the family, a numeric's
 * precision and scale, a text type's length limit, a time type's fractional digits, an array's
 * element type. Anything else is `other` and fits no file column but by a text cast.
 *
 * Spellings the databases report (hyperd main.0.0.26359 with database versions 2 and 4, PostgreSQL 15):
 * `integer`, `numeric(18,3)`, `numeric` (PostgreSQL: no precision), `character varying(20)`,
 * `character(1)`, `bpchar`, `time`, `time(3) without time zone`, `timestamptz`,
 * `timestamp(0) with time zone`, `double precision`, `jsonb`, `uuid`, `text[]`, `interval`,
 * `tabgeography`, `"char"`, `s.mood`. Aliases a database accepts but never reports back (`int4`,
 * `float8`, `varchar`, ...) are read too, so a type written by hand means what it says.
 */

/** Families whose columns have nothing more to them that matters when loading a file. */
export type PlainFamily =
  | 'boolean'
  | 'smallint'
  | 'integer'
  | 'bigint'
  | 'real'
  | 'double'
  | 'json'
  | 'bytes'
  | 'date'
  | 'uuid'
  | 'interval';

export type TimeFamily = 'time' | 'timestamp' | 'timestamptz';

export type SqlType =
  | { readonly family: PlainFamily }
  /** `precision` undefined: PostgreSQL's `numeric` without a precision, which holds any number. */
  | { readonly family: 'numeric'; readonly precision?: number; readonly scale: number }
  /** `length`: the limit of `varchar(n)` and `char(n)`, which the database enforces. */
  | { readonly family: 'text'; readonly length?: number }
  /** `fractionalDigits`: the `p` of `timestamp(p)`; undefined is the default, microseconds. */
  | { readonly family: TimeFamily; readonly fractionalDigits?: number }
  | { readonly family: 'array'; readonly element: SqlType }
  /** A type no ingester maps to (geography, an enum, a domain...), as the database spelt it. */
  | { readonly family: 'other'; readonly sql: string };

export type SqlFamily = SqlType['family'];

const PLAIN: Readonly<Record<string, PlainFamily>> = {
  boolean: 'boolean',
  bool: 'boolean',
  smallint: 'smallint',
  int2: 'smallint',
  integer: 'integer',
  int: 'integer',
  int4: 'integer',
  bigint: 'bigint',
  int8: 'bigint',
  real: 'real',
  float4: 'real',
  'double precision': 'double',
  double: 'double',
  float8: 'double',
  // Both databases read a bare FLOAT as DOUBLE PRECISION.
  float: 'double',
  json: 'json',
  jsonb: 'json',
  bytea: 'bytes',
  date: 'date',
  uuid: 'uuid',
  interval: 'interval',
};

/** Text types with no length in their spelling (`name`, 63 bytes at most, is capped by the type itself). */
const UNLIMITED_TEXT = new Set(['text', 'name', 'citext']);

const NUMERIC = /^(?:numeric|decimal)(?:\((\d+)(?:,(\d+))?\))?$/;
/** `varchar(n)` and `char(n)`; `bpchar` without a length is PostgreSQL's unlimited blank-padded text. */
const CHARACTER = /^(character varying|char varying|varchar|character|char|bpchar)(?:\((\d+)\))?$/;
const TIME = /^(time|timestamp)(?:\((\d+)\))?(?: without time zone)?$/;
const TIMESTAMPTZ = /^(?:timestamp(?:\((\d+)\))? with time zone|timestamptz(?:\((\d+)\))?)$/;
const ARRAY = /^(.+?)(?:\[\d*\])+$/;

/**
 * One spelling for every way of writing a type: lower case, single spaces, none around the
 * parentheses, commas and brackets of a modifier (`NUMERIC ( 18, 3 )` → `numeric(18,3)`).
 */
function normalize(sqlType: string): string {
  return sqlType
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/ ?\( ?/g, '(')
    .replace(/ ?, ?/g, ',')
    .replace(/ ?\)/g, ')')
    .replace(/ ?\[ ?/g, '[')
    .replace(/ ?\]/g, ']');
}

/** A time family with the `(p)` it was written with, if any. */
function timeType(family: TimeFamily, precision: string | undefined): SqlType {
  return precision === undefined ? { family } : { family, fractionalDigits: Number(precision) };
}

/** Reads a column type as `describeTable` reports it (or as a user would write it). */
export function parseSqlType(sqlType: string): SqlType {
  const t = normalize(sqlType);
  // PostgreSQL reports every array as one `[]` (`integer[][]` is `integer[]`).
  const array = ARRAY.exec(t);
  if (array) return { family: 'array', element: parseSqlType(array[1]!) };

  const plain = Object.hasOwn(PLAIN, t) ? PLAIN[t] : undefined;
  if (plain) return { family: plain };
  if (UNLIMITED_TEXT.has(t)) return { family: 'text' };

  const numeric = NUMERIC.exec(t);
  if (numeric)
    return numeric[1] === undefined
      ? { family: 'numeric', scale: 0 }
      : { family: 'numeric', precision: Number(numeric[1]), scale: Number(numeric[2] ?? 0) };

  const character = CHARACTER.exec(t);
  if (character) {
    const [, name, length] = character;
    if (length !== undefined) return { family: 'text', length: Number(length) };
    // CHARACTER alone is CHARACTER(1) in SQL; VARCHAR and BPCHAR alone have no limit.
    return name === 'character' || name === 'char' ? { family: 'text', length: 1 } : { family: 'text' };
  }

  const time = TIME.exec(t);
  if (time) return timeType(time[1] === 'time' ? 'time' : 'timestamp', time[2]);
  const timestamptz = TIMESTAMPTZ.exec(t);
  if (timestamptz) return timeType('timestamptz', timestamptz[1] ?? timestamptz[2]);

  return { family: 'other', sql: sqlType };
}

/** How many decimal digits each integer type can need (the largest bigint has 19). */
export const INTEGER_DIGITS = { smallint: 5, integer: 10, bigint: 19 } as const;

export type IntegerFamily = keyof typeof INTEGER_DIGITS;

export function isIntegerFamily(family: string): family is IntegerFamily {
  return Object.hasOwn(INTEGER_DIGITS, family);
}

/** Digits left of the decimal point a numeric holds; `Infinity` without a precision. */
export function wholeDigits(numeric: { readonly precision?: number; readonly scale: number }): number {
  return numeric.precision === undefined ? Infinity : numeric.precision - numeric.scale;
}
