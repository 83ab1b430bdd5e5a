/**
 * Streaming record readers for JSON arrays and JSON lines. Neither holds more than one record (and
 * one read chunk) in memory: a JSON-lines file is split on newlines as it streams, and an array is
 * split into its top-level elements by a small tokenizer that only tracks strings, escapes and
 * bracket nesting; each record is then handed to `JSON.parse`, which does the real validation.
 */
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile, RejectedRow } from '../../src/types.ts';

/** One top-level record of the file and where it starts. */
export interface JsonRecord {
  readonly value: Record<string, unknown>;
  /** 1-based line of the file where the record starts. */
  readonly line: number;
  /** 0-based element index when the file is an array; absent for JSON lines. */
  readonly index?: number;
  /** Length of the record's source text, for sizing the type sample. */
  readonly chars: number;
}

export interface RecordPosition {
  readonly line: number;
  readonly index?: number;
}

export type JsonLayout = 'array' | 'lines';

/**
 * A record bigger than this is refused: it would have to be held whole, and an unbalanced bracket
 * would otherwise swallow the rest of the file into one "element".
 */
export const MAX_RECORD_CHARS = 64 * 1024 * 1024;

/** How an error names a record: the operator looks it up by line, an array element also by index. */
export function describePosition(position: RecordPosition): string {
  return position.index === undefined ? `line ${position.line}` : `element [${position.index}] (line ${position.line})`;
}

const ACCEPTED_SHAPES =
  'A .json file must hold either an array of objects ([{"a":1}, {"a":2}]) or JSON lines (one complete object per line); .jsonl and .ndjson files hold JSON lines.';

function dataFailure(fileName: string, code: string, message: string, hint: string, line?: number): IngestFailure {
  return new IngestFailure(ingestError('data', code, `${fileName}: ${message}`, hint, { file: fileName, ...(line === undefined ? {} : { line }) }));
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The line a `JSON.parse` error points at: V8 reports a character offset into the record's text,
 * which may span several lines of the file (pretty-printed arrays).
 */
function errorLine(text: string, startLine: number, error: unknown): number {
  const match = /position (\d+)/.exec(error instanceof Error ? error.message : String(error));
  if (!match) return startLine;
  const end = Math.min(Number(match[1]), text.length);
  let line = startLine;
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isComplete(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

interface Splitter {
  push(text: string, out: JsonRecord[]): void;
  end(out: JsonRecord[]): void;
}

const WS = /\S/;

/** JSON lines: one object per line, blank lines skipped (they still count for line numbers). */
class LinesSplitter implements Splitter {
  #line: number;
  #parts: string[] = [];
  #partsChars = 0;
  #records = 0;

  /** `strictShape`: the file is a `.json`, so one lone object is a document, not JSON lines. */
  /** `rejects`: lines that are not a JSON object go here instead of failing the file (bad rows skipped). */
  constructor(
    private readonly fileName: string,
    private readonly strictShape: boolean,
    linesBefore: number,
    private readonly rejects?: RejectedRow[],
  ) {
    this.#line = linesBefore;
  }

  push(text: string, out: JsonRecord[]): void {
    let start = 0;
    for (;;) {
      const newline = text.indexOf('\n', start);
      if (newline === -1) {
        if (start < text.length) {
          // Only the unfinished tail is kept, so a long line costs one join, not a rescan per chunk.
          this.#parts.push(text.slice(start));
          this.#partsChars += text.length - start;
          if (this.#partsChars > MAX_RECORD_CHARS) throw this.#tooLarge();
        }
        return;
      }
      const piece = text.slice(start, newline);
      const line = this.#parts.length > 0 ? this.#parts.join('') + piece : piece;
      this.#parts = [];
      this.#partsChars = 0;
      this.#emit(line, out);
      start = newline + 1;
    }
  }

  end(out: JsonRecord[]): void {
    if (this.#parts.length > 0) {
      const line = this.#parts.join('');
      this.#parts = [];
      this.#emit(line, out);
    }
    if (this.strictShape && this.#records === 1) {
      throw dataFailure(
        this.fileName,
        'JSON_SHAPE',
        'holds a single JSON object, not a list of records',
        `${ACCEPTED_SHAPES} Wrap the object in [ ] (or, if it is JSON lines with one record, name the file .jsonl), then replay it.`,
        this.#line,
      );
    }
  }

  #tooLarge(): IngestFailure {
    return dataFailure(
      this.fileName,
      'JSON_RECORD_TOO_LARGE',
      `line ${this.#line + 1} is longer than ${MAX_RECORD_CHARS} characters`,
      'Each line of a JSON-lines file must be one object of reasonable size; split the record or fix the missing line breaks, then replay the file.',
      this.#line + 1,
    );
  }

  #emit(text: string, out: JsonRecord[]): void {
    const line = ++this.#line;
    if (!WS.test(text)) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      if (this.strictShape && this.#records === 0) {
        // A `.json` starting with `{` whose first line is no complete object is almost always one
        // pretty-printed object: say which shapes are accepted rather than just "bad syntax".
        throw dataFailure(
          this.fileName,
          'JSON_SHAPE',
          `line ${line} is not a complete JSON object (${errorText(error)}); a single object spread over several lines is not accepted`,
          `${ACCEPTED_SHAPES} Wrap the object in [ ], or write one object per line, then replay the file.`,
          line,
        );
      }
      if (this.rejects) return void this.rejects.push({ line, reason: `invalid JSON: ${errorText(error)}`, record: text });
      throw dataFailure(this.fileName, 'JSON_SYNTAX', `invalid JSON at line ${line}: ${errorText(error)}`, 'Fix the JSON at the reported line (each line must be one complete JSON object), then replay the file.', line);
    }
    if (!isRecord(value)) {
      if (this.rejects) return void this.rejects.push({ line, reason: `${describeValue(value)}, not a JSON object`, record: text });
      throw dataFailure(
        this.fileName,
        'JSON_NOT_OBJECT',
        `line ${line} is ${describeValue(value)}; each line must be a JSON object`,
        `${ACCEPTED_SHAPES} Make every line an object of column names to values, then replay the file.`,
        line,
      );
    }
    this.#records++;
    out.push({ value, line, chars: text.length });
  }
}

/** Where the array tokenizer is (plain numbers: the hot loop compares them per character). */
const ArrayState = {
  /** Before the opening `[`. */
  Start: 0,
  /** Inside the array, where an element (or `]`) is expected. */
  Value: 1,
  /** Inside an element. */
  Element: 2,
  /** After the closing `]`: only whitespace may follow. */
  After: 3,
} as const;
type ArrayState = (typeof ArrayState)[keyof typeof ArrayState];

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const NEWLINE = 0x0a;

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === NEWLINE || c === 0x0d || c === 0x09;
}

/**
 * Splits a top-level JSON array into its elements. Brackets inside an element are kept on a stack,
 * so a mismatched closer is reported where it occurs instead of swallowing the rest of the file.
 */
class ArraySplitter implements Splitter {
  #state: ArrayState = ArrayState.Start;
  #line: number;
  #index = 0;
  #afterComma = false;
  #inString = false;
  #escape = false;
  /** Closers expected inside the current element, innermost last. */
  #closers: number[] = [];
  #parts: string[] = [];
  #partsChars = 0;
  #elementLine = 0;

  constructor(
    private readonly fileName: string,
    linesBefore: number,
  ) {
    this.#line = linesBefore + 1;
  }

  push(text: string, out: JsonRecord[]): void {
    let elementStart = this.#state === ArrayState.Element ? 0 : -1;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === NEWLINE) this.#line++;
      if (this.#state === ArrayState.Element) {
        if (this.#inString) {
          if (this.#escape) this.#escape = false;
          else if (c === BACKSLASH) this.#escape = true;
          else if (c === QUOTE) this.#inString = false;
          continue;
        }
        if (c === QUOTE) {
          this.#inString = true;
        } else if (c === LBRACE) {
          this.#closers.push(RBRACE);
        } else if (c === LBRACKET) {
          this.#closers.push(RBRACKET);
        } else if (c === RBRACE || c === RBRACKET) {
          const expected = this.#closers.pop();
          if (expected === undefined && c === RBRACKET) {
            this.#finish(text.slice(elementStart, i), out);
            this.#state = ArrayState.After;
          } else if (expected !== c) {
            throw this.#syntax(`unexpected "${String.fromCharCode(c)}" in element [${this.#index}] at line ${this.#line}`, this.#line);
          }
        } else if (c === COMMA && this.#closers.length === 0) {
          this.#finish(text.slice(elementStart, i), out);
          this.#state = ArrayState.Value;
          this.#afterComma = true;
        }
        continue;
      }
      if (isWhitespace(c)) continue;
      switch (this.#state) {
        case ArrayState.Start:
          if (c !== LBRACKET) throw this.#syntax(`expected "[" at line ${this.#line}`, this.#line);
          this.#state = ArrayState.Value;
          break;
        case ArrayState.Value:
          if (c === RBRACKET) {
            if (this.#afterComma) throw this.#syntax(`trailing comma before "]" at line ${this.#line} (after element [${this.#index - 1}])`, this.#line);
            this.#state = ArrayState.After;
          } else if (c === COMMA) {
            throw this.#syntax(`missing value before "," at line ${this.#line} (element [${this.#index}])`, this.#line);
          } else {
            this.#state = ArrayState.Element;
            this.#elementLine = this.#line;
            elementStart = i;
            i--; // the element's first character is scanned again in the element state
          }
          break;
        case ArrayState.After:
          throw this.#syntax(`unexpected content after the closing "]" at line ${this.#line}`, this.#line);
      }
    }
    if (this.#state === ArrayState.Element) {
      this.#parts.push(text.slice(elementStart));
      this.#partsChars += n - elementStart;
      if (this.#partsChars > MAX_RECORD_CHARS) {
        const partial = this.#parts.join('');
        this.#parts = [];
        throw this.#unparsable(partial, `element [${this.#index}] at line ${this.#elementLine} is longer than ${MAX_RECORD_CHARS} characters or is not closed`, 'JSON_RECORD_TOO_LARGE');
      }
    }
  }

  end(): void {
    if (this.#state === ArrayState.After) return;
    if (this.#state === ArrayState.Element) {
      const partial = this.#parts.join('');
      this.#parts = [];
      if (isComplete(partial)) {
        throw this.#syntax(`unexpected end of file at line ${this.#line}: the array is not closed with "]" (after element [${this.#index}])`, this.#line);
      }
      throw this.#unparsable(partial, `unexpected end of file inside element [${this.#index}] (starting at line ${this.#elementLine}): a bracket or string is not closed`, 'JSON_SYNTAX');
    }
    throw this.#syntax(`unexpected end of file at line ${this.#line}: the array is not closed with "]"`, this.#line);
  }

  /** An element that never ended: `JSON.parse` pinpoints the first real fault, when there is one. */
  #unparsable(text: string, fallback: string, code: string): IngestFailure {
    try {
      JSON.parse(text);
    } catch (error) {
      if (/position \d+/.test(errorText(error))) {
        const line = errorLine(text, this.#elementLine, error);
        return this.#syntax(`invalid JSON in element [${this.#index}] at line ${line}: ${errorText(error)}`, line);
      }
    }
    return dataFailure(this.fileName, code, fallback, 'Fix the JSON at the reported line (an unclosed bracket or string?), then replay the file.', this.#elementLine);
  }

  #syntax(message: string, line: number): IngestFailure {
    return dataFailure(this.fileName, 'JSON_SYNTAX', message, 'Fix the JSON at the reported line, then replay the file.', line);
  }

  #finish(partText: string, out: JsonRecord[]): void {
    const text = this.#parts.length > 0 ? this.#parts.join('') + partText : partText;
    this.#parts = [];
    this.#partsChars = 0;
    const index = this.#index++;
    this.#afterComma = false;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      const line = errorLine(text, this.#elementLine, error);
      throw this.#syntax(`invalid JSON in element [${index}] at line ${line}: ${errorText(error)}`, line);
    }
    if (!isRecord(value)) {
      throw dataFailure(
        this.fileName,
        'JSON_NOT_OBJECT',
        `element [${index}] (line ${this.#elementLine}) is ${describeValue(value)}; each element of the array must be a JSON object`,
        `${ACCEPTED_SHAPES} Make every element an object of column names to values, then replay the file.`,
        this.#elementLine,
      );
    }
    out.push({ value, line: this.#elementLine, index, chars: text.length });
  }
}

/**
 * The layout from the first non-whitespace character: `.json` is an array when it starts with `[`
 * and JSON lines when it starts with `{`; `.jsonl`/`.ndjson` are always JSON lines.
 */
function chooseSplitter(file: ClaimedFile, first: string, linesBefore: number, rejects?: RejectedRow[]): Splitter {
  const isJson = file.extension.toLowerCase() === '.json';
  if (!isJson) return new LinesSplitter(file.name, false, linesBefore, rejects);
  if (first === '[') return new ArraySplitter(file.name, linesBefore);
  if (first === '{') return new LinesSplitter(file.name, true, linesBefore, rejects);
  throw dataFailure(
    file.name,
    'JSON_SHAPE',
    `starts with ${JSON.stringify(first)} at line ${linesBefore + 1}: it is a single JSON value, not a list of records`,
    `${ACCEPTED_SHAPES} Write the records as an array of objects or as JSON lines, then replay the file.`,
    linesBefore + 1,
  );
}

/** Bytes of the file parsed into one batch of records. */
const BATCH_BYTES = 256 * 1024;

/**
 * The file's records in order, one batch per 256 KiB of the file: iterating an async generator costs a
 * promise per step, too much to pay per record of a large file. Throws `IngestFailure` (data
 * errors) on bad content; records before the fault have been yielded by then.
 */
export async function* readBatches(file: ClaimedFile, rejects?: RejectedRow[]): AsyncGenerator<JsonRecord[], void, undefined> {
  // fatal: a byte sequence that is not UTF-8 is a fault of the file, not something to paper over
  // with U+FFFD in the table. The decoder also drops a leading BOM.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let splitter: Splitter | undefined;
  let linesBefore = 0;
  let offset = 0;
  const decode = (chunk?: Uint8Array): string => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch (error) {
      throw dataFailure(
        file.name,
        'JSON_ENCODING',
        `is not valid UTF-8 (in the ${chunk ? `${chunk.length} bytes from byte offset ${offset}` : 'last bytes of the file'}): ${errorText(error)}`,
        'JSON files must be UTF-8; re-encode the file, then replay it.',
      );
    }
  };
  const feed = (text: string): JsonRecord[] => {
    const out: JsonRecord[] = [];
    if (!splitter) {
      const first = WS.exec(text);
      if (!first) {
        // Leading whitespace is dropped, but its line breaks still count for line numbers.
        for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === NEWLINE) linesBefore++;
        return out;
      }
      for (let i = 0; i < first.index; i++) if (text.charCodeAt(i) === NEWLINE) linesBefore++;
      splitter = chooseSplitter(file, first[0], linesBefore, rejects);
      text = text.slice(first.index);
    }
    splitter.push(text, out);
    return out;
  };
  for await (const chunk of file.stream()) {
    // Parsed records take several times the bytes they come from: a batch per quarter of a
    // read chunk keeps the records alive at once (and so the peak memory) small.
    for (let at = 0; at < chunk.length; at += BATCH_BYTES) {
      const part = chunk.subarray(at, at + BATCH_BYTES);
      const text = decode(part);
      offset += part.length;
      const batch = feed(text);
      if (batch.length > 0) yield batch;
    }
  }
  const last = feed(decode());
  if (!splitter) {
    throw dataFailure(file.name, 'EMPTY_FILE', `holds only whitespace (${file.size} bytes)`, 'Write the records before creating the .ready sentinel, then replay the file.');
  }
  splitter.end(last);
  if (last.length > 0) yield last;
}
