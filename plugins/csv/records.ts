/**
 * CSV records one by one, with their fields and the line each starts on: for loading a file row
 * by row when bad rows are skipped (bad-rows.ts). Splits as the databases' COPY does: a quote
 * opens a quoted stretch anywhere in a field (`x"q` opens one that runs on), `""` inside one is a
 * quote, a line break inside one belongs to the field, CRLF ends a line like LF. A field that had
 * a quote in it is never NULL, even when empty.
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

/** The records of a stream of text (the header first), as they complete. */
export async function* csvRecords(chunks: AsyncIterable<string>, delimiter: string): AsyncGenerator<CsvRecord> {
  let state = FIELD;
  let field = '';
  let fieldQuoted = false;
  let fields: string[] = [];
  let quoted: boolean[] = [];
  let text = '';
  let line = 1;
  let startLine = 1;
  let first = true;
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
      if (state === QUOTED) {
        if (c === '"') state = AFTER_QUOTE;
        else {
          if (c === '\n') line++;
          field += c;
        }
        continue;
      }
      if (state === AFTER_QUOTE) {
        if (c === '"') {
          field += '"';
          state = QUOTED;
          continue;
        }
        state = FIELD;
      }
      if (c === '"') {
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
    text += chunk.slice(from);
  }
  if (state === QUOTED) {
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
