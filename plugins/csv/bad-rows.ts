/**
 * Bad rows left out (`onBadRows: 'skip'`). The fast path stays as it is: the database's own COPY
 * reads the whole file. Hyper's COPY can only turn a value that does not convert into NULL
 * (`ON_CAST_FAILURE => 'set_null'`), PostgreSQL 15's not even that, and neither says which rows
 * it could not take; so when that COPY fails on the file's data, the next attempt loads it row by
 * row: each record is split and checked here (its field count, its values against the column
 * types, see value-check.ts), the bad ones go to the sink with their line and reason, and the
 * good ones, as they were written, go through `COPY ... FROM STDIN`. A row the database still
 * refuses is found by its line, and left out too on the attempt after (up to the core's limit on
 * fresh attempts, 8).
 */
import { fromDbError, IngestFailure, isIngestFailure } from '../../src/errors.ts';
import { columnList } from '../../src/schema.ts';
import { qualifiedName, quoteLiteral } from '../../src/sql.ts';
import { parseSqlType } from '../../src/sql-types.ts';
import { sourceValues, withSourceFields } from '../../src/source-columns.ts';
import type { ClaimedFile, DbConnection, IngestContext, TableColumn, TableName } from '../../src/types.ts';
import { fileStateMap } from '../shared/file-state.ts';
import { type ValueCheck, valueCheck } from '../shared/value-check.ts';
import { type CsvRecord, csvRecords, decoded } from './records.ts';

/** `fileState` keys: the file is loaded row by row; rows (by line) the database refused before, with why. */
const SKIPPING = 'csv.skipBadRows';
const REFUSED = 'csv.refusedRows';
/** Good rows are sent in chunks of about this many characters. */
const CHUNK_CHARS = 1 << 20;

/** This attempt loads the file row by row, leaving bad rows out. */
export function skipping(ctx: IngestContext): boolean {
  return ctx.badRows !== undefined && ctx.fileState.get(SKIPPING) === true;
}

function isDataError(sqlState: string | undefined): boolean {
  return sqlState !== undefined && (sqlState.startsWith('22') || sqlState.startsWith('23'));
}

/**
 * A COPY of the whole file failed: when bad rows are skipped and the database refused the data,
 * asks for a fresh attempt that loads it row by row; else `error` as it was.
 */
export function skipBadRows(error: unknown, file: ClaimedFile, ctx: IngestContext): unknown {
  if (!ctx.badRows || ctx.fileState.get(SKIPPING) === true || isIngestFailure(error)) return error;
  const failure = fromDbError(error, file.name);
  if (failure.kind !== 'data' || !isDataError(failure.sqlState)) return error;
  ctx.fileState.set(SKIPPING, true);
  const reason = `${failure.message}; loading the file row by row, leaving bad rows out`;
  ctx.logger.info(reason, { file: file.name });
  return new IngestFailure({ ...failure, retry: { reason } });
}

function refusedRows(ctx: IngestContext): Map<number, string> {
  return fileStateMap(ctx, REFUSED);
}

/** Why a record cannot load, or undefined. `checks` undefined: only its shape is checked (a new table's types are guesses, widened instead). */
function judge(columns: readonly TableColumn[], checks: readonly ValueCheck[] | undefined, refused: ReadonlyMap<number, string>): (r: CsvRecord) => string | undefined {
  return (r) => {
    const earlier = refused.get(r.line);
    if (earlier !== undefined) return earlier;
    if (r.unterminated) return 'unterminated quoted field: a quote opened here is never closed, so the rest of the file is this one field';
    if (r.fields.length !== columns.length) {
      return r.text === '' ? 'blank line' : `${r.fields.length} field(s) where the header has ${columns.length}`;
    }
    if (!checks) return undefined;
    for (let i = 0; i < checks.length; i++) {
      const why = checks[i]!(r.fields[i]!, r.quoted[i]!);
      if (why !== undefined) return `column "${columns[i]!.name}": ${why}`;
    }
    return undefined;
  };
}

/** The file's good rows as CSV text (header dropped); bad ones go to `onBad`, good ones to `onGood`. */
async function* goodRows(file: ClaimedFile, delimiter: string, why: (r: CsvRecord) => string | undefined, onBad: (r: CsvRecord, reason: string) => Promise<void> | void, onGood?: (r: CsvRecord) => boolean): AsyncGenerator<string> {
  let out = '';
  let header = true;
  const invalid = { seen: false };
  for await (const r of csvRecords(decoded(file.stream(), invalid), delimiter)) {
    if (header) {
      header = false;
      continue;
    }
    const reason = invalid.seen && r.text.includes('\uFFFD') ? 'not valid UTF-8' : why(r);
    if (reason !== undefined) {
      await onBad(r, reason);
      continue;
    }
    if (onGood && !onGood(r)) return;
    out += `${r.text}\n`;
    if (out.length >= CHUNK_CHARS) {
      yield out;
      out = '';
    }
  }
  if (out !== '') yield out;
}

/**
 * Loads the file's good rows; the bad ones go to `ctx.badRows`. `widen`: for a table this file
 * created, a refused value first widens its column (as without the option) and only what no
 * wider type takes is left out.
 */
export async function loadSkipping(conn: DbConnection, file: ClaimedFile, table: TableName, columns: readonly TableColumn[], delimiter: string, ctx: IngestContext, widen?: (error: unknown) => unknown): Promise<number> {
  const sink = ctx.badRows!;
  const checks = widen ? undefined : columns.map((c) => valueCheck(parseSqlType(c.sqlType), c.nullable));
  const why = judge(columns, checks, refusedRows(ctx));
  // Source columns (when asked for) follow the file's own, as on the fast path.
  const sources = sourceValues(file, ctx);
  const sql = `COPY ${qualifiedName(table)} (${columnList([...columns, ...sources])}) FROM STDIN WITH (FORMAT csv, HEADER false, DELIMITER ${quoteLiteral(delimiter)})`;
  try {
    const rows = goodRows(file, delimiter, why, (r, reason) => sink.reject({ line: r.line, reason, record: r.text }));
    return await conn.copyFrom(sql, sources.length > 0 ? withSourceFields(rows, sources, delimiter) : rows);
  } catch (error) {
    if (isIngestFailure(error)) throw error;
    const wider = widen?.(error);
    if (wider !== undefined && wider !== error) throw wider;
    throw await refuse(error, file, columns, delimiter, why, ctx);
  }
}

/**
 * PostgreSQL's COPY counts physical lines (a quoted line break starts a new one) and names the
 * line in its context (`COPY t, line 4, column a: "zz"`); Hyper's counts records (`line:3`).
 */
function countsPhysicalLines(error: unknown): boolean {
  const where = (error as { where?: unknown } | null)?.where;
  return typeof where === 'string' && /^COPY .*?, line \d+/.test(where);
}

/**
 * The database refused a row the checks let through: finds it (the failure's line is its place
 * among the rows sent) and asks for a fresh attempt that leaves it out too. Anything else, or a
 * row not found, is the file's failure as it was.
 */
async function refuse(error: unknown, file: ClaimedFile, columns: readonly TableColumn[], delimiter: string, why: (r: CsvRecord) => string | undefined, ctx: IngestContext): Promise<unknown> {
  const failure = fromDbError(error, file.name);
  if (failure.kind === 'transient' || !isDataError(failure.sqlState)) return error;
  const message = (error as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : failure.message;
  const at = failure.line ?? Number(/line:\s*(\d+)/.exec(text)?.[1] ?? Number.NaN);
  if (!Number.isFinite(at)) return error;
  const physical = countsPhysicalLines(error);
  let found: CsvRecord | undefined;
  let sent = 0;
  let lines = 0;
  const onGood = (r: CsvRecord) => {
    sent++;
    const span = 1 + (r.text.match(/\n/g)?.length ?? 0);
    if (physical ? at <= lines + span : at === sent) {
      found = r;
      return false;
    }
    lines += span;
    return true;
  };
  for await (const _ of goodRows(file, delimiter, why, () => {}, onGood)) {
    if (found) break;
  }
  if (!found) return error;
  const column = typeof failure.column === 'number' ? columns[failure.column - 1]?.name : undefined;
  const reason = `${column === undefined ? '' : `column "${column}": `}${text} (refused by the database)`;
  refusedRows(ctx).set(found.line, reason);
  ctx.logger.info('the database refused a row; leaving it out too', { file: file.name, line: found.line, reason: text });
  return new IngestFailure({ ...failure, message: `${file.name}: line ${found.line}: ${text}`, line: found.line, retry: { reason: `line ${found.line} refused: ${text}` } });
}
