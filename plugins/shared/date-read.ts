/**
 * Dates in text (CSV fields), read without a guess. Both databases read `01/02/2018` by a setting
 * the file knows nothing of (month first unless told otherwise, day first on a server set up for
 * another locale), silently. So every date with digits in it is read here and handed to the
 * database as ISO (`2018-02-01`), which both read the same under every setting:
 *
 * - `2018-02-01` (ISO, dashes), with whatever follows it (a time, a zone): as written.
 * - Year first with another separator (`2018/02/01`, `2018.02.01`), or a month name (`1 Feb 2018`,
 *   `Feb 1, 2018`, `Thu, 01 Feb 2018`): never ambiguous, made ISO.
 * - Day and month first (`01/02/2018`, `1.2.2018`, `01-02-2018`, `01 02 2018`): read in the order
 *   `dateStyle` says; else in the order the file's first rows decide (a first part over 12 is a
 *   day, a second part over 12 a month); a value that only reads one way decides itself. One that
 *   reads both ways with nothing to decide fails the file as DATE_AMBIGUOUS.
 * - A two-digit year (`01/02/18`): which part is the year is a guess, so it needs `dateStyle` (or a
 *   format with `%y`); the century is the databases' own rule (00-69 → 2000s, 70-99 → 1900s).
 * - With `dateFormat` / `timestampFormat`, values in that format (ISO still reads as ISO).
 * - Words without a digit (`infinity`, `epoch`) are the database's to read or refuse.
 * Anything else with a digit in it is refused, naming the value, rather than left to a guess.
 */
import { DATE_STYLES, type DateStyle } from '../../src/constants.ts';
import { checkParts, type DateFormat, fullYear, isoText, monthNumber, type Parts } from './date-format.ts';

export { DATE_STYLES, type DateStyle };
export type DayMonthOrder = 'DMY' | 'MDY';

/** The date at the start of a (trimmed) value. */
export type DateShape =
  /** `YYYY-M-D`: passed as written. */
  | { readonly kind: 'iso' }
  /** Year first with another separator, or (`named`) a month name: never ambiguous. */
  | { readonly kind: 'plain'; readonly parts: Parts; readonly rest: string; readonly named: boolean }
  /** `a/b/YYYY`: day and month, in an order to decide. */
  | { readonly kind: 'dayMonth'; readonly first: number; readonly second: number; readonly year: number; readonly rest: string }
  /** `a/b/c`, all one or two digits: a two-digit year, and the order to decide. */
  | { readonly kind: 'shortYear'; readonly numbers: readonly [number, number, number]; readonly rest: string }
  /** No digit at all. */
  | { readonly kind: 'word' }
  /** Digits, in no form this reads. */
  | { readonly kind: 'unknown' };

const ISO = /^\d{4}-\d{1,2}-\d{1,2}(?!\d)/;
const YEAR_FIRST = /^(\d{4})[-/. ](\d{1,2})[-/. ](\d{1,2})(?!\d)/;
const DAY_MONTH = /^(\d{1,2})[-/. ](\d{1,2})[-/. ](\d{4})(?!\d)/;
const SHORT_YEAR = /^(\d{1,2})[-/. ](\d{1,2})[-/. ](\d{2})(?!\d)/;
const WEEKDAY = '(?:[A-Za-z]{3,9}\\.?,?\\s+)?';
const NAMED_DAY_FIRST = new RegExp(`^${WEEKDAY}(\\d{1,2})(?:st|nd|rd|th)?\\.?[-/ ]*([A-Za-z]{3,9})\\.?[-/ ,]*(\\d{4})(?!\\d)`, 'i');
const NAMED_MONTH_FIRST = new RegExp(`^${WEEKDAY}([A-Za-z]{3,9})\\.?[-/ ]*(\\d{1,2})(?:st|nd|rd|th)?,?[-/ ]*(\\d{4})(?!\\d)`, 'i');

function named(match: RegExpExecArray, day: string, month: string, year: string): DateShape {
  const m = monthNumber(month);
  if (m === 0) return { kind: 'unknown' };
  return {
    kind: 'plain',
    parts: { year: Number(year), month: m, day: Number(day) },
    rest: match.input.slice(match[0].length),
    named: true,
  };
}

/** The shape of the date a trimmed value starts with. */
export function dateShape(value: string): DateShape {
  if (ISO.test(value)) return { kind: 'iso' };
  let m = YEAR_FIRST.exec(value);
  if (m)
    return {
      kind: 'plain',
      parts: { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) },
      rest: value.slice(m[0].length),
      named: false,
    };
  m = DAY_MONTH.exec(value);
  if (m) return { kind: 'dayMonth', first: Number(m[1]), second: Number(m[2]), year: Number(m[3]), rest: value.slice(m[0].length) };
  m = SHORT_YEAR.exec(value);
  if (m) return { kind: 'shortYear', numbers: [Number(m[1]), Number(m[2]), Number(m[3])], rest: value.slice(m[0].length) };
  m = NAMED_DAY_FIRST.exec(value);
  if (m) return named(m, m[1]!, m[2]!, m[3]!);
  m = NAMED_MONTH_FIRST.exec(value);
  if (m) return named(m, m[2]!, m[1]!, m[3]!);
  return /\d/.test(value) ? { kind: 'unknown' } : { kind: 'word' };
}

/** Which order of day and month a `first/second/year` value reads in. */
export type Evidence = DayMonthOrder | 'both' | 'same' | 'neither';

export function evidenceOf(first: number, second: number): Evidence {
  const firstIsDay = first >= 1 && first <= 31 && second >= 1 && second <= 12;
  const firstIsMonth = first >= 1 && first <= 12 && second >= 1 && second <= 31;
  if (firstIsDay && firstIsMonth) return first === second ? 'same' : 'both';
  if (firstIsDay) return 'DMY';
  if (firstIsMonth) return 'MDY';
  return 'neither';
}

/** What a column's values (the head of a file) say about the order of day and month. */
export interface OrderDecision {
  /** The order the values decide (some read only this way, none only the other). */
  readonly order?: DayMonthOrder;
  /** A value that reads only day first and one that reads only month first. */
  readonly contradiction?: readonly [string, string];
  /** A value that reads both ways, when nothing decides the order. */
  readonly undecided?: string;
  /** A value with a two-digit year. */
  readonly shortYear?: string;
}

export function decideOrder(values: Iterable<string>): OrderDecision {
  let dayFirst: string | undefined;
  let monthFirst: string | undefined;
  let both: string | undefined;
  let shortYear: string | undefined;
  for (const raw of values) {
    const value = raw.trim();
    const shape = dateShape(value);
    if (shape.kind === 'shortYear') shortYear ??= value;
    if (shape.kind !== 'dayMonth') continue;
    const evidence = evidenceOf(shape.first, shape.second);
    if (evidence === 'DMY') dayFirst ??= value;
    else if (evidence === 'MDY') monthFirst ??= value;
    else if (evidence === 'both') both ??= value;
  }
  const short = shortYear === undefined ? {} : { shortYear };
  if (dayFirst !== undefined && monthFirst !== undefined) return { contradiction: [dayFirst, monthFirst], ...short };
  if (dayFirst !== undefined) return { order: 'DMY', ...short };
  if (monthFirst !== undefined) return { order: 'MDY', ...short };
  return { ...(both === undefined ? {} : { undecided: both }), ...short };
}

/** How one column's dates are read: the settings, and the order the file decided. */
export interface DateRule {
  readonly style?: DateStyle;
  /** `dateFormat` for a date column, `timestampFormat` (else `dateFormat`) for a timestamp one. */
  readonly format?: DateFormat;
  /** The order the head of the file decided, when no style is set. */
  readonly order?: DayMonthOrder;
  /** The column holds a time of day too (TIMESTAMP, TIMESTAMPTZ): the rest of a value is its time. */
  readonly withTime: boolean;
}

export const DATE_PROBLEMS = ['DATE_AMBIGUOUS', 'DATE_ORDER', 'DATE_STYLE', 'DATE_FORMAT', 'DATE_INVALID', 'DATE_UNREADABLE'] as const;
export type DateProblemCode = (typeof DATE_PROBLEMS)[number];

/** Why a value cannot be read as a date. */
export interface DateProblem {
  readonly code: DateProblemCode;
  /** What is wrong with the value, to follow it in a message: `"01/02/2018" reads as ...`. */
  readonly reason: string;
  /**
   * The file needs a setting, not a fix of one row (an ambiguous value, or one against the order
   * the file decided): it fails whole, also when bad rows are skipped.
   */
  readonly fileLevel: boolean;
}

export function isDateProblem(value: string | DateProblem): value is DateProblem {
  return typeof value !== 'string';
}

const q = (v: string) => JSON.stringify(v);
const MONTH_NAMES = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const spoken = (day: number, month: number) => `${day} ${MONTH_NAMES[month - 1] ?? `month ${month}`}`;

function problem(code: DateProblemCode, reason: string, fileLevel = false): DateProblem {
  return { code, reason, fileLevel };
}

/** Parts and what follows them (a time, a zone: the database's to read), as ISO text; the reason when they are no date. */
function iso(value: string, parts: Parts, rest: string): string | DateProblem {
  const wrong = checkParts(parts);
  if (wrong) return problem('DATE_INVALID', `${q(value)} is not a date: it ${wrong}`);
  return `${isoText(parts, false)}${rest}`;
}

/**
 * In a format: the whole value, or for a timestamp column read with a date format, the date at
 * its start and its time after it.
 */
function readFormat(value: string, rule: DateRule, format: DateFormat): string | DateProblem {
  const parsed = format.parse(value, rule.withTime && !format.hasTime);
  if (typeof parsed !== 'string') return `${isoText(parsed.parts, rule.withTime && format.hasTime)}${parsed.rest}`;
  if (ISO.test(value)) return value;
  return problem('DATE_FORMAT', `${q(value)} ${parsed}`);
}

/**
 * The text to load for `raw` under `rule`: ISO (`2018-02-01`, followed by the value's time when it
 * has one), a word without digits as written, or the problem.
 */
export function readDate(raw: string, rule: DateRule): string | DateProblem {
  const value = raw.trim();
  if (rule.format) return readFormat(value, rule, rule.format);
  const shape = dateShape(value);
  switch (shape.kind) {
    case 'iso':
    case 'word':
      return value;
    case 'plain':
      return iso(value, shape.parts, shape.rest);
    case 'unknown':
      return problem(
        'DATE_UNREADABLE',
        `${q(value)} is not a date this reader knows (it reads ISO 2018-02-01, day and month with a four-digit year, and month names)`,
      );
    case 'shortYear':
      return readShortYear(value, shape.numbers, shape.rest, rule);
    case 'dayMonth':
      return readDayMonth(value, shape, rule);
  }
}

function readDayMonth(value: string, shape: Extract<DateShape, { kind: 'dayMonth' }>, rule: DateRule): string | DateProblem {
  const { first, second, year, rest } = shape;
  if (rule.style === 'YMD')
    return problem('DATE_STYLE', `${q(value)} starts with a day or a month, not with the year as dateStyle YMD says`);
  const evidence = evidenceOf(first, second);
  if (evidence === 'neither')
    return problem('DATE_INVALID', `${q(value)} is not a date: ${first}/${second} is neither a day and a month nor a month and a day`);
  const order = rule.style ?? rule.order ?? (evidence === 'DMY' || evidence === 'MDY' ? evidence : evidence === 'same' ? 'DMY' : undefined);
  if (order === undefined) {
    return problem(
      'DATE_AMBIGUOUS',
      `${q(value)} reads as ${spoken(first, second)} (day first) or ${spoken(second, first)} (month first) ${year}, and ` +
        `nothing in the file's first rows says which`,
      true,
    );
  }
  if (evidence !== 'both' && evidence !== 'same' && evidence !== order) {
    const reads = evidence === 'DMY' ? 'only day first' : 'only month first';
    if (rule.style)
      return problem(
        'DATE_STYLE',
        `${q(value)} reads ${reads}, not ${order === 'DMY' ? 'day first' : 'month first'} as dateStyle ${order} says`,
      );
    return problem(
      'DATE_ORDER',
      `${q(value)} reads ${reads}, but the file's first rows read ${order === 'DMY' ? 'day first' : 'month first'}`,
      true,
    );
  }
  const [day, month] = order === 'DMY' ? [first, second] : [second, first];
  return iso(value, { year, month, day }, rest);
}

function readShortYear(value: string, [a, b, c]: readonly [number, number, number], rest: string, rule: DateRule): string | DateProblem {
  if (!rule.style) {
    return problem(
      'DATE_AMBIGUOUS',
      `${q(value)} has a two-digit year: which of its parts is the year, the day and the month is a guess`,
      true,
    );
  }
  const [year, month, day] = rule.style === 'YMD' ? [a, b, c] : rule.style === 'DMY' ? [c, b, a] : [c, a, b];
  return iso(value, { year: fullYear(year), month, day }, rest);
}
