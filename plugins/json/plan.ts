/**
 * How a file's records go into the COPY: the columns of an existing table (fitted to the sampled
 * keys) or of a table created from the sample.
 */
import { ingestError, IngestFailure, isIngestFailure } from '../../src/errors.ts';
import { tableLabel } from '../../src/columns/sql.ts';
import { parseSqlType } from '../../src/columns/sql-types.ts';
import { givenTypes, typesGiven } from '../../src/columns/column-types.ts';
import { createTableFor, fitTable } from '../../src/columns/table-fit.ts';
import type { ClaimedFile, ColumnSpec, DbConnection, IngestContext, LogicalType, TableColumn, TableName } from '../../src/types.ts';
import { dateFailure, dateKind, dateKindOf } from '../shared/date-columns.ts';
import type { DateRule } from '../shared/date-read.ts';
import { jsonDateRules } from './dates.ts';
import { type JsonReading, unmarked } from './dialect.ts';
import { inferJsonType } from './infer.ts';
import { KeyMap } from './key-map.ts';
import { describePosition } from './record.ts';
import type { Sample } from './sample.ts';
import { widenedTypes } from './widen-retry.ts';

/** How the records of this file are written into the COPY. */
export interface Plan {
  /** The COPY column list, in order. */
  readonly columns: readonly { readonly name: string }[];
  /** A new table's inferred types, checked value by value; absent for an existing table. */
  readonly inferred?: readonly LogicalType[];
  /** Columns whose strings are written as JSON text. */
  readonly asJson: readonly boolean[];
  readonly keys: KeyMap;
  readonly sampleSize: number;
  /** Strings that are NULL (`nullValues`). */
  readonly nulls: ReadonlySet<string>;
  /** How each COPY column's date strings are read; undefined for a column that holds no date. */
  readonly dates: readonly (DateRule | undefined)[];
  /**
   * Columns of an existing table the database fills (a DEFAULT, an identity) that no sampled key
   * names: left out of the COPY so the database fills them. A later record naming one asks for a
   * fresh attempt with it in (`includeLate`).
   */
  readonly filledLater?: KeyMap;
}

/** `fileState` key: columns the database fills that an earlier attempt found named late in the file. */
const LATE = 'json.filledNamedLate';

function namedLate(ctx: IngestContext): Set<string> {
  const stored = ctx.fileState.get(LATE);
  return stored instanceof Set ? (stored as Set<string>) : new Set<string>();
}

/** A record past the sample names column `column`, left to the database: retry with it in the COPY. */
export function includeLate(ctx: IngestContext, file: ClaimedFile, column: string, line: number): IngestFailure {
  const late = namedLate(ctx);
  late.add(column);
  ctx.fileState.set(LATE, late);
  const reason =
    `line ${line} names column "${column}", which the first records left to the database's default; retrying with it loaded ` +
    `from the file`;
  ctx.logger.info(reason, { file: file.name });
  return new IngestFailure(
    ingestError('schema', 'JSON_KEY_LATE', `${file.name}: ${reason}`, 'The file is retried at once.', {
      file: file.name,
      column,
      line,
      retry: { reason },
    }),
  );
}

/** Infers column `name`'s type from the sample, its NULL markers taken for NULL. */
function inferFromSample(file: ClaimedFile, sample: Sample, reading: JsonReading, name: string): LogicalType {
  const values = sample.records.map((r) => unmarked(r.value[name], reading.nulls));
  return inferJsonType(values, reading.dates, (index, problem) => {
    throw dateFailure(file, name, sample.records[index]!.line, problem);
  });
}

/**
 * An existing table (fitted to the sampled keys, see table-fit.ts): every column but the source
 * columns is in the COPY, so a key first seen late still finds its column; but the columns the
 * database fills are in it only when a key names them (else they would be loaded NULL).
 */
export async function planExisting(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  found: readonly TableColumn[],
  sample: Sample,
  ctx: IngestContext,
  reading: JsonReading,
): Promise<Plan> {
  const inferAdded = (names: readonly string[]) =>
    givenTypes(
      names.map((name) => ({ name, type: inferFromSample(file, sample, reading, name) })),
      ctx.schema,
    );
  let existing: TableColumn[];
  try {
    existing = (await fitTable(conn, table, found, sample.keys, inferAdded, file, ctx)).columns;
  } catch (failure) {
    if (!isIngestFailure(failure)) throw failure;
    const error = failure.error;
    const seen = typeof error.column === 'string' ? sample.firstSeen.get(error.column) : undefined;
    throw new IngestFailure(seen ? { ...error, message: `${error.message} (first in ${describePosition(seen)})`, line: seen.line } : error);
  }
  const named = new KeyMap(existing);
  const used = new Set(sample.keys.map((key) => named.lookup(key)));
  const late = namedLate(ctx);
  const columns = existing.filter((c, i) => c.filledByDatabase !== true || used.has(i) || late.has(c.name));
  const omitted = existing.filter((c) => !columns.includes(c));
  const keys = new KeyMap(columns);
  for (const key of sample.keys) keys.lookup(key);
  const kinds = columns.map((c) => dateKind(c.sqlType));
  return {
    columns,
    asJson: columns.map((c) => parseSqlType(c.sqlType).family === 'json'),
    keys,
    sampleSize: sample.records.length,
    nulls: reading.nulls,
    dates: jsonDateRules(columns, kinds, keys, sample, reading, file),
    ...(omitted.length > 0 ? { filledLater: new KeyMap(omitted) } : {}),
  };
}

export async function planNew(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  sample: Sample,
  ctx: IngestContext,
  reading: JsonReading,
): Promise<Plan> {
  const first = sample.records[0]!;
  if (sample.keys.length === 0) {
    throw new IngestFailure(
      ingestError(
        'data',
        'JSON_NO_COLUMNS',
        `${file.name}: the first ${sample.records.length} record(s) have no keys, so there are no columns to create ` +
          `table ${tableLabel(table)} with`,
        'Records must be objects of column names to values; fix the file, then replay it.',
        {
          file: file.name,
          line: first.line,
        },
      ),
    );
  }
  const empty = sample.firstSeen.get('');
  if (empty) {
    throw new IngestFailure(
      ingestError(
        'data',
        'EMPTY_COLUMN_NAME',
        `${file.name}: ${describePosition(empty)} has an empty key, which cannot name a column`,
        'Give every key a name, then replay the file.',
        {
          file: file.name,
          line: empty.line,
          column: '',
        },
      ),
    );
  }
  const widened = widenedTypes(ctx);
  const inferred: ColumnSpec[] = sample.keys.map((name) => ({
    name,
    type: widened.get(name) ?? inferFromSample(file, sample, reading, name),
  }));
  const columns = givenTypes(inferred, ctx.schema);
  // Before the table is made: a sample whose dates cannot be read without a guess makes none.
  const keys = new KeyMap(columns);
  const dates = jsonDateRules(
    columns,
    columns.map((c) => dateKindOf(c.type)),
    keys,
    sample,
    reading,
    file,
  );
  await createTableFor(conn, table, columns, file, ctx);
  // Types the user gave: values are written for the table as made, as into any existing table.
  const made = typesGiven(ctx.schema) ? await conn.describeTable(table) : null;
  if (made) return planExisting(conn, file, table, made, sample, ctx, reading);
  ctx.logger.info('created table from the first records', {
    file: file.name,
    table: tableLabel(table),
    records: sample.records.length,
    columns: Object.fromEntries(columns.map((c) => [c.name, c.type.kind])),
  });
  return {
    columns,
    inferred: columns.map((c) => c.type),
    asJson: columns.map((c) => c.type.kind === 'json'),
    keys,
    sampleSize: sample.records.length,
    nulls: reading.nulls,
    dates,
  };
}
