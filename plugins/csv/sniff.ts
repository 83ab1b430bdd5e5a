/**
 * The dialect a CSV file's head shows, for `sniff: true` (and the flags `hyperwatch check` would
 * suggest): the delimiter, quote and escape, comment lines, preamble lines, whether the first row
 * is a header, the order of day and month, the decimal and thousands separators, NULL markers.
 * Each is either decided by the file (its lines say it one way only), left as it is (the file says
 * nothing about it), or undecided with its candidates (the file reads more than one way): a file
 * with any undecided setting fails, never read by a pick among them.
 */
import Papa from 'papaparse';
import { dateShape, decideOrder } from '../shared/date-read.ts';
import type { CsvDialect } from './dialect.ts';

/** The settings the file decides, as a dialect. */
export type SniffedDialect = Pick<
  CsvDialect,
  | 'delimiter'
  | 'quote'
  | 'escape'
  | 'commentPrefix'
  | 'skipLines'
  | 'header'
  | 'dateStyle'
  | 'decimalSeparator'
  | 'thousandsSeparator'
  | 'nullValues'
>;

/** A setting the file reads more than one way: its candidates, and what in the file says so. */
export interface Undecided {
  readonly setting: keyof SniffedDialect;
  readonly candidates: readonly string[];
  readonly why: string;
}

export interface Sniffed {
  readonly decided: SniffedDialect;
  readonly undecided: readonly Undecided[];
}

const DELIMITERS = [',', ';', '\t', '|'] as const;
const MARKERS = ['\\N', 'NA', 'N/A', 'NULL', 'null'] as const;
const NUMBER = /^[+-]?\d+(?:\.\d+)?$/;
const COMMA_DECIMAL = /^[+-]?\d{1,3}(?:([. \u00a0\u202f'])\d{3})*,\d+$|^[+-]?\d+,\d+$/;
const DOT_DECIMAL = /^[+-]?\d{1,3}(?:([, \u00a0\u202f'])\d{3})*\.\d+$|^[+-]?\d+\.\d+$/;
/** `1,234` and `1.234`: a decimal separator, or a thousands one. */
const THREE_AFTER = /^[+-]?\d{1,3}([.,])\d{3}$/;

const shown = (c: string) => (c === '\t' ? 'tab' : c);

/** Whether a value is a number or a date (what a header's name over it is not). */
function typed(value: string): boolean {
  const v = value.trim();
  if (v === '') return false;
  if (NUMBER.test(v) || COMMA_DECIMAL.test(v) || DOT_DECIMAL.test(v)) return true;
  const shape = dateShape(v).kind;
  return shape === 'iso' || shape === 'dayMonth' || shape === 'plain';
}

function parse(lines: readonly string[], delimiter: string, quote: string, escapeChar: string): string[][] {
  return Papa.parse<string[]>(lines.join('\n'), { delimiter, quoteChar: quote, escapeChar, skipEmptyLines: 'greedy' }).data;
}

/**
 * The field count most rows have; the share of the rows from the first of that count on (lines
 * before it are a preamble) that have it; whether that first is the first row.
 */
function modal(rows: readonly string[][]): { width: number; share: number; fromFirst: boolean } {
  const counts = new Map<number, number>();
  for (const r of rows) counts.set(r.length, (counts.get(r.length) ?? 0) + 1);
  let width = 0;
  let most = 0;
  for (const [w, n] of counts) if (n > most || (n === most && w > width)) [width, most] = [w, n];
  const first = rows.findIndex((r) => r.length === width);
  return { width, share: first < 0 ? 0 : most / (rows.length - first), fromFirst: first === 0 };
}

/**
 * What the head of a file (`text`, its first lines; `complete`: the whole file) says of its
 * dialect; `given`: the settings the user gave, which are not sniffed and which the rest is read
 * with. `.tsv` files are tab-separated.
 */
export function sniffCsv(text: string, extension: string, given: CsvDialect = {}, complete = true): Sniffed {
  const decided: { -readonly [K in keyof SniffedDialect]: SniffedDialect[K] } = {};
  const undecided: Undecided[] = [];
  let lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (!complete) lines = lines.slice(0, -1);
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  if (lines.length === 0) return { decided, undecided };

  // Comment lines: lines starting with '#', the rest not.
  let comment = given.commentPrefix;
  if (comment === undefined && lines.some((l) => l.startsWith('#')) && lines.some((l) => !l.startsWith('#') && l !== '')) {
    comment = decided.commentPrefix = '#';
  }
  const isComment = (l: string) => comment !== undefined && l.startsWith(comment);

  // The quote: fields that start with ' and none that start with ".
  const fieldStart = (q: string) => new RegExp(`(?:^|[,;\\t|])${q === '"' ? '"' : "'"}`, 'm').test(text);
  let quote = given.quote ?? '"';
  if (given.quote === undefined && fieldStart("'") && !fieldStart('"')) quote = decided.quote = "'";
  // The escape: a backslash before the quote, and no doubled quote inside a field.
  let escapeChar = given.escape ?? quote;
  const backslashed = text.includes(`\\${quote}`);
  const doubled = new RegExp(`[^,;\\t|\\n${quote}]${quote}${quote}[^,;\\t|\\n${quote}]`).test(text);
  if (given.escape === undefined && backslashed && !doubled) escapeChar = decided.escape = '\\';

  const data = lines.filter((l) => !isComment(l));
  // The delimiter: those that split most rows evenly into two or more fields.
  let delimiter = extension === '.tsv' ? '\t' : given.delimiter;
  if (delimiter === undefined) {
    const splitting = DELIMITERS.map((d) => ({ d, ...modal(parse(data, d, quote, escapeChar)) })).filter(
      (c) => c.width >= 2 && c.share >= 0.8,
    );
    // One that splits the first line as it splits the rest says more than one that needs a preamble.
    const whole = splitting.filter((c) => c.fromFirst);
    const even = whole.length === 1 ? whole : splitting;
    if (even.length === 1) {
      delimiter = even[0]!.d;
      if (delimiter !== ',') decided.delimiter = delimiter;
    } else if (even.length > 1) {
      undecided.push({
        setting: 'delimiter',
        candidates: even.map((c) => shown(c.d)),
        why: `the lines split evenly at each of ${even.map((c) => `'${shown(c.d)}' (${c.width} fields)`).join(', ')}`,
      });
      return { decided, undecided };
    }
  }
  const d = delimiter ?? ',';
  const rows = parse(data, d, quote, escapeChar);
  const { width } = modal(rows);

  // Preamble: leading rows of another field count than the rest (comment lines counted as lines).
  let body = rows;
  if (given.skipLines !== undefined) {
    body = parse(
      lines.slice(given.skipLines).filter((l) => !isComment(l)),
      d,
      quote,
      escapeChar,
    );
  } else {
    let lead = 0;
    while (lead < rows.length - 1 && rows[lead]!.length !== width) lead++;
    if (lead > 0) {
      // The physical lines up to the last preamble row (a preamble line holds no quoted line break).
      let seen = 0;
      let index = 0;
      for (; index < lines.length && seen < lead; index++) if (!isComment(lines[index]!) && lines[index] !== '') seen++;
      decided.skipLines = index;
      body = rows.slice(lead);
    }
  }
  if (body.length === 0) return { decided, undecided };

  // A header: the first row's value is a name over numbers or dates; a typed value there says none.
  const columns = Array.from({ length: width }, (_, i) => body.slice(1).map((r) => r[i] ?? ''));
  if (given.header === undefined && given.columnNames === undefined && body.length >= 2) {
    let named = false;
    let valued = false;
    for (const [i, values] of columns.entries()) {
      const filled = values.filter((v) => v.trim() !== '' && !(MARKERS as readonly string[]).includes(v.trim()));
      if (filled.length === 0 || !filled.every(typed)) continue;
      if (typed(body[0]![i] ?? '')) valued = true;
      else if ((body[0]![i] ?? '').trim() !== '') named = true;
    }
    if (valued && !named) decided.header = false;
    else if (valued && named)
      undecided.push({
        setting: 'header',
        candidates: ['a header line', 'no header (--no-header)'],
        why: 'the first row holds names over some number and date columns, and numbers or dates in others',
      });
  }
  const values = decided.header === false ? Array.from({ length: width }, (_, i) => body.map((r) => r[i] ?? '')) : columns;

  // NULL markers: `\N` anywhere; NA, NULL, ... in a column of numbers or dates.
  if (given.nullValues === undefined) {
    const markers = new Set<string>();
    for (const column of values) {
      const found = MARKERS.filter((m) => column.some((v) => v === m));
      if (found.length === 0) continue;
      if (found.includes('\\N')) markers.add('\\N');
      const rest = column.filter((v) => v.trim() !== '' && !(MARKERS as readonly string[]).includes(v));
      if (rest.length > 0 && rest.every(typed)) for (const m of found) markers.add(m);
    }
    if (markers.size > 0) decided.nullValues = [...markers];
  }

  // Dates: the order the values decide, the same in every column.
  if (given.dateStyle === undefined && given.dateFormat === undefined) {
    const orders = new Set<string>();
    let both: string | undefined;
    for (const column of values) {
      const decision = decideOrder(column);
      if (decision.contradiction) continue;
      if (decision.order) orders.add(decision.order);
      else if (decision.undecided) both ??= decision.undecided;
      if (decision.shortYear) both ??= decision.shortYear;
    }
    if (orders.size === 1 && both === undefined) decided.dateStyle = [...orders][0] as 'DMY' | 'MDY';
    else if (orders.size > 1 || both !== undefined)
      undecided.push({
        setting: 'dateStyle',
        candidates: ['DMY', 'MDY'],
        why:
          orders.size > 1
            ? 'some date columns read only day first, others only month first'
            : `${JSON.stringify(both)} reads day first and month first, and nothing in the file says which`,
      });
  }

  // Numbers: a decimal comma (`12,5`, `1.234,5`) or point, decided by values that read one way.
  if (given.decimalSeparator === undefined && d !== ',') {
    let comma = false;
    let point = false;
    let thousands: string | undefined;
    let either: string | undefined;
    for (const v of values.flat().map((x) => x.trim())) {
      const three = THREE_AFTER.exec(v);
      if (three) {
        either ??= v;
        continue;
      }
      const c = COMMA_DECIMAL.exec(v);
      if (c) {
        comma = true;
        if (c[1]) thousands = c[1];
      }
      const p = DOT_DECIMAL.exec(v);
      if (p && v.includes('.')) {
        point = true;
        if (p[1]) thousands = thousands ?? p[1];
      }
    }
    if (comma && !point) {
      decided.decimalSeparator = ',';
      if (thousands) decided.thousandsSeparator = thousands;
    } else if (comma && point)
      undecided.push({
        setting: 'decimalSeparator',
        candidates: [',', '.'],
        why: 'numbers are written with a decimal comma and a decimal point',
      });
    else if (!point && either !== undefined)
      undecided.push({
        setting: 'decimalSeparator',
        candidates: [',', '.'],
        why: `${JSON.stringify(either)} reads as a decimal number or as a whole one with a thousands separator`,
      });
  }
  return { decided, undecided };
}
