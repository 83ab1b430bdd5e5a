/**
 * Bad rows (`onBadRows: 'skip'`): a row that does not parse, or whose value does not convert to
 * its column, is left out of the load and set aside in `failed/<name>.rejected.csv` (`.jsonl` for
 * JSON input), the good rows committing; past `maxBadRows` the whole file fails as it would
 * without the option. This module is the policy: the limit and its check, and the rejected-rows
 * file's text. The file's life (staging, then failed/) is in watcher/rejected.ts.
 */
import { ingestError } from '../errors.ts';
import type { IngestError, RejectedRow } from '../types.ts';

export const ON_BAD_ROWS = ['fail', 'skip'] as const;
export type OnBadRows = (typeof ON_BAD_ROWS)[number];

/**
 * How many rows a file may lose: a count (`maxBadRows` >= 1, or 0 for none), or a fraction of the
 * file's rows (0 < `maxBadRows` < 1). No limit when absent.
 */
export type BadRowLimit = { readonly count: number } | { readonly fraction: number } | undefined;

/** `maxBadRows` as given (a number, or CLI text such as `100` or `0.01`) → a limit, or an error message. */
export function parseMaxBadRows(value: number | string | undefined): { limit: BadRowLimit } | { error: string } {
  if (value === undefined || value === '') return { limit: undefined };
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n) || n < 0)
    return { error: `maxBadRows must be a count (0, 1, 2, ...) or a fraction between 0 and 1, got ${String(value)}` };
  if (n > 0 && n < 1) return { limit: { fraction: n } };
  if (!Number.isInteger(n)) return { error: `maxBadRows above 1 must be a whole number of rows, got ${String(value)}` };
  return { limit: { count: n } };
}

export function describeLimit(limit: BadRowLimit): string {
  if (!limit) return 'no limit';
  return 'count' in limit ? `${limit.count} row(s)` : `${limit.fraction * 100}% of the file's rows`;
}

/** More rows rejected than a count limit allows: known as soon as it happens, before the file ends. */
export function pastCount(limit: BadRowLimit, rejected: number): boolean {
  return limit !== undefined && 'count' in limit && rejected > limit.count;
}

/** Past the limit once the file is read: `loaded` good rows and `rejected` bad ones. */
export function pastLimit(limit: BadRowLimit, rejected: number, loaded: number): boolean {
  if (!limit || rejected === 0) return false;
  if ('count' in limit) return rejected > limit.count;
  return rejected / (rejected + loaded) > limit.fraction;
}

/** The file fails as a whole: more bad rows than `maxBadRows` allows. `first` names the first of them. */
export function tooManyBadRows(
  file: string,
  rejected: number,
  loaded: number | undefined,
  limit: BadRowLimit,
  first: RejectedRow | undefined,
): IngestError {
  const of = loaded === undefined ? `${rejected} or more rows` : `${rejected} of ${rejected + loaded} rows`;
  return ingestError(
    'data',
    'TOO_MANY_BAD_ROWS',
    `${file}: ${of} could not be loaded, more than maxBadRows allows ` +
      `(${describeLimit(limit)})${first ? `; the first at line ${first.line}: ${first.reason}` : ''}`,
    'Fix the producer (or the rows, starting with the line named) and replay the file; or raise maxBadRows (--max-bad-rows) ' +
      'if losing that many rows is acceptable. Nothing of the file was committed.',
    { file, ...(first ? { line: first.line } : {}) },
  );
}

/** The rejected-rows file's form for a data file with `extension`: JSON lines for JSON input, else CSV. */
export function rejectedFormat(extension: string): '.csv' | '.jsonl' {
  return /\.(?:json|jsonl|ndjson)(?:\.|$)/.test(extension) ? '.jsonl' : '.csv';
}

function csvText(value: string): string {
  return /[",\r\n]/.test(value) || value === '' ? `"${value.replaceAll('"', '""')}"` : value;
}

/** The first line of a rejected-rows file (CSV has a header; JSON lines have none). */
export function rejectedHeader(format: '.csv' | '.jsonl'): string {
  return format === '.csv' ? 'line,reason,record\n' : '';
}

/** One rejected row as a line (or CSV record) of the rejected-rows file: its line, why, and its text as it was. */
export function rejectedLine(format: '.csv' | '.jsonl', row: RejectedRow): string {
  if (format === '.jsonl') return `${JSON.stringify({ line: row.line, reason: row.reason, record: row.record })}\n`;
  return `${row.line},${csvText(row.reason)},${csvText(row.record)}\n`;
}
