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
import { parseRows } from './head.ts';

/** How the CSV plugin reads `.csv` files (`.tsv` is always tab-separated). */
export interface CsvDialect {
  /**
   * One ASCII character (`,` `;` `|` tab ...). Unset: a comma, and a file that looks separated by
   * something else is refused (see above); set, even to a comma, no such guess is made.
   */
  readonly delimiter?: string;
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
      `${file.name}: its header is one field, and its lines split evenly at ${shown}: the file looks ${shown}-separated, not comma-separated`,
      `Set the delimiter for this directory (--csv-delimiter ${shown}, or csvDelimiter in the API and the serve config), then replay the file. To load it as one column after all, set --csv-delimiter ','.`,
      { file: file.name, line: 1 },
    ),
  );
}
