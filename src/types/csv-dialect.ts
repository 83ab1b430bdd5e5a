/**
 * How a CSV file is written (its dialect), as the watcher's options say it and the CSV plugin
 * reads it: one declaration for both. The JSON plugin takes the NULL markers and date settings.
 */
import type { DateStyle } from '../constants.ts';

/** Every setting of a dialect but the delimiter (an option of its own: `csvDelimiter`). */
export interface CsvFileSettings {
  /**
   * The order of day and month in dates such as `01/02/2018`: `'DMY'` (day first), `'MDY'`
   * (month first) or `'YMD'`; ISO dates (`2018-02-01`) read the same under each. Unset, no date is
   * read by a guess: the order must be decided by the file's first rows (a first part over 12 is a
   * day, a second part over 12 a month), else the file fails as DATE_AMBIGUOUS before a row lands.
   */
  readonly dateStyle?: DateStyle;
  /** strftime-style format of DATE values, for what a style cannot say, e.g. `'%d.%m.%Y'`, `'%Y%m%d'`. */
  readonly dateFormat?: string;
  /** strftime-style format of TIMESTAMP values, e.g. `'%d/%m/%Y %H:%M'`. */
  readonly timestampFormat?: string;
  /**
   * Unquoted fields equal to one of these are NULL, e.g. `['\\N', 'NA', 'NULL']` (database dumps,
   * R and pandas); the empty unquoted field stays NULL, a quoted `"NA"` stays text. Type inference
   * takes them for NULL too.
   */
  readonly nullValues?: readonly string[];
  /**
   * The decimal separator of numbers in number columns: `','` for `1,5`; default `'.'`. It must
   * differ from the CSV delimiter. A value not written so fails (NUMBER_FORMAT), never read as
   * another number.
   */
  readonly decimalSeparator?: string;
  /** The thousands separator of numbers: `'.'` for `1.234,5`, `' '`, `'\u202f'`, `"'"`; default none. */
  readonly thousandsSeparator?: string;
  /** The quote character, e.g. `"'"`; default `'"'`. */
  readonly quote?: string;
  /** The character that escapes a quote (or itself) inside quotes, e.g. `'\\'`; default: the quote (`""`). */
  readonly escape?: string;
  /** Lines before the header to skip, whatever they hold (a report's title and notes). Default 0. */
  readonly skipLines?: number;
  /** Lines that start with this (outside quotes) are comments, not rows, e.g. `'#'`. */
  readonly commentPrefix?: string;
  /** `false`: the files have no header line; every line is a row. Default true. */
  readonly header?: boolean;
  /** With `header: false`, the columns' names in file order; default `column1`, `column2`, ... */
  readonly columnNames?: readonly string[];
  /**
   * `true`: each CSV file is read with the dialect its head decides (the delimiter, quote, escape,
   * comment and preamble lines, a header or none, the order of day and month, the decimal and
   * thousands separators, NULL markers), the settings given kept as given; a file whose head
   * reads more than one way fails with the candidates listed (CSV_SNIFF_UNDECIDED). Default false.
   */
  readonly sniff?: boolean;
}

/** The CSV plugin's dialect: the settings and the delimiter. */
export interface CsvDialect extends CsvFileSettings {
  /**
   * One ASCII character (`,` `;` `|` tab ...). Unset: a comma, and a file that looks separated by
   * something else is refused; set, even to a comma, no such guess is made.
   */
  readonly delimiter?: string;
}

/** The keys of `CsvFileSettings`, for code that copies them from the options (compose/ingesters.ts). */
export const CSV_FILE_SETTINGS = [
  'dateStyle',
  'dateFormat',
  'timestampFormat',
  'nullValues',
  'decimalSeparator',
  'thousandsSeparator',
  'quote',
  'escape',
  'skipLines',
  'commentPrefix',
  'header',
  'columnNames',
  'sniff',
] as const satisfies readonly (keyof CsvFileSettings)[];

/** A setting left out of `CSV_FILE_SETTINGS` fails the type check here. */
export const everySettingListed: Exclude<keyof CsvFileSettings, (typeof CSV_FILE_SETTINGS)[number]> extends never ? true : never = true;
