/**
 * One error taxonomy for the whole watcher. Database and runtime errors are turned into
 * `IngestError` values here, and only here, so every caller agrees on what is transient.
 *
 * The convention, everywhere:
 * - At the plugin boundary, failures are values: plugins return neverthrow `Result`s whose error
 *   is an `IngestError` (`AppendManyError` for a group, naming the member it belongs to).
 * - Inside the core and inside a plugin's own code, a failure is thrown as an `IngestFailure`
 *   (branded with `Symbol.for`, so a copy of this module in another bundle still recognizes it),
 *   carrying the `IngestError` and, in a group, the index of its file. Anything else thrown is
 *   turned into an `IngestError` by `fromDbError` at the one place that catches it.
 * - Outcomes that are not failures (a claim, a step of the protocol) are discriminated unions on
 *   a `state`/`kind` field, never `instanceof` or `'field' in x` checks.
 */
import type { AppendManyError, ErrorKind, IngestError } from './types.ts';

export function ingestError(
  kind: ErrorKind,
  code: string,
  message: string,
  hint: string,
  extra: Partial<Omit<IngestError, 'kind' | 'code' | 'message' | 'hint'>> = {},
): IngestError {
  return { kind, code, message, hint, ...extra };
}

const BRAND = Symbol.for('hyperwatch:IngestError');

/**
 * Wraps an `IngestError` in a throwable, so it can cross `sql.begin` and come back out intact.
 * `index`: in a group of files, the one the failure belongs to (when known).
 */
export class IngestFailure extends Error {
  readonly [BRAND] = true;
  constructor(
    readonly error: IngestError,
    readonly index?: number,
  ) {
    super(error.message);
    this.name = 'IngestFailure';
  }
}

export function isIngestFailure(value: unknown): value is IngestFailure {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** A group's failure as a value (see `AppendManyError`): the member it names, when it names one. */
export function groupFailure(error: unknown): AppendManyError {
  if (!isIngestFailure(error)) return { error: fromDbError(error) };
  return error.index === undefined ? { error: error.error } : { error: error.error, index: error.index };
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

function stringField(value: unknown, key: string): string | undefined {
  const v = field(value, key);
  return typeof v === 'string' ? v : undefined;
}

/** Runtime error codes that mean "the connection or server went away". */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  // postgres.js's own codes
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  // the embedded server is starting again
  'HYPERD_RESTARTING',
]);

/** The connection (or its server) went away: an error of the socket or of the client library. */
export function isConnectionError(error: unknown): boolean {
  const code = stringField(error, 'code');
  return code !== undefined && TRANSIENT_CODES.has(code);
}

/**
 * SQLSTATEs worth a retry: connection exceptions (08), serialization failures and deadlocks
 * (40001, 40P01), insufficient resources (53), operator intervention such as a shutdown (57P01-3)
 * or a cancelled statement (57014: says nothing about the file; a takeover cancels what a process
 * whose lease expired left running on a shared hyperd),
 * lock not available (55P03), an object in use (55006: Hyper's "database ... still in use" while
 * another session attaches or unloads it), a concurrent CREATE TABLE of the same table (42P07), which
 * succeeds as a plain append on the retry, and a transaction already aborted (25P02): its cause
 * was not a statement of the file's, whose own error would have come first (seen on a shared
 * hyperd: a process frozen past its lease, whose sessions the others cancelled, resumed to find
 * its next statement refused so), and a COMMIT the server answered with ROLLBACK (40000, see
 * adapters/db/postgres-js/connection.ts): nothing committed, for no fault of the file's.
 */
export function isTransientSqlState(state: string): boolean {
  return (
    state.startsWith('08') ||
    state.startsWith('53') ||
    state === '40001' ||
    state === '40P01' ||
    state === '55P03' ||
    state === '55006' ||
    state === '57P01' ||
    state === '57P02' ||
    state === '57P03' ||
    state === '57014' ||
    state === '42P07' ||
    state === '25P02' ||
    state === '40000'
  );
}

/**
 * PostgreSQL: two sessions creating the same table (or schema) at once can fail one with 23505
 * on a catalog index, or 42710 (its row type "already exists"), instead of 42P07; the retry
 * finds the table there and appends.
 */
function isCatalogRace(state: string, error: unknown): boolean {
  if (state === '42P06' || state === '42710') return true;
  if (state !== '23505') return false;
  return /pg_type_typname_nsp_index|pg_class_relname_nsp_index|pg_namespace_nspname_index/.test(
    `${stringField(error, 'constraint_name') ?? ''} ${stringField(error, 'message') ?? ''}`,
  );
}

/** `file: 'stdin' line:3 column:3` (Hyper's COPY errors) → line 3, column 3. */
export function parsePosition(detail: string | undefined): { line?: number; column?: number } {
  if (!detail) return {};
  const line = /line:\s*(\d+)/.exec(detail);
  const column = /column:\s*(\d+)/.exec(detail);
  return {
    ...(line ? { line: Number(line[1]) } : {}),
    ...(column ? { column: Number(column[1]) } : {}),
  };
}

const HINTS: Record<string, string> = {
  '22':
    'A value in the file does not fit its column type. Fix the value (or the column type) at the reported line and column, ' +
    'then replay the file.',
  '23': 'A value breaks a constraint of the table (e.g. NULL in a NOT NULL column). Fix the data, then replay the file.',
  '42': 'The file does not fit the table (unknown column or type). Align the file with the table, then replay the file.',
  '0A': 'The database does not support something this file needs.',
};

function lineInMessage(message: string): { line?: number } {
  const line = /\bline (\d+)\b/.exec(message);
  return line ? { line: Number(line[1]) } : {};
}

/** Hints for a database error that says more than its SQLSTATE class (`HINTS`) would. */
function specificHint(sqlState: string, message: string): string | undefined {
  if (sqlState === '22021') {
    return (
      'The file is not UTF-8: spreadsheets save "CSV" in the system\'s code page (e.g. Windows-1252) unless told otherwise. ' +
      'Save it as "CSV UTF-8", or convert it (iconv -f WINDOWS-1252 -t UTF-8), then replay the file.'
    );
  }
  if (/carriage return character without line feed|unquoted carriage return/i.test(message)) {
    return (
      'The file ends its lines with a carriage return alone (as old Mac spreadsheets save CSV): save it with Windows (CRLF) ' +
      'or Unix (LF) line endings, then replay the file.'
    );
  }
  if (/too many columns|extra data after last expected column|missing data for column|too few columns/i.test(message)) {
    return (
      'A line has more or fewer fields than the header: a field holding the delimiter or a line break needs double quotes, ' +
      'and a file of another delimiter needs it set (--csv-delimiter, csvDelimiter). Fix the line (or the setting), then ' +
      'replay the file.'
    );
  }
  return undefined;
}

/** Turns anything thrown by the database client into an `IngestError`. */
export function fromDbError(error: unknown, file?: string, sql?: string): IngestError {
  if (isIngestFailure(error)) return error.error;
  const sqlState = stringField(error, 'code');
  const message = stringField(error, 'message') ?? String(error);
  const detail = stringField(error, 'detail');
  const isSqlState = sqlState !== undefined && /^[0-9A-Z]{5}$/.test(sqlState);
  const base = { ...(file ? { file } : {}), ...(sql ? { sql } : {}), cause: error };
  if (sqlState && (TRANSIENT_CODES.has(sqlState) || (isSqlState && isTransientSqlState(sqlState)) || isCatalogRace(sqlState, error))) {
    return ingestError(
      'transient',
      isSqlState ? `DB_${sqlState}` : sqlState,
      message,
      'The database was unavailable; the file stays claimed and is retried.',
      {
        ...base,
        ...(isSqlState ? { sqlState } : {}),
      },
    );
  }
  if (isSqlState) {
    const klass = sqlState.slice(0, 2);
    const kind: ErrorKind = klass === '42' ? 'schema' : 'data';
    const position = parsePosition(detail);
    // Hyper's detail names the staged path (`file: '.../staging/<id>~x.csv' line:2 column:3`):
    // the operator knows the file by its own name, so say where in it instead.
    const where =
      position.line !== undefined
        ? ` (line ${position.line}${position.column !== undefined ? `, column ${position.column}` : ''})`
        : detail
          ? ` (${detail.trim()})`
          : '';
    return ingestError(
      kind,
      `DB_${sqlState}`,
      `${file ? `${file}: ` : ''}${message}${where}`,
      specificHint(sqlState, message) ?? HINTS[klass] ?? 'The database rejected the file; see the message, fix the file, then replay it.',
      // Hyper puts some positions in the message itself (`invalid UTF-8 sequence in line 2 (...)`),
      // PostgreSQL in its context (`COPY t, line 2`).
      { ...base, sqlState, ...lineInMessage(`${message} ${stringField(error, 'where') ?? ''}`), ...position },
    );
  }
  return ingestError(
    'io',
    sqlState ?? 'UNEXPECTED',
    message,
    'Unexpected error while ingesting; see the message and the watcher log.',
    base,
  );
}

/** JSON form of an error for `.error` files, stats and logs: everything but the raw cause. */
export function errorReport(error: IngestError): Omit<IngestError, 'cause'> {
  const { cause: _cause, ...rest } = error;
  return rest;
}
