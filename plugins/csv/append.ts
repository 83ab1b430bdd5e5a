/**
 * One CSV file appended with the database's own COPY parser: to an existing table fitted to its
 * header, or to a table created from its head, retried with a wider type when a later value does
 * not fit the inferred one.
 */
import { fromDbError, ingestError, IngestFailure } from '../../src/errors.ts';
import { checkHeaderNames, columnList } from '../../src/columns/schema.ts';
import { hasSourceColumns } from '../../src/columns/source-columns.ts';
import { qualifiedName, quoteLiteral, tableLabel } from '../../src/columns/sql.ts';
import { givenTypes } from '../../src/columns/column-types.ts';
import { createTableFor, fitTable, tableMissing } from '../../src/columns/table-fit.ts';
import type {
  AppendResult,
  ClaimedFile,
  ColumnSpec,
  DbConnection,
  IngestContext,
  IngestError,
  LogicalType,
  TableName,
} from '../../src/types.ts';
import type { DateProblem } from '../shared/date-read.ts';
import { widen } from '../shared/infer-text.ts';
import { loadSkipping, skipBadRows, skipping } from './bad-rows.ts';
import { dateFailure, dateKind, dateRules, inferCsvType } from './dates.ts';
import {
  type CsvDialect,
  dateSettings,
  nullMarkers,
  numberFormat,
  otherDelimiter,
  type TextDialect,
  textDialect,
  wrongDelimiter,
} from './dialect.ts';
import { numberReader } from '../shared/number-text.ts';
import { addedTypes, columnValues, type Head, inferColumns, readHead } from './head.ts';
import { IsoDateCheck } from './iso-date-check.ts';
import {
  copyOptions,
  endsWithBlankLine,
  externalSource,
  inFileLines,
  mustStream,
  type PlanColumn,
  plain,
  type ReadPlan,
  serverSelect,
  streamedBytes,
  streamInstead,
} from './read-plan.ts';
import { LineMap } from './splice.ts';
import { loadWithSource } from './source.ts';
import { checkText } from './text-check.ts';
import { lineAt } from './utf8-check.ts';

/** `fileState` key: column types widened after an earlier attempt failed on them. */
const WIDENED = 'csv.widened';

/** `fileState` key: the file's text passed its checks (a retry with wider types need not read it again). */
const TEXT_CHECKED = 'csv.textChecked';

/** `fileState` key: a date past the head is not written as ISO; the statement reads the file's dates (date-sql.ts). */
const DATES_NOT_ISO = 'csv.datesNotIso';

/**
 * The load, with the file's text checked meanwhile (text-check.ts: UTF-8, quotes readers disagree
 * on): the check reads the file while the server does, and a file that fails it fails the
 * transaction before its commit.
 */
async function load(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  plan: ReadPlan,
  head: Head,
  ctx: IngestContext,
): Promise<number> {
  if (ctx.fileState.get(TEXT_CHECKED) === true) return loadChecked(conn, file, table, plan, ctx, false);
  const dates = isoDateCheck(plan, head, ctx);
  const [checked, loaded] = await Promise.allSettled([
    checkText(file, plan.text, undefined, dates),
    loadChecked(conn, file, table, plan, ctx, dates !== undefined),
  ]);
  // Its error names the line; the database's, for such a file, may be about a value it misread.
  if (checked.status === 'rejected') throw checked.reason;
  if (dates?.problem !== undefined) throw await datesNotIso(file, dates.problem, ctx);
  ctx.fileState.set(TEXT_CHECKED, true);
  if (loaded.status === 'rejected') throw loaded.reason;
  return loaded.value;
}

/**
 * For a file whose dates the statement would make ISO (date-sql.ts) and whose head writes them as
 * ISO already: the check that the rest does too, so that a plain COPY, which reads ISO the same
 * under every setting, can load it (bench/csv-iso-dates.ts: the statement's CASE over every value
 * takes 1.16 times COPY's time, COPY with the check beside it 1.02-1.10 times). Undefined when
 * the file is not such a file, or an earlier attempt found it is not.
 */
function isoDateCheck(plan: ReadPlan, head: Head, ctx: IngestContext): IsoDateCheck | undefined {
  if (ctx.fileState.get(DATES_NOT_ISO) === true || !ctx.capabilities.readsLocalFiles || mustStream(ctx) || hasSourceColumns(ctx))
    return undefined;
  if (plain(plan) || serverSelect(plan) === undefined) return undefined;
  const fields = plan.dates.flatMap((rule, i) => (rule ? [i] : []));
  const iso = (value: string) => value === '' || /^\d{4}-/.test(value);
  if (!fields.every((i) => columnValues(head, i).every(iso))) return undefined;
  return new IsoDateCheck(plan.text, fields);
}

/** A date past the head is written in another form than ISO: the next attempt reads the dates by the statement. */
async function datesNotIso(file: ClaimedFile, offset: number, ctx: IngestContext): Promise<IngestFailure> {
  ctx.fileState.set(DATES_NOT_ISO, true);
  const line = await lineAt(file, offset);
  const reason = `line ${line} writes a date in another form than the file's first rows (ISO); reading its dates by the statement instead`;
  ctx.logger.info(reason, { file: file.name });
  return new IngestFailure({
    ...ingestError(
      'data',
      'CSV_DATES_NOT_ISO',
      `${file.name}: ${reason}`,
      'Nothing to do: the watcher reads the file again, its dates read by the statement.',
      { file: file.name, line },
    ),
    retry: { reason },
  });
}

async function loadChecked(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  plan: ReadPlan,
  ctx: IngestContext,
  isoDates: boolean,
): Promise<number> {
  const serverReads = ctx.capabilities.readsLocalFiles && !mustStream(ctx);
  if (hasSourceColumns(ctx)) return loadWithSource(conn, file, table, plan, serverReads, ctx);
  const target = `${qualifiedName(table)} (${columnList(plan.columns)})`;
  const select = serverReads ? serverSelect(plan) : undefined;
  if (select && (plain(plan) || isoDates)) {
    // The server parses the claimed file itself: fastest, and the path is the watcher's own. Its
    // dates, if any, are ISO (`isoDateCheck` reads the file meanwhile).
    return conn.execute(`COPY ${target} FROM ${quoteLiteral(file.stagedPath)} WITH ${copyOptions(plan.text)}`);
  }
  if (select) {
    // Its dates read as text and made ISO by the statement (date-sql.ts); same bulk load as COPY.
    const sql =
      `INSERT BULK INTO ${target} SELECT ${select.map((s) => s.expr).join(', ')} ` +
      `FROM ${externalSource(file.stagedPath, select, plan)}`;
    return conn.execute(sql).catch((error: unknown) => Promise.reject(streamInstead(error, file, true, ctx)));
  }
  const lines = new LineMap();
  return conn
    .copyFrom(`COPY ${target} FROM STDIN WITH ${copyOptions(plan.text)}`, streamedBytes(file, plan, lines))
    .catch((error: unknown) => Promise.reject(inFileLines(error, lines)));
}

/** Types of a new table's columns, from the head of the file (dates as dates only when they read without a guess). */
function inferFrom(head: Head, dialect: CsvDialect, file: ClaimedFile): (values: readonly string[], name: string) => LogicalType {
  const settings = dateSettings(dialect);
  const format = numberFormat(dialect);
  const reader = format ? numberReader(format) : undefined;
  return (values, name) => {
    // Numbers as the locale writes them are typed as the numbers they are (`1.234,5` → 1234.5).
    const numbers = reader ? values.map((v) => (v === '' ? v : reader.read(v))) : [];
    const asNumbers = reader !== undefined && values.some((v) => v !== '') && numbers.every((n) => typeof n === 'string');
    return inferCsvType(asNumbers ? (numbers as string[]) : values, settings, (index: number, problem: DateProblem) => {
      throw dateFailure(file, name, head.lines[index], problem);
    });
  };
}

/** The plan for the table columns `columns` the file fills, in file order. */
function planFor(
  columns: readonly PlanColumn[],
  head: Head,
  text: TextDialect,
  trailingBlank: boolean,
  dialect: CsvDialect,
  file: ClaimedFile,
): ReadPlan {
  const numbers = numberFormat(dialect);
  return {
    columns,
    delimiter: text.delimiter,
    text,
    ...(trailingBlank ? { trailingBlank } : {}),
    dates: dateRules(columns, head, dateSettings(dialect), file),
    nulls: nullMarkers(dialect),
    ...(numbers ? { numbers } : {}),
  };
}

/** `columnNames` name another number of columns than the file's first row has. */
function namesMiss(file: ClaimedFile, names: readonly string[], fields: number, line: number): IngestFailure {
  return new IngestFailure(
    ingestError(
      'data',
      'CSV_COLUMN_NAMES',
      `${file.name}: line ${line} has ${fields} field(s), and columnNames names ${names.length} (${names.join(', ')})`,
      'Give one name per column of the file (--column-names, columnNames), then replay the file.',
      {
        file: file.name,
        line,
      },
    ),
  );
}

/** `header` receives the file's column names, for naming columns in errors. */
export async function append(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  ctx: IngestContext,
  header: string[],
  dialect: CsvDialect,
): Promise<AppendResult> {
  if (file.size === 0) {
    throw new IngestFailure(
      ingestError(
        'data',
        'EMPTY_FILE',
        `${file.name} is empty (0 bytes)`,
        'A CSV file needs at least a header line naming its columns; write the file completely before creating its .ready.',
        {
          file: file.name,
        },
      ),
    );
  }
  const text = textDialect(file, dialect);
  const existing = await conn.describeTable(table);
  // The rows of the head type a new table, and decide how an existing table's dates are read.
  const head = await readHead(
    file,
    text,
    existing === null || existing.some((c) => dateKind(c.sqlType) !== undefined),
    nullMarkers(dialect),
  );
  const other = otherDelimiter(file, dialect, text.header ? head.header : (head.rows[0] ?? []), head.text);
  if (other !== undefined) throw wrongDelimiter(file, other);
  if (text.columnNames && head.rows.length > 0 && head.rows[0]!.length !== text.columnNames.length)
    throw namesMiss(file, text.columnNames, head.rows[0]!.length, head.lines[0]!);
  const trailingBlank = await endsWithBlankLine(file);
  header.push(...head.header);
  const names = checkHeaderNames(head.header, file.name);
  if (names.isErr()) throw new IngestFailure(names.error);

  const infer = (h: Head) => inferFrom(h, dialect, file);
  if (existing) {
    const added = addedTypes(file, text, infer, nullMarkers(dialect));
    const given = async (names: readonly string[]) => givenTypes(await added(names), ctx.schema);
    const { matched } = await fitTable(conn, table, existing, head.header, given, file, ctx);
    const plan = planFor(matched, head, text, trailingBlank, dialect, file);
    if (skipping(ctx)) return { rows: await loadSkipping(conn, file, table, matched, plan, ctx) };
    return {
      rows: await load(conn, file, table, plan, head, ctx).catch((error: unknown) => Promise.reject(skipBadRows(error, file, ctx))),
    };
  }

  if (!ctx.schema.createTable) {
    throw tableMissing(file, table);
  }
  if (head.complete && head.rows.length === 0) {
    // Creating the table from a header alone would make every column TEXT for good: wait for a
    // file with data to decide the types.
    ctx.logger.warn('header-only file: nothing to append, table not created yet', { file: file.name, table: tableLabel(table) });
    return { rows: 0 };
  }
  const widened = (ctx.fileState.get(WIDENED) as Map<string, LogicalType> | undefined) ?? new Map<string, LogicalType>();
  const columns = givenTypes(inferColumns(head, widened, infer(head)), ctx.schema);
  const typed = columns.map((c) => ({ name: c.name, sqlType: c.sql ?? ctx.sqlType(c.type), nullable: true }));
  const plan = planFor(typed, head, text, trailingBlank, dialect, file);
  await createTableFor(conn, table, columns, file, ctx);
  if (skipping(ctx)) {
    return { rows: await loadSkipping(conn, file, table, typed, plan, ctx, (error) => retryWidened(error, file, columns, widened, ctx)) };
  }
  try {
    return { rows: await load(conn, file, table, plan, head, ctx) };
  } catch (error) {
    const wider = retryWidened(error, file, columns, widened, ctx);
    throw wider === error ? skipBadRows(error, file, ctx) : wider;
  }
}

/**
 * A value beyond the sample did not fit the type inferred for its column: remember a wider type
 * for that column and ask for a fresh transaction (the table is created again with it).
 */
function retryWidened(
  error: unknown,
  file: ClaimedFile,
  columns: readonly ColumnSpec[],
  widened: Map<string, LogicalType>,
  ctx: IngestContext,
): unknown {
  const failure = fromDbError(error, file.name);
  const column = typeof failure.column === 'number' ? columns[failure.column - 1] : undefined;
  // A type the user gave is theirs: a value that does not fit it fails the file, never widens it.
  if (!failure.sqlState?.startsWith('22') || !column || column.type.kind === 'text' || column.sql !== undefined || failure.retry)
    return error;
  const wider = widen(column.type, failure.sqlState);
  widened.set(column.name, wider);
  ctx.fileState.set(WIDENED, widened);
  const reason =
    `column "${column.name}" was inferred as ${column.type.kind} from the first rows, but line ${failure.line ?? '?'} does ` +
    `not fit; retrying with ${wider.kind}`;
  ctx.logger.info(reason, { file: file.name });
  return new IngestFailure({ ...failure, retry: { reason } });
}

/** Adds the column's name from the header to a database error that gives only its number. */
export function nameColumn(error: IngestError, header: readonly string[]): IngestError {
  // The watcher's own errors name their columns already.
  if (typeof error.column !== 'number' || !error.code.startsWith('DB_')) return error;
  const name = header[error.column - 1];
  return name === undefined ? error : { ...error, message: `${error.message.replace(/\)$/, '')} "${name}")` };
}
