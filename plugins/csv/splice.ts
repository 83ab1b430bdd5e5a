/**
 * A CSV file's bytes on their way to `COPY ... FROM STDIN`, with the fields that a rule changes
 * replaced (a date made ISO, a NULL marker made NULL, a number written with a decimal comma...)
 * and every other byte passed through as it is: the database still parses the file, with the
 * file's own delimiter and quoting. Records are split as COPY splits them (a quote opens a quoted
 * stretch anywhere in a field; inside one, the escape character takes the next quote or escape
 * literally). A line without a quote in it is split with the runtime's own byte search; the few
 * with quotes go through a small state machine. A chunk in which nothing changes is passed on
 * without a copy.
 */
import { concatBytes } from '../../src/util/bytes.ts';
import { type FieldProblem, type FieldRule, isFieldProblem, REWRITE_BYTES } from './field-rules.ts';
import type { LineMap } from './line-map.ts';
import { fieldText, unquote } from './quoting.ts';

export { type FieldProblem, type FieldRule, isFieldProblem, REWRITE_BYTES } from './field-rules.ts';
export { LineMap } from './line-map.ts';
export { fieldText, unquote } from './quoting.ts';

const LF = 0x0a;
const CR = 0x0d;

export interface SpliceOptions {
  readonly delimiter: number;
  readonly quote: number;
  readonly escape: number;
  /** The rule of each field (by its position in the record), if it has one. */
  readonly rules: readonly (FieldRule | undefined)[];
  /** The first record is the header: passed on as it is. */
  readonly header: boolean;
  /** The line of the file the bytes start on (default 1). */
  readonly firstLine?: number;
  /** A field could not be converted: `line` is the 1-based line its record starts on. Throws. */
  readonly fail: (problem: FieldProblem, field: number, line: number) => never;
  /** Lines dropped at the start (before the header), whatever they hold. */
  readonly skipLines?: number;
  /** Lines that start with these bytes (outside quotes) are dropped. */
  readonly comment?: Uint8Array;
  /** Appended to every record, the header too (the values of source columns, each after a delimiter). */
  readonly suffix?: Uint8Array;
  /** Told of every line dropped, so that the database's line numbers can be told back in the file's. */
  readonly lines?: LineMap;
}

const EMPTY = new Uint8Array(0);
const UNCHANGED = 0;
const IN_PLACE = 1;
const SPANS = 2;

const decoder = new TextDecoder('utf-8');
const encoder = new TextEncoder();

class Splicer {
  readonly #o: SpliceOptions;
  readonly #last: number;
  readonly #q: string;
  readonly #e: string;
  readonly #d: string;
  #header: boolean;
  /** Line the next record starts on. */
  #line = 1;
  /** Lines dropped so far, and lines still to drop at the start. */
  #dropped = 0;
  #skip: number;
  /** What is sent for the buffer being handled, when something in it changed (else the buffer itself). */
  #out = new Uint8Array(0);
  #outLength = 0;
  /**
   * UNCHANGED: the buffer goes as it is; IN_PLACE: `#out` is a copy of it with replacements of the
   * same length written over (a decimal comma made a point); SPANS: `#out` holds what is sent up to
   * `#from`, built span by span.
   */
  #mode: 0 | 1 | 2 = UNCHANGED;
  /** Length of the buffer being handled. */
  #size = 0;
  #from = 0;
  readonly #scratch = new Uint8Array(REWRITE_BYTES);
  /** Where the next quote of the buffer is (Infinity: none), so each line is not searched to the end. */
  #nextQuote = -1;

  constructor(options: SpliceOptions) {
    this.#o = options;
    this.#header = options.header;
    this.#line = options.firstLine ?? 1;
    this.#skip = options.skipLines ?? 0;
    let last = -1;
    for (const [i, r] of options.rules.entries()) if (r) last = i;
    this.#last = last;
    this.#q = String.fromCharCode(options.quote);
    this.#e = String.fromCharCode(options.escape);
    this.#d = String.fromCharCode(options.delimiter);
  }

  /**
   * Handles the complete records of `buf` (all of it when `final`); returns where the first
   * incomplete one starts, and the bytes to send for what was handled.
   */
  run(buf: Uint8Array, final: boolean): { consumed: number; out: Uint8Array | undefined } {
    this.#out = EMPTY;
    this.#outLength = 0;
    this.#mode = UNCHANGED;
    this.#size = buf.length;
    this.#from = 0;
    this.#nextQuote = -1;
    let pos = 0;
    while (pos < buf.length) {
      const end = this.#record(buf, pos, final);
      if (end < 0) break;
      pos = end;
    }
    if (this.#mode === UNCHANGED) return { consumed: pos, out: pos > 0 ? buf.subarray(0, pos) : undefined };
    if (this.#mode === IN_PLACE) return { consumed: pos, out: this.#out.subarray(0, pos) };
    this.#write(buf, this.#from, pos);
    return { consumed: pos, out: this.#out.subarray(0, this.#outLength) };
  }

  /** Appends `bytes[start, end)` to what is sent. */
  #write(bytes: Uint8Array, start: number, end: number): void {
    const length = end - start;
    if (this.#outLength + length > this.#out.length) {
      // Sized for the buffer at once: replacements are seldom longer than what they replace.
      const grown = new Uint8Array(Math.max(2 * this.#out.length, this.#outLength + length, this.#size + 1024));
      grown.set(this.#out.subarray(0, this.#outLength));
      this.#out = grown;
    }
    const out = this.#out;
    let at = this.#outLength;
    // Most spans are the few bytes between two replaced fields: a loop beats making a view of each.
    if (length < 64) for (let i = start; i < end; i++) out[at++] = bytes[i]!;
    else {
      out.set(bytes.subarray(start, end), at);
      at += length;
    }
    this.#outLength = at;
  }

  /** The field `[start, end)` of `buf` is sent as `replacement[0, length)`. */
  #replace(buf: Uint8Array, start: number, end: number, replacement: Uint8Array, length: number): void {
    if (this.#mode !== SPANS && length === end - start) {
      if (this.#mode === UNCHANGED) {
        this.#out = buf.slice();
        this.#mode = IN_PLACE;
      }
      const out = this.#out;
      for (let i = 0; i < length; i++) out[start + i] = replacement[i]!;
      return;
    }
    if (this.#mode === IN_PLACE) {
      // Everything up to here is in `#out` already, at its own place.
      this.#outLength = start;
      this.#from = start;
    }
    this.#mode = SPANS;
    this.#write(buf, this.#from, start);
    this.#write(replacement, 0, length);
    this.#from = end;
  }

  /** Handles the record at `start`; returns the position after its line break, or -1 when it is not complete. */
  /** Drops the `lines` lines `[start, end)` of `buf`. */
  #drop(buf: Uint8Array, start: number, end: number, lines: number): void {
    this.#o.lines?.drop(this.#line - this.#dropped, lines);
    this.#line += lines;
    this.#dropped += lines;
    if (end > start) this.#replace(buf, start, end, EMPTY, 0);
  }

  /** The record at `start` is a comment line. */
  #isComment(buf: Uint8Array, start: number): boolean {
    const comment = this.#o.comment!;
    for (let i = 0; i < comment.length; i++) if (buf[start + i] !== comment[i]) return false;
    return true;
  }

  #record(buf: Uint8Array, start: number, final: boolean): number {
    const { quote, delimiter } = this.#o;
    const lf = buf.indexOf(LF, start);
    const lineEnd = lf < 0 ? buf.length : lf;
    if (lf < 0 && !final) return -1;
    const next = lf < 0 ? buf.length : lf + 1;
    if (this.#skip > 0) {
      this.#skip--;
      this.#drop(buf, start, next, 1);
      return next;
    }
    if (this.#o.comment && this.#isComment(buf, start)) {
      this.#drop(buf, start, next, 1);
      return next;
    }
    if (lineEnd === start || (lineEnd === start + 1 && buf[start] === CR)) {
      // A blank line: rows go on after it (it stays, for the database to judge), or only blank
      // lines follow to the end of the file, which are no rows.
      let i = next;
      while (i < buf.length && (buf[i] === LF || buf[i] === CR)) i++;
      if (i < buf.length) {
        // Before the header it is no row either (and the database would take it for the header).
        if (this.#header) this.#drop(buf, start, next, 1);
        else this.#line++;
        return next;
      }
      if (!final) return -1;
      let lines = 0;
      for (let j = start; j < buf.length; j++) if (buf[j] === LF) lines++;
      this.#drop(buf, start, buf.length, Math.max(1, lines));
      return buf.length;
    }
    if (this.#nextQuote < start) {
      const q = buf.indexOf(quote, start);
      this.#nextQuote = q < 0 ? Number.POSITIVE_INFINITY : q;
    }
    if (this.#nextQuote >= lineEnd) {
      const line = this.#line++;
      const contentEnd = lineEnd > start && buf[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd;
      if (this.#header) {
        // The header gets the fields too: hyperd counts a header's fields.
        this.#header = false;
        if (this.#o.suffix) this.#replace(buf, contentEnd, contentEnd, this.#o.suffix, this.#o.suffix.length);
      } else if (this.#last >= 0) {
        const rules = this.#o.rules;
        let fieldStart = start;
        for (let field = 0; field <= this.#last; field++) {
          // Fields are short: a loop finds the delimiter sooner than a search call would.
          let fieldEnd = fieldStart;
          while (fieldEnd < contentEnd && buf[fieldEnd] !== delimiter) fieldEnd++;
          const rule = rules[field];
          if (rule) this.#apply(buf, rule, field, fieldStart, fieldEnd, false, line);
          if (fieldEnd >= contentEnd) break;
          fieldStart = fieldEnd + 1;
        }
        if (this.#o.suffix) this.#replace(buf, contentEnd, contentEnd, this.#o.suffix, this.#o.suffix.length);
      } else if (this.#o.suffix) this.#replace(buf, contentEnd, contentEnd, this.#o.suffix, this.#o.suffix.length);
      return next;
    }
    return this.#quotedRecord(buf, start, final);
  }

  /** A record with a quote in its first line: byte by byte. */
  #quotedRecord(buf: Uint8Array, start: number, final: boolean): number {
    const { quote, escape, delimiter } = this.#o;
    const line = this.#line;
    const header = this.#header;
    const fields: [number, number, boolean][] = [];
    let fieldStart = start;
    let quoted = false;
    let inQuotes = false;
    let lines = 0;
    let i = start;
    let end = -1;
    for (; i < buf.length; i++) {
      const b = buf[i]!;
      if (inQuotes) {
        if (b === escape || b === quote) {
          // What follows decides (an escaped character, or the end of the quoted stretch).
          if (i + 1 >= buf.length && !final) return -1;
          if (b === escape && i + 1 < buf.length && (buf[i + 1] === quote || buf[i + 1] === escape)) i++;
          else if (b === quote) inQuotes = false;
        } else if (b === LF) lines++;
        continue;
      }
      if (b === quote) {
        inQuotes = true;
        quoted = true;
      } else if (b === delimiter) {
        fields.push([fieldStart, i, quoted]);
        fieldStart = i + 1;
        quoted = false;
      } else if (b === LF) {
        end = i;
        break;
      }
    }
    if (end < 0 && !final) return -1;
    const contentEnd = end < 0 ? buf.length : end > fieldStart && buf[end - 1] === CR ? end - 1 : end;
    fields.push([fieldStart, contentEnd, quoted]);
    this.#line += 1 + lines;
    if (header) this.#header = false;
    else {
      for (const [field, [s, e, wasQuoted]] of fields.entries()) {
        const rule = this.#o.rules[field];
        if (rule) this.#apply(buf, rule, field, s, e, wasQuoted, line);
      }
    }
    if (this.#o.suffix) this.#replace(buf, contentEnd, contentEnd, this.#o.suffix, this.#o.suffix.length);
    return end < 0 ? buf.length : end + 1;
  }

  #apply(buf: Uint8Array, rule: FieldRule, field: number, start: number, end: number, quoted: boolean, line: number): void {
    if (!quoted && rule.keep?.(buf, start, end)) return;
    if (!quoted && rule.rewrite && end - start <= REWRITE_BYTES) {
      const length = rule.rewrite(buf, start, end, this.#scratch);
      if (length === undefined) return;
      if (length !== false) {
        this.#replace(buf, start, end, this.#scratch, length);
        return;
      }
    }
    const raw = decoder.decode(buf.subarray(start, end));
    const text = quoted ? unquote(raw, this.#q, this.#e) : raw;
    const value = rule.convert(text, quoted);
    if (isFieldProblem(value)) this.#o.fail(value, field, line);
    if (value === text) return;
    const replacement = fieldText(value, this.#d, this.#q, this.#e);
    if (replacement === raw) return;
    const bytes = encoder.encode(replacement);
    this.#replace(buf, start, end, bytes, bytes.length);
  }
}

/** `bytes` (a whole CSV file) with the fields the rules change replaced; see the module comment. */
export async function* spliced(bytes: AsyncIterable<Uint8Array>, options: SpliceOptions): AsyncGenerator<Uint8Array> {
  const splicer = new Splicer(options);
  let carry: Uint8Array = new Uint8Array(0);
  for await (const chunk of bytes) {
    let buf = chunk;
    if (carry.length > 0) {
      // The record cut by the chunk's start is put together with the bytes up to the chunk's first
      // line break (not with the whole chunk: that would copy every byte once more).
      const lf = chunk.indexOf(LF);
      if (lf < 0) buf = concatBytes([carry, chunk]);
      else {
        const head = concatBytes([carry, chunk.subarray(0, lf + 1)]);
        const { consumed, out } = splicer.run(head, false);
        if (out) yield out;
        buf = consumed === head.length ? chunk.subarray(lf + 1) : concatBytes([head.subarray(consumed), chunk.subarray(lf + 1)]);
      }
    }
    const { consumed, out } = splicer.run(buf, false);
    carry = buf.subarray(consumed);
    if (out) yield out;
  }
  if (carry.length > 0) {
    const { out } = splicer.run(carry, true);
    if (out) yield out;
  }
}
