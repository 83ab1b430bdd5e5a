/**
 * JSON lines split into records as the file streams: one object per line, bad lines set aside
 * when bad rows are skipped.
 */
import type { IngestFailure } from '../../src/errors.ts';
import type { RejectedRow } from '../../src/types.ts';
import { parseExact } from './exact.ts';
import { type JsonRecord, MAX_RECORD_CHARS } from './record.ts';
import {
  ACCEPTED_SHAPES,
  dataFailure,
  describeValue,
  errorText,
  isRecord,
  MAX_JSON_DEPTH,
  type Splitter,
  tooDeep,
  tooDeepFailure,
  WS,
} from './splitter.ts';

/** JSON lines: one object per line, blank lines skipped (they still count for line numbers). */
export class LinesSplitter implements Splitter {
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
      'Each line of a JSON-lines file must be one object of reasonable size; split the record or fix the missing line ' +
        'breaks, then replay the file.',
      this.#line + 1,
    );
  }

  #emit(text: string, out: JsonRecord[]): void {
    const line = ++this.#line;
    if (!WS.test(text)) return;
    if (tooDeep(text) !== undefined) {
      if (this.rejects) return void this.rejects.push({ line, reason: `nested more than ${MAX_JSON_DEPTH} levels deep`, record: text });
      throw tooDeepFailure(this.fileName, `line ${line}`, line);
    }
    let value: unknown;
    try {
      value = parseExact(text);
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
      throw dataFailure(
        this.fileName,
        'JSON_SYNTAX',
        `invalid JSON at line ${line}: ${errorText(error)}`,
        'Fix the JSON at the reported line (each line must be one complete JSON object), then replay the file.',
        line,
      );
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
