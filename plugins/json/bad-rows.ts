/**
 * Bad rows left out of a JSON-lines file (`onBadRows: 'skip'`). Every record goes through
 * JavaScript anyway, so a line that is not a JSON object is set aside as it is read, at no cost
 * to the others. Values are not checked on the first attempt (a file without bad rows costs what
 * it did): when the database refuses one, the next attempt checks each record's values against
 * the column types (value-check.ts) and leaves out those that cannot load and the one the
 * database refused, found again by its line. Only for a table that exists: in a table the file
 * creates, a value that does not fit widens its column, as without the option. A date string
 * its column cannot read (against `dateStyle`, not a date) is checked on every attempt, as it is
 * read here anyway. JSON arrays are not split into bad and good elements: a syntax error there
 * fails the file.
 */
import { IngestFailure } from '../../src/errors.ts';
import { parseSqlType } from '../../src/columns/sql-types.ts';
import type { ClaimedFile, IngestContext, IngestError, RejectedRow, TableColumn } from '../../src/types.ts';
import { fileStateMap } from '../shared/file-state.ts';
import { dateFailure } from '../shared/date-columns.ts';
import { isDateProblem, readDate } from '../shared/date-read.ts';
import { type ValueCheck, valueCheck } from '../shared/value-check.ts';
import { unmarked } from './dialect.ts';
import type { Plan } from './plan.ts';
import { isLosslessNumber, stringifyExact } from './exact.ts';
import type { JsonRecord } from './record.ts';
import { readBatches } from './records.ts';

/** `fileState` keys: check values on this attempt; lines the database refused before, with why. */
const CHECKING = 'json.checkValues';
const REFUSED = 'json.refusedRows';

export interface JsonSkip {
  /** Lines the reader could not take (filled as it reads), to hand to the sink. */
  readonly unreadable: RejectedRow[];
  /** Hands what the reader set aside to the sink. */
  drain(): Promise<void>;
  /** Why a record cannot load, or undefined (always undefined until the database refused a value). */
  check(record: JsonRecord): string | undefined;
  reject(record: JsonRecord, reason: string): Promise<void>;
  /**
   * The database refused COPY row `row`: finds its record (skipping those this attempt left out)
   * and asks for an attempt that checks values and leaves that one out. Undefined when not found.
   */
  refuse(
    file: ClaimedFile,
    failure: IngestError,
    row: number | undefined,
    message: string,
    column: string | undefined,
  ): Promise<IngestFailure | undefined>;
}

function refusedLines(ctx: IngestContext): Map<number, string> {
  return fileStateMap(ctx, REFUSED);
}

/** A JSON value as the text its column receives (objects and arrays as JSON). */
function textOf(value: unknown): string {
  if (isLosslessNumber(value)) return value.value;
  return typeof value === 'string' ? value : typeof value === 'object' ? stringifyExact(value) : String(value);
}

/**
 * Why a record of an existing table cannot load one of its date strings (`column "d": ...`), or
 * undefined; throws the file's failure for one that needs a setting (an ambiguous date).
 */
function badDate(file: ClaimedFile, plan: Plan, record: JsonRecord): string | undefined {
  for (const key in record.value) {
    const index = plan.keys.lookup(key);
    const rule = index < 0 ? undefined : plan.dates[index];
    const value = record.value[key];
    if (!rule || typeof value !== 'string' || plan.nulls.has(value)) continue;
    const read = readDate(value, rule);
    if (!isDateProblem(read)) continue;
    const column = plan.columns[index]!.name;
    if (read.fileLevel) throw dateFailure(file, column, record.line, read);
    return `column "${column}": ${read.reason}`;
  }
  return undefined;
}

/**
 * The skip helper for one attempt, or undefined when bad rows fail the file. `existing`: the
 * table's columns, when it exists; `planOf`: the plan, once made.
 */
export function jsonSkip(
  ctx: IngestContext,
  file: ClaimedFile,
  existing: readonly TableColumn[] | null,
  planOf: () => Plan | undefined,
): JsonSkip | undefined {
  const sink = ctx.badRows;
  if (!sink) return undefined;
  const unreadable: RejectedRow[] = [];
  const refused = refusedLines(ctx);
  const checking = existing !== null && ctx.fileState.get(CHECKING) === true;
  const checks: readonly ValueCheck[] | undefined = checking
    ? existing.map((c) => valueCheck(parseSqlType(c.sqlType), c.nullable))
    : undefined;
  const typed = existing?.map((c) => !['text', 'json', 'other'].includes(parseSqlType(c.sqlType).family));
  const check = (record: JsonRecord): string | undefined => {
    const earlier = refused.get(record.line);
    if (earlier !== undefined) return earlier;
    const plan = planOf();
    if (!plan) return undefined;
    if (!plan.inferred) {
      const date = badDate(file, plan, record);
      if (date !== undefined) return date;
    }
    if (!checks || !existing) return undefined;
    const find = (key: string) => plan.keys.lookup(key);
    const seen = new Set<number>();
    for (const key in record.value) {
      const index = find(key);
      if (index < 0) continue; // an unknown key fails the file: a schema error, not a bad row
      seen.add(index);
      const value = unmarked(record.value[key], plan.nulls);
      if (value === null || value === undefined) continue;
      if (typeof value === 'object' && typed![index])
        return (
          `key "${key}": ${Array.isArray(value) ? 'an array' : 'an object'} cannot load into column ` +
          `"${existing[index]!.name}" (${existing[index]!.sqlType})`
        );
      const why = checks[index]!(textOf(value), true);
      if (why !== undefined) return `key "${key}": ${why}`;
    }
    for (const [index, column] of existing.entries()) {
      if (!column.nullable && (!seen.has(index) || unmarked(record.value[column.name], plan.nulls) === null))
        return `column "${column.name}" is NOT NULL, and the record has no value for it`;
    }
    return undefined;
  };
  return {
    unreadable,
    async drain() {
      for (const row of unreadable.splice(0)) await sink.reject(row);
    },
    check,
    reject: (record, reason) => sink.reject({ line: record.line, reason, record: JSON.stringify(record.value) }),
    async refuse(file, failure, row, message, column) {
      if (row === undefined || !failure.sqlState || !(failure.sqlState.startsWith('22') || failure.sqlState.startsWith('23')))
        return undefined;
      const record = await locateSent(file, row, check);
      if (!record) return undefined;
      refused.set(record.line, `${column === undefined ? '' : `column "${column}": `}${message} (refused by the database)`);
      ctx.fileState.set(CHECKING, true);
      ctx.logger.info('the database refused a row; the next attempt leaves it out and checks the others', {
        file: file.name,
        line: record.line,
        reason: message,
      });
      return new IngestFailure({
        ...failure,
        message: `${file.name}: line ${record.line}: ${message}`,
        line: record.line,
        retry: { reason: `line ${record.line} refused: ${message}` },
      });
    },
  };
}

/** The `row`-th record sent to COPY (1-based): records this attempt left out were not sent. */
async function locateSent(
  file: ClaimedFile,
  row: number,
  leftOut: (record: JsonRecord) => string | undefined,
): Promise<JsonRecord | undefined> {
  let sent = 0;
  for await (const batch of readBatches(file, [])) {
    for (const record of batch) {
      if (leftOut(record) !== undefined) continue;
      if (++sent === row) return record;
    }
  }
  return undefined;
}
