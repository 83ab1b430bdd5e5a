/**
 * Which file of a failed shared COPY holds the value the server could not convert.
 *
 * For a value that does not convert, Hyper names no file (`file: 'ARRAY' line:51 column:5`), only
 * the line and column within whichever file it was, and the type (or the value itself). Looking
 * at that field in every file of the group finds the ones where it cannot be a value of that
 * type; when exactly one is left, it is the likely culprit. This is a guess that only orders the
 * search for the bad file: the watcher loads it alone and the others as a group, and a wrong guess
 * costs one more split, never a wrong result (the database still judges every file).
 */
import Papa from 'papaparse';

/** Spellings that convert to each type family, after trimming; anything else is suspect. */
const VALID: readonly (readonly [RegExp, RegExp])[] = [
  [/^(?:integer|bigint|smallint|int[248]?)$/, /^[+-]?\d+$/],
  [/^(?:double precision|real|float[48]?|numeric|decimal)/, /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|nan|inf|infinity)$/i],
  [/^bool(?:ean)?$/, /^(?:t|f|true|false|y|n|yes|no|on|off|1|0)$/i],
];

/** Where the server says the bad value is, and what it says about it. */
export interface ConversionFailure {
  /** 1-based line within the file, header included. */
  readonly line: number;
  /** 1-based field within that line. */
  readonly column: number;
  /** The value, when the message quotes it. */
  readonly value?: string;
  /** The type the value did not convert to, when the message names it. */
  readonly type?: string;
}

/**
 * Reads a conversion failure out of a server error: `line:L column:C` from the detail, and from
 * the message the quoted value (`literal '2024-13-45'`, PostgreSQL's `: "x"`) or the type
 * (`invalid input syntax for integer`). `undefined` when the error is not one.
 */
export function conversionFailure(message: string, detail: string): ConversionFailure | undefined {
  const at = /line:\s*(\d+)\s+column:\s*(\d+)/.exec(detail);
  if (!at) return undefined;
  const value =
    /literal '((?:[^']|'')*)'/.exec(message)?.[1]?.replaceAll("''", "'") ??
    /: "((?:[^"]|"")*)"\s*$/.exec(message)?.[1]?.replaceAll('""', '"');
  const type = /invalid input syntax for (?:type )?([a-z][a-z0-9 ]*?)\s*(?::|$)/i.exec(message)?.[1]?.toLowerCase();
  if (value === undefined && type === undefined) return undefined;
  return { line: Number(at[1]), column: Number(at[2]), ...(value === undefined ? {} : { value }), ...(type === undefined ? {} : { type }) };
}

/** The text of 1-based `line` of `bytes` (without its line break), or undefined past the end. */
function lineOf(bytes: Uint8Array, line: number): string | undefined {
  let start = 0;
  for (let n = 1; n < line; n++) {
    const next = bytes.indexOf(0x0a, start);
    if (next === -1) return undefined;
    start = next + 1;
  }
  if (start >= bytes.length) return undefined;
  const end = bytes.indexOf(0x0a, start);
  return new TextDecoder().decode(bytes.subarray(start, end === -1 ? bytes.length : end)).replace(/\r$/, '');
}

/**
 * Whether `field` could be the value the failure is about: equal to the quoted value, else not a
 * valid spelling (`valid`) of the type it did not convert to.
 */
function suspect(field: string, failure: ConversionFailure, valid: RegExp | undefined): boolean {
  if (failure.value !== undefined) return field === failure.value || field.trim() === failure.value.trim();
  const trimmed = field.trim();
  if (trimmed === '') return false; // empty is NULL, which converts to every type
  return valid !== undefined && !valid.test(trimmed);
}

/**
 * The index of the only file in `contents` whose field at the failure's line and column is
 * suspect, or `undefined` when none or several are (or the type is not one this knows).
 */
export function likelyCulprit(failure: ConversionFailure, contents: readonly Uint8Array[], delimiter: string): number | undefined {
  const valid = VALID.find(([type]) => type.test(failure.type ?? ''))?.[1];
  if (failure.value === undefined && valid === undefined) return undefined;
  let found: number | undefined;
  for (const [i, bytes] of contents.entries()) {
    const text = lineOf(bytes, failure.line);
    if (text === undefined) continue;
    const field = Papa.parse<string[]>(text, { delimiter, header: false }).data[0]?.[failure.column - 1];
    if (field === undefined || !suspect(field, failure, valid)) continue;
    if (found !== undefined) return undefined;
    found = i;
  }
  return found;
}
