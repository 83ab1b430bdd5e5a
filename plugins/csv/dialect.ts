/**
 * Which character separates a CSV file's fields. `.tsv` files are tab-separated; `.csv` files
 * comma-separated unless the watcher is told otherwise (`csvDelimiter`): spreadsheets in many
 * locales export `;`-separated "CSV" (their decimal separator is the comma), and other tools `|`.
 *
 * A `;`-separated file read with commas does not always fail: a file without commas in it loads
 * as one text column holding whole lines, or creates a table with one column named `id;name;...`.
 * So when the delimiter was not set explicitly, a file whose header is one field that another
 * common delimiter splits consistently, line after line, is refused before anything is loaded.
 */
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile } from '../../src/types.ts';
import { compileDateFormat } from '../shared/date-format.ts';
import { compileDateSettings, type DateSettings } from '../shared/date-columns.ts';
import type { CsvDialect } from '../../src/types/csv-dialect.ts';
import { DATE_STYLES } from '../shared/date-read.ts';
import { type NumberFormat, separatorProblem } from '../shared/number-text.ts';
import { parseRows } from './head.ts';

/** How the CSV plugin reads `.csv` files (`.tsv` is always tab-separated): declared with the options (src/types/csv-dialect.ts). */
export type { CsvDialect };

export type { DateSettings } from '../shared/date-columns.ts';

/** A setting of a dialect that cannot be used: which, and why. */
export interface DialectProblem {
  readonly field: keyof CsvDialect;
  readonly problem: string;
}

/**
 * Everything wrong with `dialect`; empty when it can be used. `alone`: each setting by itself only,
 * leaving out what is wrong with settings together (a decimal separator that is the delimiter, names
 * for a header line): the check of one setting, whose neighbours are not known yet.
 */
export function dialectProblems(dialect: CsvDialect, alone = false): DialectProblem[] {
  const problems: DialectProblem[] = [];
  const badDelimiter = dialect.delimiter === undefined ? undefined : delimiterProblem(dialect.delimiter);
  if (badDelimiter) problems.push({ field: 'delimiter', problem: badDelimiter });
  if (dialect.dateStyle !== undefined && !(DATE_STYLES as readonly string[]).includes(dialect.dateStyle)) {
    problems.push({ field: 'dateStyle', problem: `is ${JSON.stringify(dialect.dateStyle)}, not one of ${DATE_STYLES.join(', ')}` });
  }
  if (dialect.nullValues !== undefined) {
    const bad = Array.isArray(dialect.nullValues) ? dialect.nullValues.find((v) => typeof v !== 'string' || /[\r\n"]/.test(v)) : undefined;
    if (!Array.isArray(dialect.nullValues)) problems.push({ field: 'nullValues', problem: 'is not a list of strings' });
    else if (bad !== undefined)
      problems.push({
        field: 'nullValues',
        problem: `holds ${JSON.stringify(bad)}, which an unquoted field cannot be (it holds a quote or a line break)`,
      });
  }
  for (const field of ['decimalSeparator', 'thousandsSeparator'] as const) {
    const value = dialect[field];
    if (value === undefined) continue;
    const problem = separatorProblem(value);
    if (problem) problems.push({ field, problem });
    // Sniffing without a delimiter given, each file's own delimiter is checked against it (sniffed.ts).
    else if (!alone && value === (dialect.delimiter ?? ',') && !(dialect.sniff === true && dialect.delimiter === undefined)) {
      // Checked when the watcher starts, before it knows whether .csv files will come: a watcher of
      // .tsv files only (always tab-separated) is told so too, since the default delimiter is the clash.
      const tsv = dialect.delimiter === undefined ? '; for tab-separated files, .tsv too, --csv-delimiter tab' : '';
      problems.push({
        field,
        problem: `is ${JSON.stringify(value)}, the CSV delimiter too: set another delimiter (csvDelimiter, --csv-delimiter ';'${tsv})`,
      });
    }
  }
  if (
    !alone &&
    dialect.decimalSeparator !== undefined &&
    dialect.decimalSeparator === (dialect.thousandsSeparator ?? '.') &&
    dialect.thousandsSeparator !== undefined
  ) {
    problems.push({ field: 'thousandsSeparator', problem: `is ${JSON.stringify(dialect.thousandsSeparator)}, the decimal separator too` });
  }
  if (!alone && dialect.decimalSeparator === undefined && dialect.thousandsSeparator === '.') {
    problems.push({
      field: 'thousandsSeparator',
      problem: 'is ".", the decimal separator when none is set: set decimalSeparator too (--decimal-separator ,)',
    });
  }
  const delimiter = dialect.delimiter ?? ',';
  for (const field of ['quote', 'escape'] as const) {
    const value = dialect[field];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value.length !== 1 || value.charCodeAt(0) > 0x7e)
      problems.push({ field, problem: `must be one ASCII character, got ${JSON.stringify(value)}` });
    else if ((!alone && value === delimiter) || value === '\n' || value === '\r')
      problems.push({ field, problem: `cannot be ${JSON.stringify(value)} (the delimiter or a line break)` });
  }
  if (dialect.skipLines !== undefined && !(Number.isInteger(dialect.skipLines) && dialect.skipLines >= 0)) {
    problems.push({ field: 'skipLines', problem: `is ${JSON.stringify(dialect.skipLines)}, not a whole number of lines` });
  }
  if (
    dialect.commentPrefix !== undefined &&
    (typeof dialect.commentPrefix !== 'string' || dialect.commentPrefix === '' || /[\r\n]/.test(dialect.commentPrefix))
  ) {
    problems.push({
      field: 'commentPrefix',
      problem: `is ${JSON.stringify(dialect.commentPrefix)}: give the characters a comment line starts with, e.g. "#"`,
    });
  }
  if (dialect.sniff !== undefined && typeof dialect.sniff !== 'boolean')
    problems.push({ field: 'sniff', problem: `is ${JSON.stringify(dialect.sniff)}, not true or false` });
  if (dialect.header !== undefined && typeof dialect.header !== 'boolean')
    problems.push({ field: 'header', problem: `is ${JSON.stringify(dialect.header)}, not true or false` });
  if (dialect.columnNames !== undefined) {
    if (
      !Array.isArray(dialect.columnNames) ||
      dialect.columnNames.length === 0 ||
      dialect.columnNames.some((n) => typeof n !== 'string' || n.trim() === '')
    ) {
      problems.push({ field: 'columnNames', problem: `is ${JSON.stringify(dialect.columnNames)}: give one non-empty name per column` });
    } else if (new Set(dialect.columnNames.map((n) => n.toLowerCase())).size !== dialect.columnNames.length) {
      problems.push({ field: 'columnNames', problem: `names a column twice: ${JSON.stringify(dialect.columnNames)}` });
    } else if (!alone && dialect.header !== false) {
      problems.push({ field: 'columnNames', problem: 'is set but the files have a header line (header is not false)' });
    }
  }

  for (const field of ['dateFormat', 'timestampFormat'] as const) {
    const format = dialect[field];
    if (format === undefined) continue;
    const compiled = typeof format === 'string' ? compileDateFormat(format) : 'is not a string';
    if (typeof compiled === 'string') problems.push({ field, problem: `${JSON.stringify(format)} ${compiled}` });
    else if (field === 'dateFormat' && compiled.hasTime)
      problems.push({ field, problem: `${JSON.stringify(format)} has a time of day: give it as timestampFormat` });
  }
  return problems;
}

/** How a file's text is split into records and fields: everything the readers of the text need. */
export interface TextDialect {
  readonly delimiter: string;
  readonly quote: string;
  readonly escape: string;
  readonly skipLines: number;
  readonly comment?: string;
  readonly header: boolean;
  readonly columnNames?: readonly string[];
}

export function textDialect(file: ClaimedFile, dialect: CsvDialect): TextDialect {
  const quote = dialect.quote ?? '"';
  return {
    delimiter: delimiterOf(file, dialect),
    quote,
    escape: dialect.escape ?? quote,
    skipLines: dialect.skipLines ?? 0,
    ...(dialect.commentPrefix ? { comment: dialect.commentPrefix } : {}),
    header: dialect.header !== false,
    ...(dialect.columnNames ? { columnNames: dialect.columnNames } : {}),
  };
}

/** Files of this dialect are split as the group scan (scan.ts) and the databases' defaults split them. */
export function plainText(text: TextDialect): boolean {
  return text.quote === '"' && text.escape === '"' && text.skipLines === 0 && text.comment === undefined && text.header;
}

/** How numbers are written, when that is not as the databases read them. */
export function numberFormat(dialect: CsvDialect): NumberFormat | undefined {
  const decimal = dialect.decimalSeparator ?? '.';
  if (decimal === '.' && dialect.thousandsSeparator === undefined) return undefined;
  return { decimal, ...(dialect.thousandsSeparator === undefined ? {} : { thousands: dialect.thousandsSeparator }) };
}

/** The NULL markers besides the empty field (which is one always). */
export function nullMarkers(dialect: CsvDialect): string[] {
  return [...new Set(dialect.nullValues ?? [])].filter((v) => v !== '');
}

/** The dialect's date settings, compiled (the dialect passed `dialectProblems`). */
export function dateSettings(dialect: CsvDialect): DateSettings {
  return compileDateSettings(dialect);
}

const OTHER_DELIMITERS = [';', '\t', '|'] as const;
/** Lines of the head looked at to tell whether another delimiter splits the file consistently. */
const SNIFF_LINES = 20;

/** Why `value` cannot be a CSV delimiter, or undefined when it can. */
export function delimiterProblem(value: string): string | undefined {
  if (value.length !== 1 || value.charCodeAt(0) > 0x7e) return `must be one ASCII character, got ${JSON.stringify(value)}`;
  if (value === '"' || value === '\n' || value === '\r') return `cannot be ${JSON.stringify(value)} (the quote or a line break)`;
  return undefined;
}

/** The delimiter of `file` under `dialect`. */
export function delimiterOf(file: ClaimedFile, dialect: CsvDialect): string {
  return file.extension === '.tsv' ? '\t' : (dialect.delimiter ?? ',');
}

/** The delimiter byte, for the byte-level scanner. */
export function delimiterByte(delimiter: string): number {
  return delimiter.charCodeAt(0);
}

/** A header line with no comma and another common delimiter in it, in a file read with the default. */
export function mayBeOtherDelimited(file: ClaimedFile, dialect: CsvDialect, headerLine: string): boolean {
  if (dialect.delimiter !== undefined || file.extension === '.tsv' || headerLine.includes(',')) return false;
  return OTHER_DELIMITERS.some((d) => headerLine.includes(d));
}

/**
 * Another delimiter that splits `headText` (the head of a file, header first) into the same number
 * of fields (two or more) on every line, when `header` (parsed with the file's delimiter) is one
 * field; undefined otherwise, or when the user chose the delimiter.
 */
export function otherDelimiter(file: ClaimedFile, dialect: CsvDialect, header: readonly string[], headText: string): string | undefined {
  if (dialect.delimiter !== undefined || file.extension === '.tsv' || header.length !== 1) return undefined;
  for (const candidate of OTHER_DELIMITERS) {
    if (!header[0]!.includes(candidate)) continue;
    const rows = parseRows(headText, candidate, SNIFF_LINES + 1);
    // A sample that stops mid-file may stop mid-row: the last line says nothing reliable then.
    const whole = rows.length > SNIFF_LINES ? rows.slice(0, SNIFF_LINES) : rows;
    const width = whole[0]!.length;
    if (width >= 2 && whole.every((row) => row.length === width)) return candidate;
  }
  return undefined;
}

/** The refusal of a file whose fields seem separated by `found` rather than the comma. */
export function wrongDelimiter(file: ClaimedFile, found: string): IngestFailure {
  const shown = found === '\t' ? 'tab' : `'${found}'`;
  return new IngestFailure(
    ingestError(
      'data',
      'CSV_DELIMITER',
      `${file.name}: its header is one field, and its lines split evenly at ${shown}: the file looks ${shown}-separated, ` +
        `not comma-separated`,
      `Set the delimiter for this directory (--csv-delimiter ${shown}, or csvDelimiter in the API and the serve config), ` +
        `then replay the file. To load it as one column after all, set --csv-delimiter ','.`,
      { file: file.name, line: 1 },
    ),
  );
}
