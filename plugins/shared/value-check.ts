/**
 * Whether a text value can be loaded into a column, judged in JavaScript before a row goes to
 * the database (`onBadRows: 'skip'`). A pre-filter, never the last word: it turns a value away
 * only when both Hyper and PostgreSQL refuse it (checked on both: `abc` or `1,5` in a number
 * column, `2024-13-45` in a date column, a bigint past 2^63), and lets through anything one of
 * them might take (`1.0` as bigint is fine on Hyper, `tr` as boolean on PostgreSQL). What the
 * database still refuses is found by its COPY, and that row is left out on the next attempt.
 */
import { INTEGER_DIGITS, isIntegerFamily, type SqlType, wholeDigits } from '../../src/columns/sql-types.ts';

/** A value's check: `undefined` when it may load, else why it cannot. `quoted`: `""` is not NULL. */
export type ValueCheck = (value: string, quoted: boolean) => string | undefined;

const INTEGER = /^[+-]?\d+$/;
const INTEGER_RANGE: Record<'smallint' | 'integer' | 'bigint', readonly [bigint, bigint]> = {
  smallint: [-32768n, 32767n],
  integer: [-2147483648n, 2147483647n],
  bigint: [-9223372036854775808n, 9223372036854775807n],
};
/** Characters some spelling of a number may use (digits, sign, point, exponent, hex floats, `_`). */
const NUMBER_CHARS = /^[0-9a-fA-FxXoOpP+\-._]+$/;
/** Integers: neither database takes hex (`0x10`) here; Hyper takes `1.0`. */
const INTEGER_CHARS = /^[0-9eE+\-._]+$/;
const SPECIAL_FLOAT = /^[+-]?(?:nan|inf|infinity)$/i;
const DECIMAL = /^[+-]?(\d*)(?:\.(\d*))?$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const BOOLEAN_WORDS = ['true', 'false', 'yes', 'no', 'on', 'off', '1', '0'];
const NO_DIGIT_TIMES = /^(?:epoch|now|today|tomorrow|yesterday|allballs|[+-]?infinity)$/i;

function shown(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function integerCheck(family: 'smallint' | 'integer' | 'bigint'): (v: string) => string | undefined {
  const [min, max] = INTEGER_RANGE[family];
  return (v) => {
    if (INTEGER.test(v)) {
      const digits = v.replace(/^[+-]?0*/, '');
      if (digits.length > INTEGER_DIGITS[family] || (digits.length === INTEGER_DIGITS[family] && (BigInt(v) < min || BigInt(v) > max)))
        return `${shown(v)} is out of range for ${family}`;
      return undefined;
    }
    return /\d/.test(v) && INTEGER_CHARS.test(v) ? undefined : `${shown(v)} is not a ${family}`;
  };
}

function numericCheck(type: { readonly precision?: number; readonly scale: number }): (v: string) => string | undefined {
  const whole = wholeDigits(type);
  return (v) => {
    const plain = DECIMAL.exec(v);
    if (plain && /\d/.test(v)) {
      const digits = plain[1]!.replace(/^0+/, '').length;
      return digits > whole ? `${shown(v)} has more than ${whole} digit(s) before the decimal point` : undefined;
    }
    if (SPECIAL_FLOAT.test(v)) return undefined;
    return /\d/.test(v) && NUMBER_CHARS.test(v) ? undefined : `${shown(v)} is not a number`;
  };
}

/** The check for a column of `type`; `nullable` false turns NULL (an unquoted empty field) away. */
export function valueCheck(type: SqlType, nullable: boolean): ValueCheck {
  const check = typedCheck(type);
  return (value, quoted) => {
    if (value === '' && !quoted) return nullable ? undefined : 'empty (NULL) in a NOT NULL column';
    return check?.(value.trim());
  };
}

function typedCheck(type: SqlType): ((trimmed: string) => string | undefined) | undefined {
  const family = type.family;
  if (isIntegerFamily(family)) return integerCheck(family);
  switch (type.family) {
    case 'real':
    case 'double':
      return (v) => (SPECIAL_FLOAT.test(v) || (/\d/.test(v) && NUMBER_CHARS.test(v)) ? undefined : `${shown(v)} is not a number`);
    case 'numeric':
      return numericCheck(type);
    case 'boolean':
      return (v) => {
        const lower = v.toLowerCase();
        return lower !== '' && BOOLEAN_WORDS.some((w) => w.startsWith(lower)) ? undefined : `${shown(v)} is not a boolean`;
      };
    case 'date':
      return (v) => {
        const iso = ISO_DATE.exec(v);
        if (iso) {
          const [year, month, day] = [Number(iso[1]), Number(iso[2]), Number(iso[3])];
          return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) ? undefined : `${shown(v)} is not a date`;
        }
        return /\d/.test(v) || NO_DIGIT_TIMES.test(v) ? undefined : `${shown(v)} is not a date`;
      };
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return (v) => (/\d/.test(v) || NO_DIGIT_TIMES.test(v) ? undefined : `${shown(v)} is not a ${type.family}`);
    default:
      // Text takes anything (a length limit is the database's to judge); other types go to it as well.
      return undefined;
  }
}
