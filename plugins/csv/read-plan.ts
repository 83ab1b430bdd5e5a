/**
 * How one CSV file is read into the table's columns: by the database from the claimed path
 * (`COPY ... FROM 'path'`, or `INSERT BULK ... SELECT ... FROM external('path')` when its dates
 * are made ISO by the statement, see date-sql.ts), or streamed with the fields that change
 * replaced on the way (splice.ts). Both ways land the same values; a value only the streamed way
 * reads makes the first fail and the file go the second way (`STREAMED`).
 */
import { fromDbError, ingestError, IngestFailure } from '../../src/errors.ts';
import { parseSqlType } from '../../src/columns/sql-types.ts';
import { quoteIdent, quoteLiteral } from '../../src/columns/sql.ts';
import type { ClaimedFile, IngestContext } from '../../src/types.ts';
import { type DateRule, readDate } from '../shared/date-read.ts';
import { dateSql, isBail } from '../shared/date-sql.ts';
import { type NumberFormat, numberReader } from '../shared/number-text.ts';
import { dateFailure } from './dates.ts';
import { isIsoStart } from './bytes.ts';
import type { TextDialect } from './dialect.ts';
import { type FieldRule, type LineMap, type SpliceOptions, spliced } from './splice.ts';

/** `fileState` key: the database met a value only the streamed way reads; stream this file. */
const STREAMED = 'csv.streamed';

export interface PlanColumn {
  readonly name: string;
  readonly sqlType: string;
}

export interface ReadPlan {
  readonly columns: readonly PlanColumn[];
  readonly delimiter: string;
  /** How the file's text is split (quote, escape, a preamble, comments, a header line or not). */
  readonly text: TextDialect;
  /** The file ends with blank lines, which are no rows: only the streamed way drops them. */
  readonly trailingBlank?: boolean;
  /** The date rule of each column (file order), if it holds dates. */
  readonly dates: readonly (DateRule | undefined)[];
  /** Unquoted fields equal to one of these are NULL (besides the empty one). */
  readonly nulls: readonly string[];
  /** How numbers are written, when not as the databases read them (`1.234,5`). */
  readonly numbers?: NumberFormat;
}

/**
 * Problems of one value (a date against the style or format, not a date, not a number as the
 * format writes it): with bad rows skipped, its row is set aside. The others (DATE_AMBIGUOUS,
 * DATE_ORDER) need a setting and fail the file.
 */
export const ROW_PROBLEMS: ReadonlySet<string> = new Set([
  'DATE_STYLE',
  'DATE_FORMAT',
  'DATE_INVALID',
  'DATE_UNREADABLE',
  'NUMBER_FORMAT',
  // The UTF-8 check before a load (utf8-check.ts): the row holding the bytes is the bad one.
  'CSV_NOT_UTF8',
]);

const NUMBER_FAMILIES = new Set(['smallint', 'integer', 'bigint', 'real', 'double', 'numeric']);

/** A column of this type holds numbers (read with the plan's number format). */
export function isNumberType(sqlType: string): boolean {
  return NUMBER_FAMILIES.has(parseSqlType(sqlType).family);
}

/** The plan's number format applies to some of its columns. */
function hasNumbers(plan: ReadPlan): boolean {
  return plan.numbers !== undefined && plan.columns.some((c) => isNumberType(c.sqlType));
}

/** Lines of the file are dropped on the way (a preamble, comments, blank lines at the end). */
function dropsLines(plan: ReadPlan): boolean {
  return plan.text.skipLines > 0 || plan.text.comment !== undefined || plan.trailingBlank === true;
}

/** The plan has nothing to change on the way: the file's bytes load as they are. */
export function plain(plan: ReadPlan): boolean {
  return plan.dates.every((d) => d === undefined) && plan.nulls.length === 0 && !hasNumbers(plan) && !dropsLines(plan);
}

/** COPY's options for the file's text: its delimiter, quote and escape, a header line or not. */
export function copyOptions(text: TextDialect, header = text.header): string {
  const quoting =
    text.quote === '"' && text.escape === '"' ? '' : `, QUOTE ${quoteLiteral(text.quote)}, ESCAPE ${quoteLiteral(text.escape)}`;
  return `(FORMAT csv, HEADER ${header}, DELIMITER ${quoteLiteral(text.delimiter)}${quoting})`;
}

/** The failure of a file whose field (at `line`, in `column`) cannot load, with the setting that would fix it. */
export function fieldFailure(
  file: ClaimedFile,
  column: string,
  line: number | undefined,
  problem: { readonly code: string; readonly reason: string },
): IngestFailure {
  if (problem.code !== 'NUMBER_FORMAT') return dateFailure(file, column, line, problem);
  return new IngestFailure(
    ingestError(
      'data',
      problem.code,
      `${file.name}: ${line === undefined ? '' : `line ${line}, `}column "${column}": ${problem.reason}`,
      'Check how the file writes its numbers and set it (--decimal-separator, --thousands-separator; ' +
        'decimalSeparator, thousandsSeparator in the API and the serve config), or fix the value; then replay the file.',
      { file: file.name, ...(line === undefined ? {} : { line }), column },
    ),
  );
}

/** This attempt streams the file (an earlier one met a value only the streamed way reads). */
export function mustStream(ctx: IngestContext): boolean {
  return ctx.fileState.get(STREAMED) === true;
}

/**
 * For a database that reads the file itself: each column's expression over `external()`'s
 * columns, with the type `external()` reads it as; undefined when only the streamed way can read
 * the file.
 */
export function serverSelect(plan: ReadPlan): { readonly expr: string; readonly type: string }[] | undefined {
  // COPY and external() take one NULL string, and the empty field is one already; and they read
  // numbers only as SQL writes them.
  if (plan.nulls.length > 0 || hasNumbers(plan) || dropsLines(plan)) return undefined;
  const out: { expr: string; type: string }[] = [];
  for (const [i, column] of plan.columns.entries()) {
    const rule = plan.dates[i];
    const name = quoteIdent(column.name);
    if (!rule) {
      out.push({ expr: name, type: column.sqlType });
      continue;
    }
    const expr = dateSql(name, column.sqlType, rule);
    if (expr === undefined) return undefined;
    out.push({ expr, type: 'text' });
  }
  return out;
}

/** `external(path, ...)` reading the file with the plan's column types. */
export function externalSource(
  path: string | readonly string[],
  select: readonly { expr: string; type: string }[],
  plan: ReadPlan,
  header = plan.text.header,
): string {
  const descriptor = plan.columns.map((c, i) => `${quoteIdent(c.name)} ${select[i]!.type}`).join(', ');
  const paths = typeof path === 'string' ? quoteLiteral(path) : `ARRAY[${path.map(quoteLiteral).join(', ')}]`;
  const { text } = plan;
  const quoting =
    text.quote === '"' && text.escape === '"' ? '' : `, QUOTE => ${quoteLiteral(text.quote)}, ESCAPE => ${quoteLiteral(text.escape)}`;
  return (
    `external(${paths}, COLUMNS => DESCRIPTOR(${descriptor}), FORMAT => 'csv', HEADER => ${header}, DELIMITER ` +
    `=> ${quoteLiteral(text.delimiter)}${quoting})`
  );
}

/**
 * A statement reading the file itself failed on a value its SQL does not read (or on a value
 * without saying where): the next attempt streams the file, and says why. Else `error` as it was.
 */
export function streamInstead(error: unknown, file: ClaimedFile, guarded: boolean, ctx: IngestContext): unknown {
  const failure = fromDbError(error, file.name);
  const unplaced = guarded && failure.kind === 'data' && failure.line === undefined && failure.sqlState?.startsWith('22') === true;
  if (!isBail(error) && !unplaced) return error;
  ctx.fileState.set(STREAMED, true);
  const reason = 'the database, reading the file itself, met a date it does not read as this watcher does; streaming the file instead';
  ctx.logger.info(reason, { file: file.name });
  return new IngestFailure({ ...failure, retry: { reason } });
}

const DIGIT_0 = 0x30;
const LF = 0x0a;
const CR = 0x0d;
/** The field is empty (NULL) or starts as an ISO date (`2018-`): it loads as written. */
export function startsIso(bytes: Uint8Array, start: number, end: number): boolean {
  return start === end || (end - start >= 5 && isIsoStart(bytes, start));
}

const encoder = new TextEncoder();

/** The unquoted field is one of `markers` (byte for byte). */
function isMarker(markers: readonly Uint8Array[], bytes: Uint8Array, start: number, end: number): boolean {
  outer: for (const m of markers) {
    if (m.length !== end - start) continue;
    for (let i = 0; i < m.length; i++) if (bytes[start + i] !== m[i]) continue outer;
    return true;
  }
  return false;
}

/** The splicer's rule for each column of the plan: NULL markers made NULL, numbers as SQL writes them, dates made ISO. */
export function fieldRules(plan: ReadPlan): (FieldRule | undefined)[] {
  const nulls = new Set(plan.nulls);
  const markers = plan.nulls.map((m) => encoder.encode(m));
  const reader = plan.numbers ? numberReader(plan.numbers) : undefined;
  const rewrite = plan.numbers ? numberBytes(plan.numbers) : undefined;
  return plan.columns.map((column, i) => {
    const date = plan.dates[i];
    const number = reader !== undefined && isNumberType(column.sqlType);
    if (!date && !number && markers.length === 0) return undefined;
    const marker = (bytes: Uint8Array, start: number, end: number) => markers.length > 0 && isMarker(markers, bytes, start, end);
    const rule: FieldRule = {
      keep: (bytes, start, end) => !marker(bytes, start, end) && (date ? !date.format && startsIso(bytes, start, end) : !number),
      convert: (text, quoted) => {
        if (!quoted && nulls.has(text)) return undefined;
        if (text === '' && !quoted) return text;
        if (number) {
          const read = reader!.read(text);
          return typeof read === 'string' ? read : { code: 'NUMBER_FORMAT', reason: read.reason, fileLevel: false };
        }
        return date && text !== '' ? readDate(text, date) : text;
      },
    };
    // A marker is judged by `convert`; any other number's bytes are rewritten as they are.
    return number && rewrite
      ? { ...rule, rewrite: (bytes, start, end, out) => (marker(bytes, start, end) ? false : rewrite(bytes, start, end, out)) }
      : rule;
  });
}

const PLUS = 0x2b;
const MINUS = 0x2d;
const POINT = 0x2e;
const E_LOWER = 0x65;
const E_UPPER = 0x45;

/**
 * A number's bytes rewritten as SQL writes it (separators as the format says, each byte checked
 * as `numberReader` checks the text), for formats of ASCII separators: `undefined` when the field
 * needs no change, `false` when it must be judged as text (not such a number, or NaN).
 */
function numberBytes(
  format: NumberFormat,
): ((bytes: Uint8Array, start: number, end: number, out: Uint8Array) => number | undefined | false) | undefined {
  const dec = format.decimal.charCodeAt(0);
  const thou = format.thousands === undefined ? -1 : format.thousands.charCodeAt(0);
  if (dec > 0x7f || thou > 0x7f) return undefined;
  return (bytes, start, end, out) => {
    if (start === end) return undefined;
    let j = 0;
    let i = start;
    if (bytes[i] === PLUS || bytes[i] === MINUS) out[j++] = bytes[i++]!;
    let digits = 0;
    let group = 0;
    let grouped = false;
    for (; i < end; i++) {
      const b = bytes[i]!;
      if (b >= DIGIT_0 && b <= DIGIT_0 + 9) {
        out[j++] = b;
        digits++;
        group++;
      } else if (b === thou) {
        if (digits === 0 || (grouped ? group !== 3 : group > 3)) return false;
        grouped = true;
        group = 0;
      } else break;
    }
    if (grouped && group !== 3) return false;
    let changed = grouped;
    if (i < end && bytes[i] === dec) {
      i++;
      const from = i;
      out[j++] = POINT;
      while (i < end && bytes[i]! >= DIGIT_0 && bytes[i]! <= DIGIT_0 + 9) out[j++] = bytes[i++]!;
      if (i === from) return false;
      changed ||= dec !== POINT;
      digits++;
    }
    if (digits === 0) return false;
    if (i < end && (bytes[i] === E_LOWER || bytes[i] === E_UPPER)) {
      out[j++] = bytes[i++]!;
      if (i < end && (bytes[i] === PLUS || bytes[i] === MINUS)) out[j++] = bytes[i++]!;
      const from = i;
      while (i < end && bytes[i]! >= DIGIT_0 && bytes[i]! <= DIGIT_0 + 9) out[j++] = bytes[i++]!;
      if (i === from) return false;
    }
    if (i !== end) return false;
    return changed ? j : undefined;
  };
}

/**
 * The splicer set up for `plan`: `header`, the bytes start where the file does (its preamble, its
 * header line); else with line `firstLine` of a file's body. `lines` learns of the lines dropped,
 * `suffix` is appended to every record.
 */
export function splicing(
  file: ClaimedFile,
  plan: ReadPlan,
  header: boolean,
  firstLine = 1,
  extra: { lines?: LineMap; suffix?: Uint8Array } = {},
): SpliceOptions {
  const { text } = plan;
  return {
    delimiter: text.delimiter.charCodeAt(0),
    quote: text.quote.charCodeAt(0),
    escape: text.escape.charCodeAt(0),
    rules: fieldRules(plan),
    header: header && text.header,
    firstLine,
    ...(header && text.skipLines > 0 ? { skipLines: text.skipLines } : {}),
    ...(text.comment ? { comment: encoder.encode(text.comment) } : {}),
    ...extra,
    fail: (problem, field, line) => {
      throw fieldFailure(file, plan.columns[field]!.name, line, problem);
    },
  };
}

/** The file's bytes as they are to be streamed: with the fields that change replaced, the lines that are no rows dropped. */
export function streamedBytes(file: ClaimedFile, plan: ReadPlan, lines?: LineMap, suffix?: Uint8Array): AsyncIterable<Uint8Array> {
  if (plain(plan) && !suffix) return file.stream();
  return spliced(file.stream(), splicing(file, plan, true, 1, { ...(lines ? { lines } : {}), ...(suffix ? { suffix } : {}) }));
}

/** The file ends with a blank line (two line breaks), which the databases' COPY takes for a row. */
export async function endsWithBlankLine(file: ClaimedFile): Promise<boolean> {
  if (file.size < 2) return false;
  const tail = await file.read(Math.max(0, file.size - 3), 3);
  const n = tail.length;
  return tail[n - 1] === LF && (tail[n - 2] === LF || (tail[n - 2] === CR && tail[n - 3] === LF));
}

/**
 * A database error about the streamed text, its line numbers told as the file's (lines dropped on
 * the way, see `LineMap`), for `fromDbError` as any other.
 */
export function inFileLines(error: unknown, lines: LineMap): unknown {
  if (!lines.dropped || typeof error !== 'object' || error === null) return error;
  const e = error as { message?: unknown; detail?: unknown; where?: unknown; code?: unknown };
  const fix = (text: unknown, pattern: RegExp) =>
    typeof text === 'string'
      ? text.replace(pattern, (whole: string, n: string) => whole.replace(n, String(lines.fileLine(Number(n)))))
      : text;
  return Object.assign(Object.create(Object.getPrototypeOf(error) as object) as object, error, {
    message: fix(e.message, /\bline (\d+)/),
    detail: fix(e.detail, /line:\s*(\d+)/),
    where: fix(e.where, /\bline (\d+)/),
  });
}
