/**
 * The date columns of a text format (CSV fields, JSON strings), read without a guess: how a column
 * that holds dates reads its values (its rule, from the settings and the values of the file's
 * head), which values make a new table's column a date, and the failure of a file whose dates
 * cannot be read without a guess. Shared by the csv and json ingesters, so that both read the same
 * values the same way and fail with the same codes and hints.
 */
import { ingestError, IngestFailure } from '../../src/errors.ts';
import { parseSqlType } from '../../src/columns/sql-types.ts';
import type { ClaimedFile, LogicalType } from '../../src/types.ts';
import { compileDateFormat, type DateFormat } from './date-format.ts';
import { dateShape, type DateProblem, type DateRule, type DateStyle, decideOrder, isDateProblem, readDate } from './date-read.ts';
import { inferColumnType } from './infer-text.ts';

/** The date settings (`dateStyle`, `dateFormat`, `timestampFormat`), compiled. */
export interface DateSettings {
  readonly style?: DateStyle;
  readonly dateFormat?: DateFormat;
  readonly timestampFormat?: DateFormat;
}

/** The settings as the user gives them, compiled (they passed their checks). */
export function compileDateSettings(given: {
  readonly dateStyle?: DateStyle;
  readonly dateFormat?: string;
  readonly timestampFormat?: string;
}): DateSettings {
  const compile = (format: string | undefined) => {
    if (format === undefined) return undefined;
    const compiled = compileDateFormat(format);
    if (typeof compiled === 'string') throw new TypeError(`date format ${JSON.stringify(format)} ${compiled}`);
    return compiled;
  };
  const dateFormat = compile(given.dateFormat);
  const timestampFormat = compile(given.timestampFormat);
  return {
    ...(given.dateStyle ? { style: given.dateStyle } : {}),
    ...(dateFormat ? { dateFormat } : {}),
    ...(timestampFormat ? { timestampFormat } : {}),
  };
}

export type DateKind = 'date' | 'timestamp' | 'timestamptz';

/** The kind of date a column of `sqlType` holds, if it holds one. */
export function dateKind(sqlType: string): DateKind | undefined {
  const family = parseSqlType(sqlType).family;
  return family === 'date' || family === 'timestamp' || family === 'timestamptz' ? family : undefined;
}

/** The kind of date a column of logical type `type` holds, if it holds one. */
export function dateKindOf(type: LogicalType): DateKind | undefined {
  return type.kind === 'date' || type.kind === 'timestamp' || type.kind === 'timestamptz' ? type.kind : undefined;
}

function formatFor(kind: DateKind, settings: DateSettings): DateFormat | undefined {
  return kind === 'date' ? settings.dateFormat : (settings.timestampFormat ?? settings.dateFormat);
}

/** The rule of a column of `kind` from the settings alone (for values known to be ISO or in the format). */
export function baseRule(kind: DateKind, settings: DateSettings): DateRule {
  const format = formatFor(kind, settings);
  return { ...(settings.style ? { style: settings.style } : {}), ...(format ? { format } : {}), withTime: kind !== 'date' };
}

const HINT =
  'Say how the file writes its dates: --date-style DMY (day first), MDY (month first) or YMD, or --date-format (e.g. ' +
  '--date-format %d/%m/%Y, --timestamp-format "%d/%m/%Y %H:%M"); dateStyle, dateFormat and timestampFormat in the API and ' +
  'the serve config. Then replay the file.';

/** The failure of a file whose value (at `line`, in column `column`) cannot be read as a date. */
export function dateFailure(
  file: ClaimedFile,
  column: string,
  line: number | undefined,
  problem: { readonly code: string; readonly reason: string },
): IngestFailure {
  const where = line === undefined ? '' : `line ${line}, `;
  const hint =
    problem.code === 'DATE_INVALID'
      ? 'Fix the value at the reported line and column, then replay the file.'
      : problem.code === 'DATE_ORDER'
        ? `The file's dates are not all written in one order. Fix the values, or say the order: ${HINT}`
        : HINT;
  return new IngestFailure(
    ingestError('data', problem.code, `${file.name}: ${where}column "${column}": ${problem.reason}`, hint, {
      file: file.name,
      ...(line === undefined ? {} : { line }),
      column,
    }),
  );
}

/** The date rule of each column from the settings alone (for values known to be ISO or in the format). */
export function baseDateRules(columns: readonly { readonly sqlType: string }[], settings: DateSettings): (DateRule | undefined)[] {
  return columns.map((c) => {
    const kind = dateKind(c.sqlType);
    return kind ? baseRule(kind, settings) : undefined;
  });
}

/**
 * The rule of one date column of `kind`, from the settings and its values in the head of the file
 * (`''` is NULL; `lines[i]` is where `values[i]` is): the order they decide when nothing is set.
 * Throws the file's failure when they contradict each other, or one cannot be read without a guess.
 */
export function decidedRule(
  kind: DateKind,
  settings: DateSettings,
  values: readonly string[],
  lines: readonly (number | undefined)[],
  file: ClaimedFile,
  column: string,
): DateRule {
  const base = baseRule(kind, settings);
  let rule = base;
  if (!base.style && !base.format) {
    const decision = decideOrder(values);
    if (decision.contradiction) {
      const [dayFirst, monthFirst] = decision.contradiction;
      const at = (v: string) => lines[values.findIndex((x) => x.trim() === v)];
      throw dateFailure(file, column, at(monthFirst), {
        code: 'DATE_ORDER',
        reason:
          `${JSON.stringify(monthFirst)} reads only month first, but ${JSON.stringify(dayFirst)} (line ${at(dayFirst)}) ` +
          `only day first`,
      });
    }
    if (decision.order) rule = { ...base, order: decision.order };
  }
  for (const [i, value] of values.entries()) {
    if (value === '') continue;
    const read = readDate(value, rule);
    if (isDateProblem(read) && read.fileLevel) throw dateFailure(file, column, lines[i], read);
  }
  return rule;
}

const TIME = /^[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?: ?[AaPp][Mm])?$/;
const ZONE = /(?:Z|[+-](?:[01]\d|2[0-3])(?::?[0-5]\d)?)$/;

/** What a value after its date part makes of the column: a date, a timestamp, one with a zone. */
function restKind(rest: string): DateKind | undefined {
  if (rest === '') return 'date';
  const zone = ZONE.exec(rest);
  if (zone && TIME.test(rest.slice(0, zone.index))) return 'timestamptz';
  return TIME.test(rest) ? 'timestamp' : undefined;
}

/**
 * The kind of date every value of `values` (none empty) is written as, in a form that reads
 * without a guess once the order is known: ISO, year first, or day and month (a two-digit year
 * only with a style); undefined when one of them is not such a date. Month names stay text.
 */
function writtenKind(values: readonly string[], settings: DateSettings): DateKind | undefined {
  let kind: DateKind | undefined;
  for (const raw of values) {
    const value = raw.trim();
    const shape = dateShape(value);
    let rest: string;
    if (shape.kind === 'iso') rest = value.replace(/^\d{4}-\d{1,2}-\d{1,2}/, '');
    else if ((shape.kind === 'plain' && !shape.named) || shape.kind === 'dayMonth' || (shape.kind === 'shortYear' && settings.style))
      rest = shape.rest;
    else return undefined;
    const here = restKind(rest);
    if (here === undefined || (kind !== undefined && here !== kind)) return undefined;
    kind = here;
  }
  return kind;
}

/** Every value is in `format`, or an ISO date (which reads as one under a format too). */
function fitsFormat(values: readonly string[], format: DateFormat | undefined, withTime: boolean): boolean {
  if (format === undefined) return false;
  const rule: DateRule = { format, withTime };
  return values.some((v) => typeof format.parse(v.trim()) !== 'string') && values.every((v) => !isDateProblem(readDate(v, rule)));
}

/**
 * The type of a new table's column from its sample values (`''` is NULL): a date or timestamp when
 * they are all written as one in the given format, or as one that reads without a guess; the order
 * of day and month as the values decide it (values that contradict each other make it text); else
 * as `inferColumnType` says. Values that are dates, but read both ways with nothing to decide,
 * fail the file (the caller's `fail`).
 */
export function inferDatedType(
  values: readonly string[],
  settings: DateSettings,
  fail: (index: number, problem: DateProblem) => never,
): LogicalType {
  const filled = values.filter((v) => v !== '');
  if (filled.length === 0) return { kind: 'text' };
  if (fitsFormat(filled, settings.dateFormat, false)) return { kind: 'date' };
  if (fitsFormat(filled, settings.timestampFormat, true)) return { kind: settings.timestampFormat!.hasZone ? 'timestamptz' : 'timestamp' };
  const kind = writtenKind(filled, settings);
  if (kind === undefined || (filled.every((v) => dateShape(v.trim()).kind === 'iso') && !settings.style)) return inferColumnType(values);
  let rule: DateRule = { ...(settings.style ? { style: settings.style } : {}), withTime: kind !== 'date' };
  if (!settings.style) {
    const decision = decideOrder(filled);
    if (decision.contradiction) return { kind: 'text' };
    if (decision.order) rule = { ...rule, order: decision.order };
  }
  const problems = values
    .map((v) => (v === '' ? undefined : readDate(v, rule)))
    .map((r) => (r !== undefined && isDateProblem(r) ? r : undefined));
  const ambiguous = problems.findIndex((p) => p?.code === 'DATE_AMBIGUOUS');
  if (problems.some((p) => p !== undefined && p.code !== 'DATE_AMBIGUOUS')) return { kind: 'text' };
  if (ambiguous >= 0) fail(ambiguous, problems[ambiguous]!);
  return { kind };
}
