/**
 * The head of a CSV file, parsed here (papaparse) for its header and, when the table does not
 * exist yet, to infer column types; the rest of the file is the database's to parse.
 */
import Papa from 'papaparse';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { InferColumns } from '../../src/table-fit.ts';
import type { ClaimedFile, ColumnSpec, LogicalType } from '../../src/types.ts';
import { inferColumnType } from '../shared/infer-text.ts';

/** How much of the file's head is parsed to infer types (only when the table is new). */
const SAMPLE_BYTES = 256 * 1024;
const SAMPLE_ROWS = 2000;
/** A header line longer than this is not a CSV header. */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;

export interface Head {
  readonly header: string[];
  /** Data rows of the sample (the last one dropped when the sample ends mid-file). */
  readonly rows: string[][];
  /** The sample is the whole file. */
  readonly complete: boolean;
  /** The sample's text (byte order mark dropped), header first. */
  readonly text: string;
}

const decoder = new TextDecoder('utf-8');

export function parseRows(text: string, delimiter: string, preview: number): string[][] {
  const parsed = Papa.parse<string[]>(text, { delimiter, preview, skipEmptyLines: 'greedy' });
  return parsed.data;
}

/** Reads and parses the head of the file: growing the read until the header line is complete. */
export async function readHead(file: ClaimedFile, delimiter: string, wantRows: boolean): Promise<Head> {
  let length = Math.min(SAMPLE_BYTES, file.size);
  for (;;) {
    const bytes = await file.read(0, length);
    const complete = bytes.length >= file.size;
    let text = decoder.decode(bytes);
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const newline = text.indexOf('\n');
    if (newline === -1 && !complete) {
      if (length >= MAX_HEADER_BYTES) {
        throw new IngestFailure(
          ingestError('data', 'CSV_NO_HEADER', `${file.name}: no line break in the first ${MAX_HEADER_BYTES} bytes`, 'The file must start with a header line naming its columns.', {
            file: file.name,
            line: 1,
          }),
        );
      }
      length = Math.min(length * 4, MAX_HEADER_BYTES, file.size);
      continue;
    }
    const rows = parseRows(text, delimiter, wantRows ? SAMPLE_ROWS + 1 : 1);
    const [header = [], ...data] = rows;
    // A sample that stops mid-file may stop mid-row: that last row says nothing reliable.
    if (!complete && data.length > 0 && data.length < SAMPLE_ROWS) data.pop();
    return { header, rows: data, complete: complete && data.length < SAMPLE_ROWS, text };
  }
}

export function inferColumns(head: Head, widened: ReadonlyMap<string, LogicalType>): ColumnSpec[] {
  return head.header.map((name, index) => ({
    name,
    type: widened.get(name) ?? inferColumnType(head.rows.map((row) => row[index] ?? '')),
  }));
}

/** Types for the columns schema evolution adds, from the head of the file as for a new table. */
export function addedTypes(file: ClaimedFile, delimiter: string): InferColumns {
  return async (names) => inferColumns(await readHead(file, delimiter, true), new Map()).filter((c) => names.includes(c.name));
}
