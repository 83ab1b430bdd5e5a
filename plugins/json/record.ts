/**
 * What one JSON record is and how an error names it: shared by the readers that produce records
 * and by the ingester and bad-row handling that report on them.
 */
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
