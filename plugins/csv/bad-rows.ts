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
import { columnList } from '../../src/columns/schema.ts';
import { qualifiedName } from '../../src/columns/sql.ts';
import { parseSqlType } from '../../src/columns/sql-types.ts';
import { sourceValues } from '../../src/columns/source-columns.ts';
import type { ClaimedFile, DbConnection, IngestContext, TableColumn, TableName } from '../../src/types.ts';
import { isDateProblem, readDate } from '../shared/date-read.ts';
import { fileStateMap } from '../shared/file-state.ts';
import { type ValueCheck, valueCheck } from '../shared/value-check.ts';
import { dateFailure } from './dates.ts';
import type { TextDialect } from './dialect.ts';
import { copyOptions, isNumberType, type ReadPlan, ROW_PROBLEMS } from './read-plan.ts';
import { numberReader } from '../shared/number-text.ts';
import { type CsvRecord, csvRecords, decoded } from './records.ts';
import { fieldText } from './splice.ts';

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
  if (!ctx.badRows || ctx.fileState.get(SKIPPING) === true) return error;
  // The watcher's own refusal of one value (a date against the style) is a bad row too.
  if (isIngestFailure(error) && !ROW_PROBLEMS.has(error.error.code)) return error;
  const failure = fromDbError(error, file.name);
  if (failure.kind !== 'data' || !(isDataError(failure.sqlState) || ROW_PROBLEMS.has(failure.code))) return error;
  ctx.fileState.set(SKIPPING, true);
  const reason = `${failure.message}; loading the file row by row, leaving bad rows out`;
  ctx.logger.info(reason, { file: file.name });
  return new IngestFailure({ ...failure, retry: { reason } });
}

function refusedRows(ctx: IngestContext): Map<number, string> {
  return fileStateMap(ctx, REFUSED);
}

/** A record as it loads: its fields after the plan's conversions (dates made ISO), or why it cannot. */
interface Judged {
  readonly reason?: string;
  /** The record's text as it is to be sent, when it differs from the file's. */
  readonly text?: string;
}

/**
 * Judges a record: its shape, its values made what loads (a date the file does not decide fails
 * the file), then checked against the column types. `checks` undefined: only the shape is
 * checked (a new table's types are guesses, widened instead).
 */
function judge(
  file: ClaimedFile,
  columns: readonly TableColumn[],
  plan: ReadPlan,
  checks: readonly ValueCheck[] | undefined,
  refused: ReadonlyMap<number, string>,
): (r: CsvRecord) => Judged {
  const nulls = new Set(plan.nulls);
  const numbers = plan.numbers ? numberReader(plan.numbers) : undefined;
  const numeric = columns.map((c) => isNumberType(c.sqlType));
  return (r) => {
    const earlier = refused.get(r.line);
    if (earlier !== undefined) return { reason: earlier };
    if (r.unterminated)
      return { reason: 'unterminated quoted field: a quote opened here is never closed, so the rest of the file is this one field' };
    if (r.fields.length !== columns.length) {
      return { reason: r.text === '' ? 'blank line' : `${r.fields.length} field(s) where the header has ${columns.length}` };
    }
    let fields: string[] | undefined;
    if (nulls.size > 0) {
      for (const [i, value] of r.fields.entries()) if (!r.quoted[i] && nulls.has(value)) (fields ??= [...r.fields])[i] = '';
    }
    if (numbers) {
      for (const [i, value] of (fields ?? r.fields).entries()) {
        if (!numeric[i] || (value === '' && !r.quoted[i])) continue;
        const read = numbers.read(value);
        if (typeof read !== 'string') return { reason: `column "${columns[i]!.name}": ${read.reason}` };
        if (read !== value) (fields ??= [...r.fields])[i] = read;
      }
    }
    for (const [i, rule] of plan.dates.entries()) {
      const value = (fields ?? r.fields)[i]!;
      if (!rule || value === '') continue;
      const read = readDate(value, rule);
      if (isDateProblem(read)) {
        if (read.fileLevel) throw dateFailure(file, columns[i]!.name, r.line, read);
        return { reason: `column "${columns[i]!.name}": ${read.reason}` };
      }
      if (read !== value) (fields ??= [...r.fields])[i] = read;
    }
    const values = fields ?? r.fields;
    if (checks) {
      for (let i = 0; i < checks.length; i++) {
        const why = checks[i]!(values[i]!, r.quoted[i]!);
        if (why !== undefined) return { reason: `column "${columns[i]!.name}": ${why}` };
      }
    }
    if (!fields) return {};
    const { quote, escape } = plan.text;
    return {
      text: fields.map((f, i) => (f === '' && !r.quoted[i] ? '' : fieldText(f, plan.delimiter, quote, escape))).join(plan.delimiter),
    };
  };
}

/**
 * The file's good rows as CSV text (header dropped), in the file's own quoting; bad ones go to
 * `onBad`, good ones to `onGood`. Blank lines at the end of the file are no rows.
 */
async function* goodRows(
  file: ClaimedFile,
  text: TextDialect,
  why: (r: CsvRecord) => Judged,
  onBad: (r: CsvRecord, reason: string) => Promise<void> | void,
  onGood?: (r: CsvRecord) => boolean,
  suffix = '',
): AsyncGenerator<string> {
  let out = '';
  let header = text.header;
  const invalid = { seen: false };
  const syntax = { quote: text.quote, escape: text.escape, skipLines: text.skipLines, ...(text.comment ? { comment: text.comment } : {}) };
  // Blank lines held back until a row follows them (then they are bad rows) or the file ends.
  const blank: CsvRecord[] = [];
  for await (const r of csvRecords(decoded(file.stream(), invalid), text.delimiter, syntax)) {
    if (header) {
      // Blank lines before the header are no rows either.
      if (r.text === '' && !r.unterminated) continue;
      header = false;
      continue;
    }
    if (r.text === '' && !r.unterminated && r.fields.length === 1) {
      blank.push(r);
      continue;
    }
    for (const b of blank.splice(0)) await onBad(b, 'blank line');
    const judged: Judged = invalid.seen && r.text.includes('\uFFFD') ? { reason: 'not valid UTF-8' } : why(r);
    if (judged.reason !== undefined) {
      await onBad(r, judged.reason);
      continue;
    }
    if (onGood && !onGood(r)) return;
    out += `${judged.text ?? r.text}${suffix}\n`;
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
export async function loadSkipping(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  columns: readonly TableColumn[],
  plan: ReadPlan,
  ctx: IngestContext,
  widen?: (error: unknown) => unknown,
): Promise<number> {
  const sink = ctx.badRows!;
  const { delimiter, text } = plan;
  const checks = widen ? undefined : columns.map((c) => valueCheck(parseSqlType(c.sqlType), c.nullable));
  const why = judge(file, columns, plan, checks, refusedRows(ctx));
  // Source columns (when asked for) follow the file's own, as on the fast path: appended to each
  // record as it is sent, quoted as the file quotes (a `"` field under QUOTE "'" would land with its quotes).
  const sources = sourceValues(file, ctx);
  const suffix = sources.map((v) => `${delimiter}${fieldText(v.text ?? undefined, delimiter, text.quote, text.escape)}`).join('');
  const sql = `COPY ${qualifiedName(table)} (${columnList([...columns, ...sources])}) FROM STDIN WITH ${copyOptions(text, false)}`;
  try {
    const rows = goodRows(file, text, why, (r, reason) => sink.reject({ line: r.line, reason, record: r.text }), undefined, suffix);
    return await conn.copyFrom(sql, rows);
  } catch (error) {
    if (isIngestFailure(error)) throw error;
    const wider = widen?.(error);
    if (wider !== undefined && wider !== error) throw wider;
    throw await refuse(error, file, columns, text, why, ctx);
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
async function refuse(
  error: unknown,
  file: ClaimedFile,
  columns: readonly TableColumn[],
  dialect: TextDialect,
  why: (r: CsvRecord) => Judged,
  ctx: IngestContext,
): Promise<unknown> {
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
  for await (const _ of goodRows(file, dialect, why, () => {}, onGood)) {
    if (found) break;
  }
  if (!found) return error;
  const column = typeof failure.column === 'number' ? columns[failure.column - 1]?.name : undefined;
  const reason = `${column === undefined ? '' : `column "${column}": `}${text} (refused by the database)`;
  refusedRows(ctx).set(found.line, reason);
  ctx.logger.info('the database refused a row; leaving it out too', { file: file.name, line: found.line, reason: text });
  return new IngestFailure({
    ...failure,
    message: `${file.name}: line ${found.line}: ${text}`,
    line: found.line,
    retry: { reason: `line ${found.line} refused: ${text}` },
  });
}
