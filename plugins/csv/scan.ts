/**
 * A whole small CSV file scanned the way a CSV parser splits records, to count them and to tell
 * which files can share one COPY with others of the same header.
 */

import type { Buffer } from 'node:buffer';
import { isIsoStart, searchable } from './bytes.ts';

const decoder = new TextDecoder('utf-8');

const QUOTE = 0x22;
export const LF = 0x0a;
const CR = 0x0d;

/** What a whole small file says about its records, scanned the way a CSV parser splits them. */
export interface Scan {
  /** The header line as text (BOM and line break removed): files with the same one share a COPY. */
  readonly header: string;
  /** Data records after the header: line breaks outside quoted fields, plus an unterminated last line. */
  readonly records: number;
  /**
   * Something parsers may read in more than one way (a quote inside an unquoted field or after a
   * closing quote, a blank line, a lone carriage return, a quote left open): the file is loaded
   * alone, where the server counts its rows (or fails it with its own error).
   */
  readonly irregular: boolean;
  /** Byte offset just past the header line. */
  readonly bodyStart: number;
  readonly endsWithNewline: boolean;
  /**
   * Every value of the fields asked for (`dateFields`) is empty or starts as an ISO date
   * (`2018-`), which both databases read the same under every setting; false when one does not
   * (or is quoted): such a file is read alone, its dates by the watcher.
   */
  readonly isoDates: boolean;
}

// Where the scan is: at the start of a line or of a field, inside an unquoted or a quoted field,
// or just after a quote inside a quoted field (an escaped quote, or the closing one).
const LINE_START = 0;
const FIELD_START = 1;
const UNQUOTED = 2;
const QUOTED = 3;
const QUOTE_IN_QUOTED = 4;

/**
 * Counts the records of `bytes` with a small state machine over its bytes (no field values are
 * built). Only regular files are counted for a shared COPY: the server's count for the group must
 * also equal the sum of these, or the group is refused, so a wrong count costs a split, never a
 * wrong row count in the ledger.
 */
export function scanCsv(bytes: Uint8Array, delimiter = 0x2c, dateFields: ReadonlySet<number> = new Set()): Scan {
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  // Most files quote nothing and end lines with LF alone: their records are their lines, found
  // by memchr, and only the fields up to the last date field are walked.
  const view = searchable(bytes);
  if (view.indexOf(QUOTE, start) === -1 && view.indexOf(CR, start) === -1) {
    const scan = scanLines(view, start, delimiter, dateFields);
    if (scan) return scan;
  }
  return walkCsv(bytes, start, delimiter, dateFields);
}

/** `scanCsv` byte by byte, for every file (exported to test the line scan against it). */
export function walkCsv(bytes: Uint8Array, start: number, delimiter: number, dateFields: ReadonlySet<number>): Scan {
  // Every byte of every small file passes here: the state lives in plain locals (no closure
  // writes them, which would move them to the heap) and each byte goes through one switch.
  let lines = 0;
  let headerEnd = -1;
  let irregular = false;
  let isoDates = true;
  const checkDates = dateFields.size > 0;
  let field = 0;
  let at: number = LINE_START;
  const n = bytes.length;
  for (let i = start; i < n && !irregular; i++) {
    const b = bytes[i]!;
    if (b === CR && at !== QUOTED) {
      // Only as part of CRLF outside a quoted field.
      if (bytes[i + 1] !== LF || at === LINE_START) irregular = true;
      continue;
    }
    let ended = false;
    switch (at) {
      case LINE_START:
      case FIELD_START:
        if (b === LF) {
          if (at === LINE_START)
            irregular = true; // a blank line
          else ended = true;
          break;
        }
        if (b === delimiter) {
          field++;
          at = FIELD_START;
          break;
        }
        // The first byte of a field after the header: a date field's value must start as ISO.
        if (checkDates && isoDates && headerEnd !== -1 && dateFields.has(field) && !isIsoStart(bytes, i)) isoDates = false;
        at = b === QUOTE ? QUOTED : UNQUOTED;
        break;
      case UNQUOTED:
        if (b === LF) ended = true;
        else if (b === delimiter) {
          field++;
          at = FIELD_START;
        } else if (b === QUOTE) irregular = true;
        break;
      case QUOTED:
        if (b === QUOTE) at = QUOTE_IN_QUOTED;
        break;
      case QUOTE_IN_QUOTED:
        if (b === QUOTE) at = QUOTED;
        else if (b === delimiter) {
          field++;
          at = FIELD_START;
        } else if (b === LF) ended = true;
        else irregular = true;
        break;
    }
    if (ended) {
      if (headerEnd === -1) headerEnd = i;
      lines++;
      field = 0;
      at = LINE_START;
    }
  }
  if (at === QUOTED) irregular = true;
  const endsWithNewline = bytes.length > start && bytes[bytes.length - 1] === LF;
  const trailing = at !== LINE_START ? 1 : 0;
  const headerBytes = bytes.subarray(start, headerEnd === -1 ? bytes.length : headerEnd);
  return {
    header: decoder.decode(headerBytes).replace(/\r$/, ''),
    records: Math.max(0, lines + trailing - 1),
    irregular,
    bodyStart: headerEnd === -1 ? bytes.length : headerEnd + 1,
    endsWithNewline,
    isoDates,
  };
}

/**
 * `scanCsv` for a file without quotes or carriage returns: the same answer, or undefined for a
 * file with a blank line (which the byte walk reports as it does).
 */
function scanLines(bytes: Buffer, start: number, delimiter: number, dateFields: ReadonlySet<number>): Scan | undefined {
  const n = bytes.length;
  const last = dateFields.size === 0 ? -1 : Math.max(...dateFields);
  let isoDates = true;
  let lines = 0;
  let headerEnd = -1;
  let i = start;
  while (i < n) {
    if (bytes[i] === LF) return undefined;
    if (isoDates && headerEnd !== -1 && last >= 0) isoDates = isoFields(bytes, i, delimiter, dateFields, last);
    const lf = bytes.indexOf(LF, i);
    if (lf === -1) break;
    if (headerEnd === -1) headerEnd = lf;
    lines++;
    i = lf + 1;
  }
  const endsWithNewline = n > start && bytes[n - 1] === LF;
  const trailing = n > start && !endsWithNewline ? 1 : 0;
  const headerBytes = bytes.subarray(start, headerEnd === -1 ? n : headerEnd);
  return {
    header: decoder.decode(headerBytes),
    records: Math.max(0, lines + trailing - 1),
    irregular: false,
    bodyStart: headerEnd === -1 ? n : headerEnd + 1,
    endsWithNewline,
    isoDates,
  };
}

/** The date fields of the (unquoted) line at `i`, up to field `last`, are empty or start as ISO. */
function isoFields(bytes: Uint8Array, i: number, delimiter: number, dateFields: ReadonlySet<number>, last: number): boolean {
  const n = bytes.length;
  for (let field = 0; ; field++) {
    if (i < n && dateFields.has(field) && bytes[i] !== delimiter && bytes[i] !== LF && !isIsoStart(bytes, i)) return false;
    if (field === last) return true;
    let b = bytes[i];
    while (i < n && b !== delimiter && b !== LF) b = bytes[++i];
    if (i >= n || b === LF) return true;
    i++;
  }
}
