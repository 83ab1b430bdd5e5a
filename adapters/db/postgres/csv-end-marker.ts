/**
 * PostgreSQL up to 17 ends `COPY ... FROM STDIN WITH (FORMAT csv)` at a line that is exactly `\.`
 * (outside quotes) and silently drops everything after it: measured on 15.18, a file of rows
 * `1`, `\.`, `2` loads one row and COPY reports 1, no error. The server only looks for it at the
 * first character of a record (a line break inside a quoted field starts no record), see
 * CopyReadLineText in src/backend/commands/copyfromparse.c.
 *
 * So the data is streamed through `CsvEndMarkerGuard`, which rewrites such a line to `"\."`: the
 * same CSV value `\.`, quoted, which no server version takes as the end. PostgreSQL 18 no longer
 * treats `\.` as special in CSV; there the rewrite changes nothing either (a quoted and an unquoted
 * `\.` are the same value), so it is always applied. Hyper never ends a CSV COPY there (it reads
 * the line as the value `\.`), so only the PostgreSQL adapter uses this.
 *
 * The scan jumps with `Buffer.indexOf` from quote to quote and to the next `\.`, so that it costs
 * little beside the COPY itself (see bench/csv-end-marker.ts).
 */
import { Buffer } from 'node:buffer';

/** The quote and escape characters of a CSV COPY (one byte each, as PostgreSQL requires). */
export interface CsvQuoting {
  readonly quote: number;
  readonly escape: number;
}

const BACKSLASH = 0x5c;
const DOT = 0x2e;
const LF = 0x0a;
const CR = 0x0d;

const MARKER = Buffer.from('\\.');
const QUOTED_MARKER = Buffer.from('"\\."');
const LONE_BACKSLASH = Buffer.from('\\');

/** A string literal (`'it''s'`, backslashes literal), an `E'\\'` one, a word, a quoted word, or one other character. */
const TOKEN = /\s*(?:'((?:[^']|'')*)'|[Ee]'((?:[^'\\]|''|\\.)*)'|([A-Za-z_][A-Za-z0-9_$]*)|"((?:[^"]|"")*)"|(\S))/gy;

/**
 * The quoting of `COPY ... FROM STDIN` in CSV format, or undefined for any other statement (other
 * formats, COPY TO, plain SQL). Reads the options after `FROM STDIN`, in both spellings:
 * `WITH (FORMAT csv, QUOTE '''', ESCAPE '\')` and the older `WITH CSV QUOTE AS '"'`.
 */
export function csvQuoting(statement: string): CsvQuoting | undefined {
  const from = /\bFROM\s+STDIN\b/i.exec(statement);
  if (!/^\s*COPY\b/i.test(statement) || !from) return undefined;
  const words: { word?: string; literal?: string }[] = [];
  TOKEN.lastIndex = from.index + from[0].length;
  for (let match = TOKEN.exec(statement); match; match = TOKEN.exec(statement)) {
    if (match[1] !== undefined) words.push({ literal: match[1].replaceAll("''", "'") });
    else if (match[2] !== undefined) words.push({ literal: match[2].replaceAll("''", "'").replace(/\\(.)/g, '$1') });
    else if (match[3] !== undefined) words.push({ word: match[3].toLowerCase() });
    else if (match[4] !== undefined) words.push({ word: match[4].replaceAll('""', '"').toLowerCase() });
    else words.push({});
  }
  const valueAfter = (option: string): string | undefined => {
    const at = words.findIndex((w) => w.word === option);
    if (at < 0) return undefined;
    const next = words[at + 1]?.word === 'as' ? words[at + 2] : words[at + 1];
    return next?.literal ?? next?.word;
  };
  const format = valueAfter('format');
  const csv = format !== undefined ? format.toLowerCase() === 'csv' : words.some((w) => w.word === 'csv');
  if (!csv) return undefined;
  const quote = valueAfter('quote') ?? '"';
  const escape = valueAfter('escape') ?? quote;
  // PostgreSQL takes single-byte characters only; anything else the server refuses itself.
  if (quote.length !== 1 || escape.length !== 1) return undefined;
  return { quote: quote.charCodeAt(0), escape: escape.charCodeAt(0) };
}

function asBuffer(chunk: Uint8Array | string): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, 'utf8');
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

const isBreak = (byte: number | undefined): boolean => byte === LF || byte === CR;

/**
 * Rewrites every record that is exactly `\.` to `"\."`, chunk by chunk, as PostgreSQL splits
 * records: a record starts at the beginning of the stream and after an LF or CR outside quotes;
 * inside quotes the escape character (when it differs from the quote) protects a quote.
 * Chunks may split the data anywhere; up to two bytes (`\` or `\.` at the start of a record) are
 * held back until the next byte tells whether the record ends there.
 *
 * `write` and `end` return the output as pieces: subarrays of the input (no copy) and, around a
 * rewrite, short constants.
 */
export class CsvEndMarkerGuard {
  private readonly quote: number;
  private readonly escape: number;
  private inQuote = false;
  /** Inside quotes, the previous byte was an unpaired escape character (escape ≠ quote). */
  private lastWasEscape = false;
  /** The next byte starts a record. */
  private atRecordStart = true;
  /** Bytes held back from the end of the last chunk: 1 for `\`, 2 for `\.`, at a record start. */
  private held: 0 | 1 | 2 = 0;

  constructor(quoting: CsvQuoting = { quote: 0x22, escape: 0x22 }) {
    this.quote = quoting.quote;
    this.escape = quoting.escape;
  }

  write(input: Uint8Array | string): Uint8Array[] {
    const chunk = asBuffer(input);
    const length = chunk.length;
    const out: Uint8Array[] = [];
    if (length === 0) return out;
    let at = 0;
    if (this.held === 1) {
      if (chunk[0] === DOT) {
        this.held = 2;
        at = 1;
      } else {
        out.push(LONE_BACKSLASH);
        this.held = 0;
        this.atRecordStart = false;
      }
    }
    if (this.held === 2) {
      if (at >= length) return out;
      out.push(isBreak(chunk[at]) ? QUOTED_MARKER : MARKER);
      this.held = 0;
      this.atRecordStart = false;
    }
    let emitted = at;
    // The next `\.` at or after `at`; -1: none left in this chunk; -2: not searched yet.
    let marker = -2;

    while (at < length) {
      if (this.inQuote) {
        at = this.skipQuoted(chunk, at);
        continue;
      }
      let quoteAt = chunk.indexOf(this.quote, at);
      if (quoteAt < 0) quoteAt = length;
      // Candidates before the next quote: a `\.` at a record start (after a line break).
      for (;;) {
        if (marker === -2 || (marker >= 0 && marker < at)) marker = chunk.indexOf(MARKER, at);
        if (marker < 0 || marker >= quoteAt) break;
        const i = marker;
        // `\.` cannot overlap itself: the next one starts at i + 2 or later.
        marker = chunk.indexOf(MARKER, i + 2);
        if (i === at ? !this.atRecordStart : !isBreak(chunk[i - 1])) continue;
        if (i + 2 >= length) {
          out.push(chunk.subarray(emitted, i));
          this.held = 2;
          return out;
        }
        if (isBreak(chunk[i + 2])) {
          out.push(chunk.subarray(emitted, i), QUOTED_MARKER);
          emitted = i + 2;
        }
      }
      if (quoteAt === length) {
        // A `\` as the chunk's last byte, at a record start: its `.` may be in the next chunk.
        const last = length - 1;
        if (chunk[last] === BACKSLASH && (last === at ? this.atRecordStart : isBreak(chunk[last - 1]))) {
          out.push(chunk.subarray(emitted, last));
          this.held = 1;
          return out;
        }
        this.atRecordStart = isBreak(chunk[last]);
        break;
      }
      this.inQuote = true;
      this.atRecordStart = false;
      at = quoteAt + 1;
    }
    if (emitted < length) out.push(emitted === 0 ? chunk : chunk.subarray(emitted));
    return out;
  }

  /** After the last chunk: a `\.` held back is the stream's last record, and is quoted as well. */
  end(): Uint8Array[] {
    const held = this.held;
    this.held = 0;
    if (held === 1) return [LONE_BACKSLASH];
    if (held === 2) return [QUOTED_MARKER];
    return [];
  }

  /** From `at` inside quotes: the position after the closing quote (leaving quotes), or the chunk's end. */
  private skipQuoted(chunk: Buffer, at: number): number {
    const length = chunk.length;
    if (this.escape === this.quote) {
      // A doubled quote leaves and re-enters quotes, which is the same for finding record starts.
      const close = chunk.indexOf(this.quote, at);
      if (close < 0) return length;
      this.inQuote = false;
      return close + 1;
    }
    // PostgreSQL: an escape toggles "last was escape"; a quote after an unpaired escape stays inside.
    while (at < length) {
      if (this.lastWasEscape) {
        // Whatever follows an unpaired escape (quote, escape, other) is taken as it is.
        this.lastWasEscape = false;
        at++;
        continue;
      }
      const close = chunk.indexOf(this.quote, at);
      const escape = chunk.subarray(at, close < 0 ? length : close).indexOf(this.escape);
      if (escape >= 0) {
        this.lastWasEscape = true;
        at += escape + 1;
        continue;
      }
      if (close < 0) return length;
      this.inQuote = false;
      return close + 1;
    }
    return length;
  }
}

/** `source` with every unquoted `\.` record quoted (see `CsvEndMarkerGuard`). */
export async function* guardCsvEndMarkers(source: AsyncIterable<Uint8Array | string>, quoting?: CsvQuoting): AsyncIterable<Uint8Array> {
  const guard = new CsvEndMarkerGuard(quoting);
  for await (const chunk of source) yield* guard.write(chunk);
  yield* guard.end();
}

/** The data for `statement`: guarded when it is a CSV `COPY ... FROM STDIN`, else `source` as it is. */
export function guardCopySource(statement: string, source: AsyncIterable<Uint8Array | string>): AsyncIterable<Uint8Array | string> {
  const quoting = csvQuoting(statement);
  return quoting ? guardCsvEndMarkers(source, quoting) : source;
}
