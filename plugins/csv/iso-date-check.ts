/**
 * Whether every value of a CSV file's date columns starts as an ISO date (`2018-`) or is empty,
 * read beside the database's own COPY of the file. Such values read the same under every setting,
 * so a file whose dates all do can be loaded by a plain COPY, as fast as a file without dates; one
 * that has another form anywhere (`01/02/2018` past the head) must instead be read by the
 * statement that decides its order (date-sql.ts), and the load that COPY began is rolled back.
 *
 * Only for hyperd reading the file itself: a record ends at a line feed outside quotes (hyperd
 * refuses a carriage return without one), quotes and escapes as the file's dialect says. Quoting
 * the file's fields wrongly is the quote check's to refuse (quote-check.ts), not this one's.
 */

import { isIsoStart, searchable } from './bytes.ts';
import type { TextDialect } from './dialect.ts';

const LF = 0x0a;
const CR = 0x0d;

// Where the walk is: at the start of a field still to look at, inside an unquoted or a quoted
// field, just after a quote or an escape inside a quoted field, or (`REST`) outside quotes with no
// date left to look at in this record, where it jumps from line feed to line feed.
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
const QUOTE_IN_QUOTED = 3;
const ESCAPED = 4;
const REST = 5;

/** Length of the ISO start looked for: four digits and a dash. */
const ISO_START = 5;
const DASH = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

/** What of the file's dialect the check follows. */
export type IsoDateDialect = Pick<TextDialect, 'delimiter' | 'quote' | 'escape' | 'header'>;

export class IsoDateCheck {
  readonly #delimiter: number;
  readonly #quote: number;
  readonly #escape: number;
  /** `#dates[i]` is 1: field `i` holds dates. */
  readonly #dates: Uint8Array;
  readonly #last: number;
  #state: number;
  #field = 0;
  /** The fields after the last date field of this record are skipped (`REST` outside quotes). */
  #rest: boolean;
  /** Bytes of the current date value matched so far (-1: it passed, or the field holds no date). */
  #matched = -1;
  /** The current date value was quoted. */
  #quoted = false;
  #base = 0;
  #problem: number | undefined;

  /** `fields`: the indexes (from 0) of the date columns in the file's records. */
  constructor(dialect: IsoDateDialect, fields: readonly number[]) {
    this.#delimiter = dialect.delimiter.charCodeAt(0);
    this.#quote = dialect.quote.charCodeAt(0);
    this.#escape = dialect.escape.charCodeAt(0);
    this.#last = fields.length === 0 ? -1 : Math.max(...fields);
    this.#dates = new Uint8Array(this.#last + 2);
    for (const f of fields) this.#dates[f] = 1;
    // The header record is walked as the rest of a record: none of its fields is looked at.
    this.#rest = dialect.header || this.#last < 0;
    this.#state = this.#rest ? REST : FIELD_START;
  }

  /** Byte offset (from the file's start) of the first date value that does not start as ISO. */
  get problem(): number | undefined {
    return this.#problem;
  }

  /** The next chunk of the file; `start`: where its text begins (after a UTF-8 byte order mark). */
  feed(chunk: Uint8Array, start = 0): void {
    if (this.#problem === undefined) this.#walk(searchable(chunk), start);
    this.#base += chunk.length;
  }

  /** The end of the file: a last record without a line feed ends here. */
  end(): void {
    if (this.#problem !== undefined || this.#state === REST || this.#state === QUOTED || this.#state === ESCAPED) return;
    if (this.#matched > 0 || (this.#matched === 0 && this.#quoted)) this.#problem = this.#base;
  }

  #walk(chunk: Uint8Array, from: number): void {
    // Every byte of the file's records up to their last date passes here: the state lives in
    // plain locals while a chunk is walked (fields of `this` in the loop cost about twice as much).
    const n = chunk.length;
    const quote = this.#quote;
    const escape = this.#escape;
    const delimiter = this.#delimiter;
    const dates = this.#dates;
    const last = this.#last;
    let state = this.#state;
    let field = this.#field;
    let rest = this.#rest;
    let matched = this.#matched;
    let quoted = this.#quoted;
    let problem = -1;
    // The next quote at or after the walk in this chunk (n: none), searched again once passed.
    let nextQuote = -1;
    let i = from;
    while (i < n) {
      if (state === REST) {
        if (nextQuote < i) {
          const q = chunk.indexOf(quote, i);
          nextQuote = q === -1 ? n : q;
        }
        const found = chunk.indexOf(LF, i);
        const lf = found === -1 ? n : found;
        if (nextQuote < lf) {
          state = QUOTED;
          i = nextQuote + 1;
        } else if (lf === n) {
          break;
        } else {
          field = 0;
          rest = last < 0;
          state = rest ? REST : FIELD_START;
          i = lf + 1;
        }
        continue;
      }
      let b = chunk[i]!;
      if (state === FIELD_START && b !== quote) {
        // The common cases in tight loops: a field without dates, unquoted, to its end; an ISO
        // start whole in this chunk. Anything else goes byte by byte below.
        if (dates[field] !== 1) {
          while (b !== delimiter && b !== LF && b !== quote && ++i < n) b = chunk[i]!;
          state = UNQUOTED;
          continue;
        }
        if (i + ISO_START <= n && isIsoStart(chunk, i)) {
          i += ISO_START;
          rest = field === last;
          state = rest ? REST : UNQUOTED;
          continue;
        }
      }
      if (state === FIELD_START) {
        if (dates[field] === 1) {
          matched = 0;
          quoted = b === quote;
        }
        if (b === quote) {
          state = QUOTED;
          i++;
          continue;
        }
        state = UNQUOTED;
      } else if (state === QUOTED || state === ESCAPED) {
        if (state === QUOTED && b === quote) {
          state = escape === quote ? QUOTE_IN_QUOTED : rest ? REST : UNQUOTED;
          i++;
          continue;
        }
        // An escaped byte is never part of an ISO start: taking the escape fails the value.
        state = state === QUOTED && b === escape ? ESCAPED : QUOTED;
      } else if (state === QUOTE_IN_QUOTED) {
        // A doubled quote is a quote in the value; any other byte ends the quoted part.
        state = b === quote ? QUOTED : rest ? REST : UNQUOTED;
        if (state !== QUOTED) continue;
      }
      if (state === UNQUOTED && (b === delimiter || b === LF)) {
        // The field's end: a date value must have passed, or be empty and unquoted (NULL).
        if (matched > 0 || (matched === 0 && quoted)) {
          problem = i;
          break;
        }
        matched = -1;
        if (b === LF) field = 0;
        else field++;
        rest = b === LF ? last < 0 : field > last;
        state = rest ? REST : FIELD_START;
        i++;
        continue;
      }
      // A byte of the field's value (unquoted, or quoted). A carriage return outside quotes ends
      // the line with the line feed after it (hyperd refuses one alone): an empty date value
      // before a CRLF is NULL.
      if (matched >= 0 && (b !== CR || state !== UNQUOTED)) {
        if (matched < ISO_START - 1 ? b < DIGIT_0 || b > DIGIT_9 : b !== DASH) {
          problem = i;
          break;
        }
        if (++matched === ISO_START) {
          matched = -1;
          // The last date of the record passed: the rest of it is only walked to find its end.
          if (field === last) {
            rest = true;
            if (state === UNQUOTED) state = REST;
          }
        }
      }
      i++;
    }
    if (problem >= 0) this.#problem = this.#base + problem;
    this.#state = state;
    this.#field = field;
    this.#rest = rest;
    this.#matched = matched;
    this.#quoted = quoted;
  }
}
