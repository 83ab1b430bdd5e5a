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
 * It must cost little beside the COPY itself: the candidates (`\.`) are found with `Buffer.indexOf`,
 * and the quote state is the parity of the quotes counted so far (jumping with `indexOf` where
 * they are far apart, a plain loop where they are dense). bench/csv-end-marker.ts measures it:
 * 0.4 to 0.6 GB/s on quoted CSV, several GB/s on CSV without quotes (2-core machine, Node 20).
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

/** Quotes closer than this: count the next `DENSE_SPAN` bytes in a loop instead of jumping. */
const DENSE_GAP = 64;
const DENSE_SPAN = 4096;

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
    return this.escape === this.quote ? this.scanToggling(chunk, at, out) : this.scanEscaping(chunk, at, out);
  }

  /**
   * Quote = escape (the default, and what the plugins write): each quote toggles "inside quotes",
   * so the state anywhere is the parity of the quotes before it. The rare `\.` are found first
   * (`indexOf`), and the quotes are only counted, up to each candidate and to the chunk's end.
   */
  private scanToggling(chunk: Buffer, start: number, out: Uint8Array[]): Uint8Array[] {
    const length = chunk.length;
    const quote = this.quote;
    let emitted = start;
    // `inQuote` is the state at `counted`; `nextQuote` the first quote at or after it, once found.
    let counted = start;
    let nextQuote = -1;
    const advance = (to: number): void => {
      let odd = false;
      let from = counted;
      let q = nextQuote >= from ? nextQuote : chunk.indexOf(quote, from);
      if (q < 0) q = length;
      while (q < to) {
        odd = !odd;
        if (q - from < DENSE_GAP) {
          // Quotes close together: a plain loop beats one `indexOf` call per quote (~1.2 GB/s
          // against ~50 MB/s measured on fields like "1","a",""), for a stretch.
          const end = Math.min(to, q + 1 + DENSE_SPAN);
          for (let i = q + 1; i < end; i++) if (chunk[i] === quote) odd = !odd;
          from = end;
        } else {
          from = q + 1;
        }
        q = chunk.indexOf(quote, from);
        if (q < 0) q = length;
      }
      nextQuote = q;
      counted = to;
      if (odd) this.inQuote = !this.inQuote;
    };

    for (let i = chunk.indexOf(MARKER, start); i >= 0; i = chunk.indexOf(MARKER, i + 2)) {
      // A record start: after a line break outside quotes (checked last, as it costs the most).
      if (i === start ? !this.atRecordStart : !isBreak(chunk[i - 1])) continue;
      if (i + 2 < length && !isBreak(chunk[i + 2])) continue;
      advance(i);
      if (this.inQuote) continue;
      if (i + 2 >= length) {
        out.push(chunk.subarray(emitted, i));
        this.held = 2;
        return out;
      }
      out.push(chunk.subarray(emitted, i), QUOTED_MARKER);
      emitted = i + 2;
    }
    const last = length - 1;
    if (chunk[last] === BACKSLASH && (last === start ? this.atRecordStart : isBreak(chunk[last - 1]))) {
      // A `\` as the chunk's last byte, at a record start: its `.` may be in the next chunk.
      advance(last);
      if (!this.inQuote) {
        out.push(chunk.subarray(emitted, last));
        this.held = 1;
        return out;
      }
    }
    advance(length);
    this.atRecordStart = !this.inQuote && isBreak(chunk[last]);
    if (emitted < length) out.push(emitted === 0 ? chunk : chunk.subarray(emitted));
    return out;
  }

  /** Quote ≠ escape: quotes and escapes followed one by one inside quotes, as PostgreSQL does. */
  private scanEscaping(chunk: Buffer, at: number, out: Uint8Array[]): Uint8Array[] {
    const length = chunk.length;
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
