/**
 * strftime-style date and timestamp formats (`dateFormat: '%d.%m.%Y'`, `timestampFormat:
 * '%d/%m/%Y %H:%M'`), compiled once into a matcher that turns a value written that way into the
 * ISO text both databases read the same under any date setting (`2018-02-01`, `2018-02-01
 * 14:05:00`). A value must match the whole format; fields are checked for range (month 1-12, the
 * day within its month, hour 0-23...). Directives, as in C's strptime and DuckDB:
 *
 * | %Y | year, 4 digits       | %m | month 1-12       | %d %e | day of the month       |
 * | %y | year, 2 digits: 00-69 → 2000-2069, 70-99 → 1970-1999 (the databases' own rule)  |
 * | %b %h | month name, 3 letters (English) | %B | full month name | %a %A | weekday name (ignored) |
 * | %H | hour 0-23            | %I | hour 1-12 (with %p) | %p | AM or PM          |
 * | %M | minute               | %S | second           | %f | fraction of a second, 1-9 digits |
 * | %z | zone: Z, +hh, +hhmm, +hh:mm | %T | %H:%M:%S | %F | %Y-%m-%d | %D | %m/%d/%y | %% | %   |
 *
 * Numbers may drop their leading zero (`%d` reads `1` and `01`); `%-d`, `%-m`... are read the same.
 */

export interface Parts {
  year: number;
  month: number;
  day: number;
  hour?: number;
  minute?: number;
  second?: number;
  /** Digits of the fraction of a second, as written. */
  fraction?: string;
  /** The zone as written after normalising (`+01:00`, `Z` → `+00:00`). */
  zone?: string;
}

export interface DateFormat {
  /** As the user wrote it. */
  readonly source: string;
  /** Has a time of day (%H, %I, %T...). */
  readonly hasTime: boolean;
  /** Has a zone (%z). */
  readonly hasZone: boolean;
  /**
   * The parts of `value` written in this format, or a reason it is not. `timeAfter`: the format
   * may be followed by a time (` 14:05`, `T14:05`), returned as `rest`; else it is the whole value.
   */
  parse(value: string, timeAfter?: boolean): { readonly parts: Parts; readonly rest: string } | string;
}

export const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'] as const;
const FULL_MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const WEEKDAYS = /^(?:mon|tue|wed|thu|fri|sat|sun)(?:day|sday|nesday|rsday|urday)?$/i;

/** The month (1-12) an English month name or its abbreviation (`Feb`, `February`, `Sept`) names, or 0. */
export function monthNumber(name: string): number {
  const lower = name.toLowerCase().replace(/\.$/, '');
  if (lower === 'sept') return 9;
  const short = MONTHS.indexOf(lower as (typeof MONTHS)[number]);
  if (short >= 0) return short + 1;
  return FULL_MONTHS.indexOf(lower) + 1;
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** 00-69 → 2000-2069, 70-99 → 1970-1999: what PostgreSQL and Hyper do with a two-digit year. */
export function fullYear(twoDigits: number): number {
  return twoDigits < 70 ? 2000 + twoDigits : 1900 + twoDigits;
}

type Field =
  | 'year'
  | 'year2'
  | 'month'
  | 'monthName'
  | 'day'
  | 'hour'
  | 'hour12'
  | 'ampm'
  | 'minute'
  | 'second'
  | 'fraction'
  | 'zone'
  | 'weekday';

const DIRECTIVES: Readonly<Record<string, readonly [Field, string] | string>> = {
  Y: ['year', '(\\d{4})'],
  y: ['year2', '(\\d{2})'],
  m: ['month', '(\\d{1,2})'],
  d: ['day', '(\\d{1,2})'],
  e: ['day', ' ?(\\d{1,2})'],
  b: ['monthName', '([A-Za-z]{3}\\.?)'],
  h: ['monthName', '([A-Za-z]{3}\\.?)'],
  B: ['monthName', '([A-Za-z]{3,9})'],
  a: ['weekday', '([A-Za-z]{3})'],
  A: ['weekday', '([A-Za-z]{6,9})'],
  H: ['hour', '(\\d{1,2})'],
  I: ['hour12', '(\\d{1,2})'],
  p: ['ampm', '([AaPp][Mm])'],
  M: ['minute', '(\\d{1,2})'],
  S: ['second', '(\\d{1,2})'],
  f: ['fraction', '(\\d{1,9})'],
  z: ['zone', '(Z|[+-]\\d{2}(?::?\\d{2})?)'],
  T: '%H:%M:%S',
  F: '%Y-%m-%d',
  D: '%m/%d/%y',
};

function escapeLiteral(c: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
}

/** The format's directives expanded (`%T` → `%H:%M:%S`), `%-d` read as `%d`. */
function expand(format: string): string {
  return format.replace(/%-?([TFD])/g, (_, d: string) => DIRECTIVES[d] as string).replace(/%-([a-zA-Z])/g, '%$1');
}

/** Compiles `format`, or says why it cannot be one (an unknown directive, no year, no day...). */
export function compileDateFormat(format: string): DateFormat | string {
  if (format.trim() === '') return 'is empty';
  const expanded = expand(format);
  const fields: Field[] = [];
  let pattern = '^';
  for (let i = 0; i < expanded.length; i++) {
    const c = expanded[i]!;
    if (c !== '%') {
      pattern += c === ' ' ? ' +' : escapeLiteral(c);
      continue;
    }
    const d = expanded[++i];
    if (d === '%') {
      pattern += '%';
      continue;
    }
    const directive = d === undefined ? undefined : DIRECTIVES[d];
    if (directive === undefined || typeof directive === 'string')
      return `has ${d === undefined ? 'a % at its end' : `%${d}`}, which is not a directive this reader knows (see the README: dateFormat)`;
    if (fields.includes(directive[0])) return `names the ${directive[0]} twice (%${d})`;
    fields.push(directive[0]);
    pattern += directive[1];
  }
  const has = (f: Field) => fields.includes(f);
  if (!has('year') && !has('year2')) return 'has no year (%Y or %y)';
  if (!has('month') && !has('monthName')) return 'has no month (%m, %b or %B)';
  if (!has('day')) return 'has no day (%d)';
  if (has('hour12') !== has('ampm')) return 'has %I without %p, or %p without %I';
  if (has('hour') && has('hour12')) return 'has both %H and %I';
  if ((has('minute') || has('second')) && !has('hour') && !has('hour12')) return 'has minutes or seconds but no hour (%H)';
  if (has('fraction') && !has('second')) return 'has %f without %S';
  const regex = new RegExp(pattern, 'i');
  return {
    source: format,
    hasTime: has('hour') || has('hour12'),
    hasZone: has('zone'),
    parse(value, timeAfter = false) {
      const match = regex.exec(value);
      const rest = match ? value.slice(match[0].length) : '';
      if (!match || !(rest === '' || (timeAfter && /^[ T]\d/.test(rest)))) return `does not match the format '${format}'`;
      const parts = partsOf(match, fields, format);
      return typeof parts === 'string' ? parts : { parts, rest };
    },
  };
}

function partsOf(match: RegExpExecArray, fields: readonly Field[], format: string): Parts | string {
  const parts: Parts = { year: 0, month: 0, day: 0 };
  let pm: boolean | undefined;
  let hour12: number | undefined;
  for (const [i, field] of fields.entries()) {
    const text = match[i + 1]!;
    const n = Number(text);
    switch (field) {
      case 'year':
        parts.year = n;
        break;
      case 'year2':
        parts.year = fullYear(n);
        break;
      case 'month':
        parts.month = n;
        break;
      case 'monthName':
        parts.month = monthNumber(text);
        if (parts.month === 0) return `has "${text}" where the format '${format}' has a month name`;
        break;
      case 'day':
        parts.day = n;
        break;
      case 'hour':
        parts.hour = n;
        break;
      case 'hour12':
        hour12 = n;
        break;
      case 'ampm':
        pm = text.toLowerCase() === 'pm';
        break;
      case 'minute':
        parts.minute = n;
        break;
      case 'second':
        parts.second = n;
        break;
      case 'fraction':
        parts.fraction = text;
        break;
      case 'zone':
        parts.zone = normalZone(text);
        break;
      case 'weekday':
        if (!WEEKDAYS.test(text)) return `has "${text}" where the format '${format}' has a weekday name`;
        break;
    }
  }
  if (hour12 !== undefined) {
    if (hour12 < 1 || hour12 > 12) return `has hour ${hour12}, which a 12-hour clock (%I) does not have`;
    parts.hour = (hour12 % 12) + (pm ? 12 : 0);
  }
  return checkParts(parts) ?? parts;
}

function normalZone(zone: string): string {
  if (zone.toUpperCase() === 'Z') return '+00:00';
  const digits = zone.slice(1).replace(':', '');
  return `${zone[0]}${digits.slice(0, 2)}:${digits.slice(2, 4) || '00'}`;
}

/** Why the parts are not a date and time of the calendar, or undefined. */
export function checkParts(p: Parts): string | undefined {
  if (p.month < 1 || p.month > 12) return `has month ${p.month}`;
  if (p.year < 1) return `has year ${p.year}`;
  if (p.day < 1 || p.day > daysInMonth(p.year, p.month))
    return `has day ${p.day}, which ${MONTHS[p.month - 1]![0]!.toUpperCase()}${MONTHS[p.month - 1]!.slice(1)} ${p.year} does not have`;
  if (p.hour !== undefined && p.hour > 23) return `has hour ${p.hour}`;
  if (p.minute !== undefined && p.minute > 59) return `has minute ${p.minute}`;
  if (p.second !== undefined && p.second > 59) return `has second ${p.second}`;
  return undefined;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `2018-02-01`, and with a time `2018-02-01 14:05:00[.fraction][+01:00]`. */
export function isoText(p: Parts, withTime: boolean): string {
  const date = `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)}`;
  if (!withTime) return date;
  const fraction = p.fraction ? `.${p.fraction}` : '';
  return `${date} ${pad(p.hour ?? 0)}:${pad(p.minute ?? 0)}:${pad(p.second ?? 0)}${fraction}${p.zone ?? ''}`;
}
