/**
 * Quotes where readers of CSV disagree. A quote inside an unquoted field (`12" pizza`) is text to
 * RFC 4180 readers (Python's csv, spreadsheets) and the start of a quoted section to PostgreSQL's
 * and hyperd's COPY, which then run it over the following lines up to the next quote, silently
 * joining records. Text after a closing quote (`"a ""q"186,`) is joined to the field by COPY and
 * refused by strict readers (DuckDB). Neither has one reading, so the file fails before anything
 * lands instead of landing one of them.
 *
 * Fed the file's bytes chunk by chunk; it jumps from quote to quote (`indexOf`), so a file with
 * few quotes costs one search per chunk. Pure: no I/O, the caller turns a finding into an error.
 * Keeps no view of a chunk once `feed` returns: the next chunk may be read into the same buffer.
 */
import { searchable } from './bytes.ts';

/** What the check found, at byte `offset` of the file. */
export interface QuoteProblem {
  readonly kind: 'quote-in-unquoted-field' | 'text-after-closing-quote';
  readonly offset: number;
}

export interface QuoteDialect {
  readonly delimiter: string;
  readonly quote: string;
  readonly escape: string;
  /** Lines before the header (a report's preamble): not CSV, not checked. */
  readonly skipLines: number;
  /** Lines beginning with it are comments, not checked. */
  readonly comment?: string;
}

/** After this many quotes in a chunk, fewer than `DENSE_BYTES` bytes apart on average, the chunk is walked byte by byte. */
const DENSE_STEPS = 256;
const DENSE_BYTES = 10;

const LF = 0x0a;
const CR = 0x0d;

type State =
  /** Skipping the preamble's lines. */
  | 'preamble'
  /** Outside a quoted field. */
  | 'out'
  /** Inside a quoted field. */
  | 'in'
  /** A quote ended the previous chunk inside a quoted field: the next byte says what it was. */
  | 'quote-at-end'
  /** A closing quote ended the previous chunk: the next byte must end the field. */
  | 'closed-at-end'
  /** In a comment line, up to its line feed. */
  | 'comment';

export class QuoteCheck {
  readonly #delimiter: number;
  readonly #quote: number;
  readonly #escape: number;
  readonly #comment: Uint8Array | undefined;
  #state: State;
  #preambleLeft: number;
  /** Absolute offset of the chunk being read. */
  #base = 0;
  /** The byte before the current chunk (a field or line start is decided by it). */
  #previous = LF;
  /** Escape characters right before the current chunk, inside a quoted field (backslash escapes). */
  #escapes = 0;
  /**
   * Outside quotes, the first bytes of the current line as far as read (a comment prefix is
   * matched against them), or null once the line is known to hold a field (a quote opened on it).
   */
  #head: Uint8Array | null = new Uint8Array(0);
  /** Where in the current chunk the stretch outside quotes began. */
  #outFrom = 0;
  #problem: QuoteProblem | undefined;

  constructor(dialect: QuoteDialect) {
    this.#delimiter = dialect.delimiter.charCodeAt(0);
    this.#quote = dialect.quote.charCodeAt(0);
    this.#escape = dialect.escape.charCodeAt(0);
    this.#comment = dialect.comment ? new TextEncoder().encode(dialect.comment) : undefined;
    this.#preambleLeft = dialect.skipLines;
    this.#state = dialect.skipLines > 0 ? 'preamble' : 'out';
  }

  /** The first problem found so far. */
  get problem(): QuoteProblem | undefined {
    return this.#problem;
  }

  /** The next chunk of the file; `start`: where its text begins (after a UTF-8 byte order mark). */
  feed(bytes: Uint8Array, start = 0): void {
    const chunk = searchable(bytes);
    this.#outFrom = start;
    if (this.#problem === undefined) this.#walk(chunk, start);
    // A copy (a Buffer's `slice` would be a view): the next chunk may be read into the same
    // buffer (utf8-check.ts).
    if (this.#comment !== undefined && this.#state === 'out' && this.#problem === undefined) {
      const head = this.#lineHead(chunk, chunk.length);
      this.#head = head === null ? null : Uint8Array.from(head);
    }
    if (chunk.length > start) this.#previous = chunk[chunk.length - 1]!;
    this.#base += chunk.length;
  }

  #walk(chunk: Uint8Array, from: number): void {
    let i = from;
    let steps = 0;
    while (i < chunk.length && this.#problem === undefined) {
      // Quotes about every field: one search per quote costs more than looking at every byte
      // (every field quoted: about 1.6x here), so the rest of the chunk is walked byte by byte.
      if (++steps === DENSE_STEPS && (i - from) / steps < DENSE_BYTES && this.#comment === undefined) {
        if (this.#state === 'in' || this.#state === 'out') this.#dense(chunk, from, i);
        return;
      }
      switch (this.#state) {
        case 'preamble':
        case 'comment': {
          const lf = chunk.indexOf(LF, i);
          if (lf === -1) return;
          i = lf + 1;
          if (this.#state === 'comment' || --this.#preambleLeft === 0) this.#enterOut(i, new Uint8Array(0));
          break;
        }
        case 'quote-at-end':
          i = this.#afterQuote(chunk, -1, 0);
          break;
        case 'closed-at-end':
          i = this.#afterClosing(chunk, -1);
          break;
        case 'in':
          i = this.#inQuoted(chunk, i);
          break;
        case 'out':
          i = this.#outside(chunk, i, from);
          break;
      }
    }
  }

  /**
   * The states 'in' and 'out' walked byte by byte from `i` to the chunk's end: the same rules as
   * the searches (`#outside`, `#inQuoted`), for files without comment lines.
   */
  #dense(chunk: Uint8Array, from: number, start: number): void {
    const quote = this.#quote;
    const escape = this.#escape;
    const delimiter = this.#delimiter;
    const n = chunk.length;
    let quoted = this.#state === 'in';
    for (let i = start; i < n; i++) {
      const b = chunk[i]!;
      // Most bytes are neither: one comparison each where quotes escape themselves.
      if (b !== quote && b !== escape) continue;
      if (quoted) {
        if (b === escape && escape !== quote) {
          // An escape takes the next byte with it (`\"`, `\\`), in the next chunk too.
          if (i + 1 === n) {
            this.#escapes = 1;
            this.#state = 'in';
            return;
          }
          i++;
          continue;
        }
        if (i + 1 === n) {
          this.#state = escape === quote ? 'quote-at-end' : 'closed-at-end';
          this.#head = null;
          return;
        }
        const next = chunk[i + 1]!;
        if (escape === quote && next === quote) {
          i++;
          continue;
        }
        if (next !== delimiter && next !== LF && next !== CR) {
          this.#problem = { kind: 'text-after-closing-quote', offset: this.#base + i + 1 };
          return;
        }
        quoted = false;
      } else if (b === quote) {
        const before = i === from ? this.#previous : chunk[i - 1]!;
        if (before !== delimiter && before !== LF && before !== CR) {
          this.#problem = { kind: 'quote-in-unquoted-field', offset: this.#base + i };
          return;
        }
        quoted = true;
      }
    }
    this.#state = quoted ? 'in' : 'out';
    this.#escapes = 0;
  }

  #enterOut(at: number, head: Uint8Array | null): void {
    this.#state = 'out';
    this.#outFrom = at;
    this.#head = head;
  }

  /** Outside quotes from `i`: to the next quote, which must open a field (or lie in a comment line). */
  #outside(chunk: Uint8Array, i: number, from: number): number {
    const q = chunk.indexOf(this.#quote, i);
    if (q === -1) return chunk.length;
    if (this.#comment !== undefined && this.#startsWithComment(this.#lineHead(chunk, q))) {
      this.#state = 'comment';
      return q;
    }
    // An opening quote starts a field: the text's (or a line's) first byte, or after a delimiter.
    const before = q === from ? this.#previous : chunk[q - 1]!;
    if (before !== this.#delimiter && before !== LF && before !== CR) {
      this.#problem = { kind: 'quote-in-unquoted-field', offset: this.#base + q };
      return chunk.length;
    }
    this.#state = 'in';
    this.#escapes = 0;
    return q + 1;
  }

  /** The first bytes of the line holding `at`, outside quotes (null: the line holds a field). */
  #lineHead(chunk: Uint8Array, at: number): Uint8Array | null {
    const size = this.#comment?.length ?? 0;
    const lf = at > this.#outFrom ? chunk.lastIndexOf(LF, at - 1) : -1;
    if (lf >= this.#outFrom) return chunk.subarray(lf + 1, Math.min(chunk.length, lf + 1 + size));
    const head = this.#head;
    if (head === null || head.length >= size) return head;
    // The line began before this stretch (in an earlier chunk, or ended a preamble or comment
    // line here) fewer bytes than the prefix ago: its bytes go on from the stretch's start.
    const more = chunk.subarray(this.#outFrom, this.#outFrom + size - head.length);
    const joined = new Uint8Array(head.length + more.length);
    joined.set(head);
    joined.set(more, head.length);
    return joined;
  }

  #startsWithComment(head: Uint8Array | null): boolean {
    const comment = this.#comment!;
    return head !== null && head.length >= comment.length && comment.every((c, k) => head[k] === c);
  }

  /** Inside a quoted field from `i`: to the byte after its closing quote, or the chunk's end. */
  #inQuoted(chunk: Uint8Array, i: number): number {
    const q = chunk.indexOf(this.#quote, i);
    if (this.#escape !== this.#quote) {
      // `\"` is a quote in the field, `\\"` an escaped escape and the closing quote.
      const end = q === -1 ? chunk.length : q;
      const run = this.#trailingEscapes(chunk, i, end);
      if (q === -1) {
        this.#escapes = run;
        return chunk.length;
      }
      this.#escapes = 0;
      return run % 2 === 1 ? q + 1 : this.#afterClosing(chunk, q);
    }
    if (q === -1) return chunk.length;
    if (q + 1 === chunk.length) {
      this.#state = 'quote-at-end';
      return chunk.length;
    }
    return this.#afterQuote(chunk, q, q + 1);
  }

  /** Escape characters right before `end`, counted back to `from` and on into the previous chunk. */
  #trailingEscapes(chunk: Uint8Array, from: number, end: number): number {
    let run = 0;
    for (let k = end - 1; k >= from && chunk[k] === this.#escape; k--) run++;
    return run === end - from ? run + this.#escapes : run;
  }

  /** A quote inside a quoted field where quotes escape themselves: doubled, or the closing one. */
  #afterQuote(chunk: Uint8Array, q: number, next: number): number {
    if (chunk[next] === this.#quote) {
      this.#state = 'in';
      return next + 1;
    }
    return this.#afterClosing(chunk, q);
  }

  /** After the closing quote at `q` (-1: the previous chunk's last byte) come a delimiter or the line's end. */
  #afterClosing(chunk: Uint8Array, q: number): number {
    const next = q + 1;
    this.#enterOut(next, null);
    if (next >= chunk.length) {
      this.#state = 'closed-at-end';
      return chunk.length;
    }
    const b = chunk[next]!;
    if (b !== this.#delimiter && b !== LF && b !== CR) this.#problem = { kind: 'text-after-closing-quote', offset: this.#base + next };
    return next;
  }
}
