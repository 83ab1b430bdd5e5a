/**
 * What the two record splitters (JSON lines, JSON arrays) share: their interface, and how they
 * check a parsed record and report a file that does not hold records.
 */
import { ingestError, IngestFailure } from '../../src/errors.ts';
import { isLosslessNumber } from './exact.ts';
import type { JsonRecord } from './record.ts';

export const ACCEPTED_SHAPES =
  'A .json file must hold either an array of objects ([{"a":1}, {"a":2}]) or JSON lines (one complete object per line); ' +
  '.jsonl and .ndjson files hold JSON lines.';

export function dataFailure(fileName: string, code: string, message: string, hint: string, line?: number): IngestFailure {
  return new IngestFailure(
    ingestError('data', code, `${fileName}: ${message}`, hint, { file: fileName, ...(line === undefined ? {} : { line }) }),
  );
}

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (isLosslessNumber(value)) return 'a number';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !isLosslessNumber(value);
}

/**
 * The line a `JSON.parse` error points at: V8 reports a character offset into the record's text,
 * which may span several lines of the file (pretty-printed arrays).
 */
export function errorLine(text: string, startLine: number, error: unknown): number {
  const match = /position (\d+)/.exec(error instanceof Error ? error.message : String(error));
  if (!match) return startLine;
  const end = Math.min(Number(match[1]), text.length);
  let line = startLine;
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Nesting deeper than this is refused, as most JSON readers refuse it (a walk over such a value would exhaust the stack). */
export const MAX_JSON_DEPTH = 1000;

/**
 * How deep the arrays and objects of one record's text nest, when deeper than `MAX_JSON_DEPTH`
 * (else undefined). A record of fewer than two characters a level cannot be that deep, so only
 * large records are scanned.
 */
export function tooDeep(text: string): number | undefined {
  if (text.length <= 2 * MAX_JSON_DEPTH) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return depth;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}

export function tooDeepFailure(fileName: string, where: string, line: number): IngestFailure {
  return dataFailure(
    fileName,
    'JSON_TOO_DEEP',
    `${where} nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`,
    `Flatten the record (no reader takes JSON nested this deep), then replay the file.`,
    line,
  );
}

export function isComplete(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export interface Splitter {
  push(text: string, out: JsonRecord[]): void;
  end(out: JsonRecord[]): void;
}

export const WS = /\S/;

export const NEWLINE = 0x0a;
