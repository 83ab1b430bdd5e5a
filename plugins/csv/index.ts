/**
 * CSV and TSV ingester. The file is loaded by the database's own COPY parser, streamed in large
 * chunks (or read by the server itself from the claimed path when it can): no per-row JavaScript.
 * Only the head of the file is parsed here (papaparse), for the header and, when the table does
 * not exist yet, to infer column types.
 */
import { ResultAsync } from 'neverthrow';
import Papa from 'papaparse';
import { fromDbError, groupFailure, ingestError, IngestFailure } from '../../src/errors.ts';
import { mapLimit } from '../../src/map-limit.ts';
import { defineIngester } from '../../src/plugins.ts';
import { checkHeaderNames, columnList } from '../../src/schema.ts';
import { hasSourceColumns } from '../../src/source-columns.ts';
import { createTableFor, fitTable, type InferColumns } from '../../src/table-fit.ts';
import { qualifiedName, quoteLiteral, tableLabel } from '../../src/sql.ts';
import type { AppendResult, ClaimedFile, ColumnSpec, DbConnection, IngestContext, IngestError, IngesterPlugin, LogicalType, TableColumn, TableName } from '../../src/types.ts';
import { loadSkipping, skipBadRows, skipping } from './bad-rows.ts';
import { conversionFailure, likelyCulprit } from './culprit.ts';
import { loadWithSource } from './source.ts';
import { inferColumnType, widen } from '../shared/infer-text.ts';

/** How much of the file's head is parsed to infer types (only when the table is new). */
const SAMPLE_BYTES = 256 * 1024;
const SAMPLE_ROWS = 2000;
/** A header line longer than this is not a CSV header. */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;
/** `fileState` key: column types widened after an earlier attempt failed on them. */
const WIDENED = 'csv.widened';

interface Head {
  readonly header: string[];
  /** Data rows of the sample (the last one dropped when the sample ends mid-file). */
  readonly rows: string[][];
  /** The sample is the whole file. */
  readonly complete: boolean;
}

const decoder = new TextDecoder('utf-8');

function parseRows(text: string, delimiter: string, preview: number): string[][] {
  const parsed = Papa.parse<string[]>(text, { delimiter, preview, skipEmptyLines: 'greedy' });
  return parsed.data;
}

/** Reads and parses the head of the file: growing the read until the header line is complete. */
async function readHead(file: ClaimedFile, delimiter: string, wantRows: boolean): Promise<Head> {
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
    return { header, rows: data, complete: complete && data.length < SAMPLE_ROWS };
  }
}

function inferColumns(head: Head, widened: ReadonlyMap<string, LogicalType>): ColumnSpec[] {
  return head.header.map((name, index) => ({
    name,
    type: widened.get(name) ?? inferColumnType(head.rows.map((row) => row[index] ?? '')),
  }));
}

/** Types for the columns schema evolution adds, from the head of the file as for a new table. */
function addedTypes(file: ClaimedFile, delimiter: string): InferColumns {
  return async (names) => inferColumns(await readHead(file, delimiter, true), new Map()).filter((c) => names.includes(c.name));
}

function copyOptions(delimiter: string): string {
  return `(FORMAT csv, HEADER true, DELIMITER ${quoteLiteral(delimiter)})`;
}

async function load(conn: DbConnection, file: ClaimedFile, table: TableName, columns: readonly { name: string; sqlType: string }[], delimiter: string, ctx: IngestContext): Promise<number> {
  if (hasSourceColumns(ctx)) return loadWithSource(conn, file, table, columns, delimiter, ctx);
  const target = `${qualifiedName(table)} (${columnList(columns)})`;
  if (ctx.capabilities.readsLocalFiles) {
    // The server parses the claimed file itself: fastest, and the path is the watcher's own.
    return conn.execute(`COPY ${target} FROM ${quoteLiteral(file.stagedPath)} WITH ${copyOptions(delimiter)}`);
  }
  return conn.copyFrom(`COPY ${target} FROM STDIN WITH ${copyOptions(delimiter)}`, file.stream());
}

/** `header` receives the file's column names, for naming columns in errors. */
async function append(conn: DbConnection, file: ClaimedFile, table: TableName, ctx: IngestContext, header: string[]): Promise<AppendResult> {
  if (file.size === 0) {
    throw new IngestFailure(
      ingestError('data', 'EMPTY_FILE', `${file.name} is empty (0 bytes)`, 'A CSV file needs at least a header line naming its columns; write the file completely before creating its .ready.', {
        file: file.name,
      }),
    );
  }
  const delimiter = file.extension === '.tsv' ? '\t' : ',';
  const existing = await conn.describeTable(table);
  const head = await readHead(file, delimiter, existing === null);
  header.push(...head.header);
  const names = checkHeaderNames(head.header, file.name);
  if (names.isErr()) throw new IngestFailure(names.error);

  if (existing) {
    const { matched } = await fitTable(conn, table, existing, head.header, addedTypes(file, delimiter), file, ctx);
    if (skipping(ctx)) return { rows: await loadSkipping(conn, file, table, matched, delimiter, ctx) };
    return { rows: await load(conn, file, table, matched, delimiter, ctx).catch((error: unknown) => Promise.reject(skipBadRows(error, file, ctx))) };
  }

  if (!ctx.schema.createTable) {
    throw new IngestFailure(
      ingestError('schema', 'TABLE_MISSING', `table ${tableLabel(table)} does not exist and creating tables is disabled`, 'Create the table, or enable table creation, then replay the file.', {
        file: file.name,
      }),
    );
  }
  if (head.complete && head.rows.length === 0) {
    // Creating the table from a header alone would make every column TEXT for good: wait for a
    // file with data to decide the types.
    ctx.logger.warn('header-only file: nothing to append, table not created yet', { file: file.name, table: tableLabel(table) });
    return { rows: 0 };
  }
  const widened = (ctx.fileState.get(WIDENED) as Map<string, LogicalType> | undefined) ?? new Map<string, LogicalType>();
  const columns = inferColumns(head, widened);
  await createTableFor(conn, table, columns, file, ctx);
  if (skipping(ctx)) {
    const typed = columns.map((c) => ({ name: c.name, sqlType: ctx.sqlType(c.type), nullable: true }));
    return { rows: await loadSkipping(conn, file, table, typed, delimiter, ctx, (error) => retryWidened(error, file, columns, widened, ctx)) };
  }
  try {
    return { rows: await load(conn, file, table, columns.map((c) => ({ name: c.name, sqlType: ctx.sqlType(c.type) })), delimiter, ctx) };
  } catch (error) {
    const wider = retryWidened(error, file, columns, widened, ctx);
    throw wider === error ? skipBadRows(error, file, ctx) : wider;
  }
}

/**
 * A value beyond the sample did not fit the type inferred for its column: remember a wider type
 * for that column and ask for a fresh transaction (the table is created again with it).
 */
function retryWidened(error: unknown, file: ClaimedFile, columns: readonly ColumnSpec[], widened: Map<string, LogicalType>, ctx: IngestContext): unknown {
  const failure = fromDbError(error, file.name);
  const column = typeof failure.column === 'number' ? columns[failure.column - 1] : undefined;
  if (!failure.sqlState?.startsWith('22') || !column || column.type.kind === 'text') return error;
  const wider = widen(column.type);
  widened.set(column.name, wider);
  ctx.fileState.set(WIDENED, widened);
  const reason = `column "${column.name}" was inferred as ${column.type.kind} from the first rows, but line ${failure.line ?? '?'} does not fit; retrying with ${wider.kind}`;
  ctx.logger.info(reason, { file: file.name });
  return new IngestFailure({ ...failure, retry: { reason } });
}

/** Adds the column's name from the header to a database error that gives only its number. */
function nameColumn(error: IngestError, header: readonly string[]): IngestError {
  if (typeof error.column !== 'number') return error;
  const name = header[error.column - 1];
  return name === undefined ? error : { ...error, message: `${error.message.replace(/\)$/, '')} "${name}")` };
}

// ---------------------------------------------------------------------------------------------
// Several small files at once
// ---------------------------------------------------------------------------------------------

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/** What a whole small file says about its records, scanned the way a CSV parser splits them. */
export interface Scan {
  /** The header line as text (BOM and line break removed): files with the same one share a COPY. */
  readonly header: string;
  /** Data records after the header: line breaks outside quoted fields, plus an unterminated last line. */
  readonly records: number;
  /**
   * Something parsers may read in more than one way (a quote inside an unquoted field or after a
   * closing quote, a blank line, a lone carriage return, a quote left open): the file is loaded
   * alone, where the server counts its rows (or fails it with its own error).
   */
  readonly irregular: boolean;
  /** Byte offset just past the header line. */
  readonly bodyStart: number;
  readonly endsWithNewline: boolean;
}

// Where the scan is: at the start of a line or of a field, inside an unquoted or a quoted field,
// or just after a quote inside a quoted field (an escaped quote, or the closing one).
const LINE_START = 0;
const FIELD_START = 1;
const UNQUOTED = 2;
const QUOTED = 3;
const QUOTE_IN_QUOTED = 4;

/**
 * Counts the records of `bytes` with a small state machine over its bytes (no field values are
 * built). Only regular files are counted for a shared COPY: the server's count for the group must
 * also equal the sum of these, or the group is refused, so a wrong count costs a split, never a
 * wrong row count in the ledger.
 */
export function scanCsv(bytes: Uint8Array, delimiter = 0x2c): Scan {
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  let lines = 0;
  let headerEnd = -1;
  let irregular = false;
  let at: number = LINE_START;
  const endLine = (i: number) => {
    if (headerEnd === -1) headerEnd = i;
    lines++;
    at = LINE_START;
  };
  for (let i = start; i < bytes.length && !irregular; i++) {
    const b = bytes[i]!;
    if (b === CR && at !== QUOTED) {
      // Only as part of CRLF outside a quoted field.
      if (bytes[i + 1] !== LF || at === LINE_START) irregular = true;
      continue;
    }
    switch (at) {
      case LINE_START:
      case FIELD_START:
        if (b === LF) {
          if (at === LINE_START) irregular = true; // a blank line
          else endLine(i);
        } else if (b === QUOTE) at = QUOTED;
        else if (b === delimiter) at = FIELD_START;
        else at = UNQUOTED;
        break;
      case UNQUOTED:
        if (b === LF) endLine(i);
        else if (b === delimiter) at = FIELD_START;
        else if (b === QUOTE) irregular = true;
        break;
      case QUOTED:
        if (b === QUOTE) at = QUOTE_IN_QUOTED;
        break;
      case QUOTE_IN_QUOTED:
        if (b === QUOTE) at = QUOTED;
        else if (b === delimiter) at = FIELD_START;
        else if (b === LF) endLine(i);
        else irregular = true;
        break;
    }
  }
  if (at === QUOTED) irregular = true;
  const endsWithNewline = bytes.length > start && bytes[bytes.length - 1] === LF;
  const trailing = at !== LINE_START ? 1 : 0;
  const headerBytes = bytes.subarray(start, headerEnd === -1 ? bytes.length : headerEnd);
  return {
    header: decoder.decode(headerBytes).replace(/\r$/, ''),
    records: Math.max(0, lines + trailing - 1),
    irregular,
    bodyStart: headerEnd === -1 ? bytes.length : headerEnd + 1,
    endsWithNewline,
  };
}

/** The bodies of `files` (headers dropped), one after the other, each ending in a line break. */
async function* bodies(files: readonly ClaimedFile[], scans: readonly Scan[]): AsyncIterable<Uint8Array> {
  for (const [i, file] of files.entries()) {
    const scan = scans[i]!;
    if (scan.bodyStart < file.size) yield* file.stream({ start: scan.bodyStart });
    if (scan.records > 0 && !scan.endsWithNewline) yield new Uint8Array([LF]);
  }
}

/** Total size of a failed group up to which its bad value's file is guessed (see culpritOf). */
const GUESS_MAX_BYTES = 8 << 20;

/**
 * The member a failed shared COPY's error belongs to: the one its detail names by path (errors in
 * a file's structure), else the likely holder of a value that did not convert (see culprit.ts).
 */
async function culpritOf(error: unknown, members: readonly ClaimedFile[], delimiter: string): Promise<number | undefined> {
  const detail = (error as { detail?: unknown } | null)?.detail;
  if (typeof detail !== 'string') return undefined;
  const path = /file:\s*'([^']*)'/.exec(detail)?.[1];
  const named = members.findIndex((f) => f.stagedPath === path);
  if (named >= 0) return named;
  const failure = conversionFailure(error instanceof Error ? error.message : '', detail);
  // A group's members are small (most are in memory since their claim); past a few MiB in all,
  // the guess is not worth reading them again.
  if (!failure || members.reduce((sum, f) => sum + f.size, 0) > GUESS_MAX_BYTES) return undefined;
  const contents = await Promise.all(members.map((f) => f.read(0, f.size)));
  return likelyCulprit(failure, contents, delimiter);
}

/**
 * Appends small files of the same header with one COPY for all of them: the server reads them
 * itself (`COPY ... FROM ARRAY[...]`) when it can, else their bodies go through one `COPY FROM
 * STDIN`. Each file's row count is its record count, checked against the server's total. Files
 * that cannot share a COPY (their own header, an irregular file, a new table) go one by one.
 */
async function appendMany(conn: DbConnection, files: readonly ClaimedFile[], table: TableName, ctx: IngestContext): Promise<AppendResult[]> {
  const results: (AppendResult | undefined)[] = files.map(() => undefined);
  const one = async (index: number) => {
    const file = files[index]!;
    const header: string[] = [];
    try {
      results[index] = await append(conn, file, table, ctx, header);
    } catch (error) {
      throw new IngestFailure(nameColumn(fromDbError(error, file.name), header), index);
    }
  };
  const existing = await conn.describeTable(table);
  // Source columns differ file by file: one statement per file then (still one transaction).
  if (existing === null || hasSourceColumns(ctx)) {
    for (let i = 0; i < files.length; i++) await one(i);
    return results as AppendResult[];
  }
  // A few reads at a time: small files, kept only as long as their scan takes.
  const scans = await mapLimit(files, 8, async (file) => scanCsv(await file.read(0, file.size), file.extension === '.tsv' ? 0x09 : 0x2c));
  const shared = new Map<string, number[]>();
  for (const [i, file] of files.entries()) {
    const scan = scans[i]!;
    if (file.size === 0 || scan.irregular) continue;
    const key = `${file.extension}\n${scan.header}`;
    shared.set(key, [...(shared.get(key) ?? []), i]);
  }
  const grouped = new Set([...shared.values()].filter((group) => group.length > 1).flat());
  for (let i = 0; i < files.length; i++) if (!grouped.has(i)) await one(i);
  for (const group of shared.values()) {
    if (group.length < 2) continue;
    const first = files[group[0]!]!;
    const delimiter = first.extension === '.tsv' ? '\t' : ',';
    const header = parseRows(scans[group[0]!]!.header, delimiter, 1)[0] ?? [];
    // A header problem is the same for every file of the group: the first one fails alone with it.
    const names = checkHeaderNames(header, first.name);
    if (names.isErr()) throw new IngestFailure(names.error, group[0]!);
    let matched: TableColumn[];
    try {
      matched = (await fitTable(conn, table, existing, header, addedTypes(first, delimiter), first, ctx)).matched;
    } catch (error) {
      throw new IngestFailure(fromDbError(error, first.name), group[0]!);
    }
    const target = `${qualifiedName(table)} (${columnList(matched)})`;
    const members = group.map((i) => files[i]!);
    let loaded: number;
    try {
      loaded = ctx.capabilities.readsLocalFiles
        ? await conn.execute(`COPY ${target} FROM ARRAY[${members.map((f) => quoteLiteral(f.stagedPath)).join(', ')}] WITH ${copyOptions(delimiter)}`)
        : await conn.copyFrom(
            `COPY ${target} FROM STDIN WITH (FORMAT csv, HEADER false, DELIMITER ${quoteLiteral(delimiter)})`,
            bodies(
              members,
              group.map((i) => scans[i]!),
            ),
          );
    } catch (error) {
      // Hyper names the file for errors in a file's structure (`file:'<path>' line:3`), not for a
      // value that does not convert (`file: 'ARRAY' line:3 column:2`): then it is a guess.
      const culprit = await culpritOf(error, members, delimiter).catch(() => undefined);
      throw culprit === undefined ? new IngestFailure(fromDbError(error)) : new IngestFailure(fromDbError(error, members[culprit]!.name), group[culprit]!);
    }
    const counted = group.reduce((sum, i) => sum + scans[i]!.records, 0);
    if (loaded !== counted) {
      throw new IngestFailure(
        ingestError('data', 'CSV_GROUP_COUNT', `the database loaded ${loaded} rows from ${group.length} files, their records add up to ${counted}`, 'The files are loaded one by one instead.'),
      );
    }
    for (const i of group) results[i] = { rows: scans[i]!.records };
  }
  return results as AppendResult[];
}

/** CSV (`.csv`) and tab-separated (`.tsv`) files with a header line. */
export const csvIngester: IngesterPlugin = defineIngester({
  name: 'csv',
  extensions: ['.csv', '.tsv'],
  append(conn, file, table, ctx) {
    const header: string[] = [];
    return ResultAsync.fromPromise(append(conn, file, table, ctx, header), (error) => nameColumn(fromDbError(error, file.name), header));
  },
  appendMany(conn, files, table, ctx) {
    return ResultAsync.fromPromise(appendMany(conn, files, table, ctx), groupFailure);
  },
});

export default csvIngester;
