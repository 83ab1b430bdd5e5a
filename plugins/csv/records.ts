/**
 * CSV records one by one, with their fields and the line each starts on: for loading a file row
 * by row when bad rows are skipped (bad-rows.ts), and the head of a file (head.ts). Splits as the
 * databases' COPY does: a quote opens a quoted stretch anywhere in a field (`x"q` opens one that
 * runs on), `""` inside one is a quote (or, with another escape character, the escape before a
 * quote or itself), a line break inside one belongs to the field, CRLF ends a line like LF. A
 * field that had a quote in it is never NULL, even when empty. Comment lines and the lines before
 * the header are no records (their lines still count).
 */

export interface CsvRecord {
  /** 1-based line the record starts on (the header is line 1). */
  readonly line: number;
  /** Its text as in the file, without the line break that ends it. */
  readonly text: string;
  readonly fields: readonly string[];
  readonly quoted: readonly boolean[];
  /** The file ended inside a quoted stretch: this record is the rest of the file. */
  readonly unterminated: boolean;
}

const FIELD = 0;
const QUOTED = 1;
/** Just after a quote inside a quoted stretch: an escaped quote, or the closing one. */
const AFTER_QUOTE = 2;
/** Just after the escape character inside a quoted stretch (an escape other than the quote). */
const AFTER_ESCAPE = 3;

/** How records are written: the quote and escape characters, comment lines, lines before the header. */
export interface RecordSyntax {
  /** Default `"`. */
  readonly quote?: string;
  /** Default: the quote (`""` is a quote inside quotes). */
  readonly escape?: string;
  /** A line that starts with this (outside quotes) is no record. */
  readonly comment?: string;
  /** Lines skipped at the start, whatever they hold (a report's title, notes). */
  readonly skipLines?: number;
}

/** The records of a stream of text (the header first), as they complete. */
export async function* csvRecords(chunks: AsyncIterable<string>, delimiter: string, syntax: RecordSyntax = {}): AsyncGenerator<CsvRecord> {
  const quote = syntax.quote ?? '"';
  const escape = syntax.escape ?? quote;
  const comment = syntax.comment ?? '';
  let skip = syntax.skipLines ?? 0;
  let state = FIELD;
  let field = '';
  let fieldQuoted = false;
  let fields: string[] = [];
  let quoted: boolean[] = [];
  let text = '';
  let line = 1;
  let startLine = 1;
  let first = true;
  // At the start of a record, how much of the comment prefix has been seen (-1: not at a start,
  // or it is no comment); `inComment`: skipping a comment line.
  let lead = comment === '' ? -1 : 0;
  let inComment = false;
  const endField = () => {
    fields.push(field);
    quoted.push(fieldQuoted);
    field = '';
    fieldQuoted = false;
  };
  const endRecord = (): CsvRecord => {
    endField();
    // CRLF: the CR is part of the line break (one inside quotes would have taken the LF in too).
    const crlf = text.endsWith('\r');
    if (crlf) fields[fields.length - 1] = fields[fields.length - 1]!.slice(0, -1);
    const record: CsvRecord = { line: startLine, text: crlf ? text.slice(0, -1) : text, fields, quoted, unterminated: false };
    fields = [];
    quoted = [];
    text = '';
    startLine = line;
    if (comment !== '') lead = 0;
    return record;
  };
  for await (let chunk of chunks) {
    if (first) {
      first = false;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    let from = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (skip > 0 || inComment) {
        if (c === '\n') {
          line++;
          startLine = line;
          if (skip > 0) skip--;
          else inComment = false;
          if (comment !== '') lead = 0;
        }
        from = i + 1;
        continue;
      }
      if (lead >= 0) {
        // The record's first characters: a comment line, or the record itself.
        if (c === comment[lead]) {
          lead++;
          if (lead === comment.length) {
            inComment = true;
            lead = -1;
            text = '';
            field = '';
            from = i + 1;
          }
          continue;
        }
        if (lead > 0) {
          // Not a comment after all: what was held back is the record's start.
          const held = comment.slice(0, lead);
          lead = -1;
          for (const h of held) {
            if (h === quote) {
              state = QUOTED;
              fieldQuoted = true;
            } else if (h === delimiter) endField();
            else field += h;
          }
        }
        lead = -1;
      }
      if (state === QUOTED) {
        if (c === escape && escape !== quote) state = AFTER_ESCAPE;
        else if (c === quote) state = AFTER_QUOTE;
        else {
          if (c === '\n') line++;
          field += c;
        }
        continue;
      }
      if (state === AFTER_ESCAPE) {
        if (c !== quote && c !== escape) field += escape;
        if (c === '\n') line++;
        field += c;
        state = QUOTED;
        continue;
      }
      if (state === AFTER_QUOTE) {
        if (c === quote && escape === quote) {
          field += quote;
          state = QUOTED;
          continue;
        }
        state = FIELD;
      }
      if (c === quote) {
        state = QUOTED;
        fieldQuoted = true;
      } else if (c === delimiter) endField();
      else if (c === '\n') {
        line++;
        text += chunk.slice(from, i);
        from = i + 1;
        yield endRecord();
      } else field += c;
    }
    if (!inComment && skip === 0) text += chunk.slice(from);
  }
  if (state === QUOTED || state === AFTER_ESCAPE) {
    endField();
    yield { line: startLine, text, fields, quoted, unterminated: true };
  } else if (text !== '' || fields.length > 0) {
    yield endRecord();
  }
}

/**
 * Decoded text of a byte stream (UTF-8), chunk by chunk. Bytes that are not UTF-8 become U+FFFD;
 * `invalid.seen` is set from the first chunk that had some on, so that a record holding U+FFFD
 * from then on can be told apart (it is most likely such bytes, not the character itself).
 */
export async function* decoded(bytes: AsyncIterable<Uint8Array>, invalid: { seen: boolean }): AsyncGenerator<string> {
  const lenient = new TextDecoder('utf-8');
  // Fed the same bytes only to notice the first invalid sequence (this is the slow path already).
  const strict = new TextDecoder('utf-8', { fatal: true });
  const check = (chunk?: Uint8Array) => {
    if (invalid.seen) return;
    try {
      if (chunk) strict.decode(chunk, { stream: true });
      else strict.decode();
    } catch {
      invalid.seen = true;
    }
  };
  for await (const chunk of bytes) {
    check(chunk);
    const text = lenient.decode(chunk, { stream: true });
    if (text !== '') yield text;
  }
  check();
  const rest = lenient.decode();
  if (rest !== '') yield rest;
}
