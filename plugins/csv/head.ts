/**
 * The head of a CSV file, parsed here for its header, to infer column types when the table does
 * not exist yet, and to decide how its dates are read; the rest of the file is the database's to
 * parse (or the streamed reader's, see splice.ts). The rows are split as the databases' COPY
 * splits them (records.ts), each with the line it starts on.
 */
import Papa from 'papaparse';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { InferColumns } from '../../src/columns/table-fit.ts';
import type { ClaimedFile, ColumnSpec, LogicalType } from '../../src/types.ts';
import type { TextDialect } from './dialect.ts';
import { csvRecords } from './records.ts';

/** How much of the file's head is parsed to infer types (only when the table is new). */
const SAMPLE_BYTES = 256 * 1024;
const SAMPLE_ROWS = 2000;
/** A header line longer than this is not a CSV header. */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;

export interface Head {
  readonly header: string[];
  /** Data rows of the sample (the last one dropped when the sample ends mid-file). */
  readonly rows: string[][];
  /** The line each row starts on (the header is line 1). */
  readonly lines: number[];
  /** The sample is the whole file. */
  readonly complete: boolean;
  /** The sample's text (byte order mark dropped), header first. */
  readonly text: string;
}

const decoder = new TextDecoder('utf-8');
const strict = new TextDecoder('utf-8', { fatal: true });

/**
 * Column names come from the header: bytes in it that are not UTF-8 would name columns with
 * U+FFFD. (The database checks the data rows; a name is ours to check.)
 */
function checkHeaderUtf8(file: ClaimedFile, bytes: Uint8Array, header: readonly string[], skipLines: number): void {
  const index = header.findIndex((name) => name.includes('\uFFFD'));
  if (index === -1) return;
  // The header line is past the lines skipped before it.
  let start = 0;
  for (let n = 0; n < skipLines; n++) {
    const newline = bytes.indexOf(0x0a, start);
    if (newline === -1) return;
    start = newline + 1;
  }
  const end = bytes.indexOf(0x0a, start);
  try {
    strict.decode(end === -1 ? bytes.subarray(start) : bytes.subarray(start, end));
  } catch {
    throw new IngestFailure(
      ingestError(
        'data',
        'ENCODING_INVALID',
        `${file.name}: the header is not valid UTF-8 (column ${index + 1}: ${JSON.stringify(header[index])})`,
        'Save the file as UTF-8 (or say which character set it is in: --encoding), then replay it.',
        {
          file: file.name,
          line: skipLines + 1,
          column: header[index],
        },
      ),
    );
  }
}

export function parseRows(text: string, delimiter: string, preview: number): string[][] {
  const parsed = Papa.parse<string[]>(text, { delimiter, preview, skipEmptyLines: 'greedy' });
  return parsed.data;
}

/** Reads and parses the head of the file: growing the read until the header line is complete. */
export async function readHead(
  file: ClaimedFile,
  dialect: TextDialect,
  wantRows: boolean,
  nullValues: readonly string[] = [],
): Promise<Head> {
  let length = Math.min(SAMPLE_BYTES, file.size);
  for (;;) {
    const bytes = await file.read(0, length);
    const complete = bytes.length >= file.size;
    let text = decoder.decode(bytes);
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    // The header is past the lines to skip.
    let newline = -1;
    for (let n = 0; n <= dialect.skipLines; n++) {
      newline = text.indexOf('\n', newline + 1);
      if (newline === -1) break;
    }
    if (newline === -1 && !complete) {
      if (length >= MAX_HEADER_BYTES) {
        throw new IngestFailure(
          ingestError(
            'data',
            'CSV_NO_HEADER',
            `${file.name}: no line break in the first ${MAX_HEADER_BYTES} bytes`,
            'The file must start with a header line naming its columns.',
            {
              file: file.name,
              line: 1,
            },
          ),
        );
      }
      length = Math.min(length * 4, MAX_HEADER_BYTES, file.size);
      continue;
    }
    const { header, rows, lines, whole } = await records(text, dialect, wantRows || !dialect.header ? SAMPLE_ROWS : 0, new Set(nullValues));
    if (dialect.header) checkHeaderUtf8(file, bytes, header, dialect.skipLines);
    // A sample that stops mid-file may stop mid-row: that last row says nothing reliable.
    if (!complete && whole && rows.length > 0) {
      rows.pop();
      lines.pop();
    }
    return { header, rows, lines, complete: complete && whole, text };
  }
}

async function* once(text: string): AsyncGenerator<string> {
  yield text;
}

/**
 * The header and up to `most` rows of `text` (blank lines skipped); `whole`: the text ended before
 * `most` rows. Without a header line, the names are the dialect's `columnNames`, else `column1`,
 * `column2`... as many as the first row has fields. `nulls`: unquoted fields equal to one of them
 * are NULL, read as empty.
 */
async function records(
  text: string,
  dialect: TextDialect,
  most: number,
  nulls: ReadonlySet<string>,
): Promise<{ header: string[]; rows: string[][]; lines: number[]; whole: boolean }> {
  let header: string[] | undefined;
  const rows: string[][] = [];
  const lines: number[] = [];
  const syntax = {
    quote: dialect.quote,
    escape: dialect.escape,
    skipLines: dialect.skipLines,
    ...(dialect.comment ? { comment: dialect.comment } : {}),
  };
  for await (const r of csvRecords(once(text), dialect.delimiter, syntax)) {
    if (r.text.trim() === '' && !r.quoted.some(Boolean)) continue;
    if (header === undefined && !dialect.header)
      header = dialect.columnNames ? [...dialect.columnNames] : r.fields.map((_, i) => `column${i + 1}`);
    if (header === undefined) {
      header = [...r.fields];
      if (most === 0) return { header, rows, lines, whole: false };
      continue;
    }
    if (rows.length === most) return { header, rows, lines, whole: false };
    rows.push(nulls.size === 0 ? [...r.fields] : r.fields.map((f, i) => (!r.quoted[i] && nulls.has(f) ? '' : f)));
    lines.push(r.line);
  }
  return { header: header ?? [], rows, lines, whole: true };
}

/** The sample's values of column `index`. */
export function columnValues(head: Head, index: number): string[] {
  return head.rows.map((row) => row[index] ?? '');
}

export function inferColumns(
  head: Head,
  widened: ReadonlyMap<string, LogicalType>,
  infer: (values: readonly string[], name: string) => LogicalType,
): ColumnSpec[] {
  return head.header.map((name, index) => ({
    name,
    type: widened.get(name) ?? infer(columnValues(head, index), name),
  }));
}

/** Types for the columns schema evolution adds, from the head of the file as for a new table. */
export function addedTypes(
  file: ClaimedFile,
  dialect: TextDialect,
  infer: (head: Head) => (values: readonly string[], name: string) => LogicalType,
  nullValues: readonly string[] = [],
): InferColumns {
  return async (names) => {
    const head = await readHead(file, dialect, true, nullValues);
    return inferColumns(head, new Map(), infer(head)).filter((c) => names.includes(c.name));
  };
}
