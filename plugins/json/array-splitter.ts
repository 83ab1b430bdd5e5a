/**
 * A top-level JSON array split into its elements as the file streams, by a small tokenizer that
 * only tracks strings, escapes and bracket nesting; `JSON.parse` does the real validation.
 */
import type { IngestFailure } from '../../src/errors.ts';
import { parseExact } from './exact.ts';
import { type JsonRecord, MAX_RECORD_CHARS } from './record.ts';
import {
  ACCEPTED_SHAPES,
  dataFailure,
  describeValue,
  errorLine,
  errorText,
  isComplete,
  isRecord,
  NEWLINE,
  type Splitter,
  tooDeep,
  tooDeepFailure,
} from './splitter.ts';

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

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === NEWLINE || c === 0x0d || c === 0x09;
}

/**
 * Splits a top-level JSON array into its elements. Brackets inside an element are kept on a stack,
 * so a mismatched closer is reported where it occurs instead of swallowing the rest of the file.
 */
export class ArraySplitter implements Splitter {
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
            if (this.#afterComma)
              throw this.#syntax(`trailing comma before "]" at line ${this.#line} (after element [${this.#index - 1}])`, this.#line);
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
        throw this.#unparsable(
          partial,
          `element [${this.#index}] at line ${this.#elementLine} is longer than ${MAX_RECORD_CHARS} characters or is not closed`,
          'JSON_RECORD_TOO_LARGE',
        );
      }
    }
  }

  end(): void {
    if (this.#state === ArrayState.After) return;
    if (this.#state === ArrayState.Element) {
      const partial = this.#parts.join('');
      this.#parts = [];
      if (isComplete(partial)) {
        throw this.#syntax(
          `unexpected end of file at line ${this.#line}: the array is not closed with "]" (after element [${this.#index}])`,
          this.#line,
        );
      }
      throw this.#unparsable(
        partial,
        `unexpected end of file inside element [${this.#index}] (starting at line ${this.#elementLine}): a bracket or string is not closed`,
        'JSON_SYNTAX',
      );
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
    return dataFailure(
      this.fileName,
      code,
      fallback,
      'Fix the JSON at the reported line (an unclosed bracket or string?), then replay the file.',
      this.#elementLine,
    );
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
    if (tooDeep(text) !== undefined)
      throw tooDeepFailure(this.fileName, `element [${index}] (line ${this.#elementLine})`, this.#elementLine);
    let value: unknown;
    try {
      value = parseExact(text);
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
