/**
 * What of the text settings means something in JSON, where the file already says what a value
 * is: NULL markers (a string equal to one is NULL, `"NA"`, `"\\N"`), and how dates are written in
 * strings (`dateStyle`, `dateFormat`, `timestampFormat`), read without a guess as in CSV.
 * Delimiters, quotes, separators and headers are CSV's alone.
 */
import { compileDateSettings, type DateSettings } from '../shared/date-columns.ts';
import type { DateStyle } from '../shared/date-read.ts';

/** How the JSON plugin reads string values. */
export interface JsonDialect {
  /** A string value equal to one of these is NULL (and type inference takes it for NULL). */
  readonly nullValues?: readonly string[];
  /** The order of day and month in date strings such as `"01/02/2018"`; unset, the file must decide it. */
  readonly dateStyle?: DateStyle;
  /** strftime-style format of DATE strings, e.g. `%d.%m.%Y`. */
  readonly dateFormat?: string;
  /** strftime-style format of TIMESTAMP strings, e.g. `%d/%m/%Y %H:%M`. */
  readonly timestampFormat?: string;
}

/** The dialect, ready to read values with. */
export interface JsonReading {
  /** The NULL markers. */
  readonly nulls: ReadonlySet<string>;
  readonly dates: DateSettings;
}

export function jsonReading(dialect: JsonDialect): JsonReading {
  return { nulls: new Set(dialect.nullValues ?? []), dates: compileDateSettings(dialect) };
}

/** `value` as its column takes it: a string that is a NULL marker is NULL (`null`). */
export function unmarked(value: unknown, nulls: ReadonlySet<string>): unknown {
  return typeof value === 'string' && nulls.has(value) ? null : value;
}
