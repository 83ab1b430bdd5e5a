/**
 * JSON ingester: an array of objects (`.json`) or JSON lines (`.json`, `.jsonl`, `.ndjson`).
 * The file is streamed once: each 1 MiB read chunk is split into records, which are parsed, turned
 * into CSV text and fed to the database's COPY parser in ~1 MiB chunks, so a file of any size costs
 * a few chunks of memory (and the head of the file kept as the type sample). The
 * first records decide the columns and types when the table does not exist yet; a later value that
 * does not fit its inferred type makes the plugin ask for a fresh attempt with a wider type.
 */
import { ResultAsync } from 'neverthrow';
import { fromDbError, ingestError, IngestFailure, isIngestFailure } from '../../src/errors.ts';
import { defineIngester } from '../../src/plugins.ts';
import { columnList } from '../../src/schema.ts';
import { sourceValues, withSourceFields } from '../../src/source-columns.ts';
import { createTableFor, fitTable } from '../../src/table-fit.ts';
import { qualifiedName, tableLabel } from '../../src/sql.ts';
import { parseSqlType } from '../../src/sql-types.ts';
import type { AppendResult, ClaimedFile, ColumnSpec, DbConnection, IngestContext, IngestError, IngesterPlugin, LogicalType, TableColumn, TableName } from '../../src/types.ts';
import { widen } from '../shared/infer-text.ts';
import { type JsonSkip, jsonSkip } from './bad-rows.ts';
import { encodeField } from './csv.ts';
import { inferJsonType, widenFor } from './infer.ts';
import { describePosition, type JsonRecord, readBatches, type RecordPosition } from './records.ts';

/** How many leading records decide a new table's columns and types (whichever limit comes first). */
const SAMPLE_RECORDS = 1000;
const SAMPLE_CHARS = 256 * 1024;
/** CSV text per chunk sent to COPY: large enough that the per-write overhead is negligible, small enough to keep memory low. */
const BATCH_CHARS = 1 << 18;
/** `fileState` key: column types widened after an earlier attempt found a value they could not hold. */
const WIDENED = 'json.widened';

interface Sample {
  readonly records: JsonRecord[];
  /** Records read past the sample (the rest of its last batch). */
  rest: JsonRecord[];
  /** Every key of the sample, in order of first appearance. */
  readonly keys: string[];
  readonly firstSeen: Map<string, RecordPosition>;
}

async function takeSample(batches: AsyncIterator<JsonRecord[]>): Promise<Sample> {
  const sample: Sample = { records: [], rest: [], keys: [], firstSeen: new Map() };
  let chars = 0;
  while (sample.records.length < SAMPLE_RECORDS && chars < SAMPLE_CHARS) {
    const next = await batches.next();
    if (next.done) break;
    const batch = next.value;
    let i = 0;
    for (; i < batch.length && sample.records.length < SAMPLE_RECORDS && chars < SAMPLE_CHARS; i++) {
      const record = batch[i]!;
      sample.records.push(record);
      chars += record.chars;
      for (const key of Object.keys(record.value)) {
        if (!sample.firstSeen.has(key)) {
          sample.firstSeen.set(key, record);
          sample.keys.push(key);
        }
      }
    }
    // The sample is full once a batch is only partly taken, so this happens at most once.
    if (i < batch.length) sample.rest = batch.slice(i);
  }
  return sample;
}

/** Maps record keys to COPY columns by the rule of `matchColumns`: exact name, else unique case-insensitive. */
class KeyMap {
  readonly #index = new Map<string, number>();
  readonly #byName = new Map<string, number>();
  readonly #byLower = new Map<string, number[]>();
  /** For each column, the key that fills it: two keys filling one column is ambiguous. */
  readonly #keyOf: (string | undefined)[];

  constructor(readonly columns: readonly { readonly name: string }[]) {
    this.#keyOf = columns.map(() => undefined);
    for (const [i, c] of columns.entries()) {
      this.#byName.set(c.name, i);
      const lower = c.name.toLowerCase();
      this.#byLower.set(lower, [...(this.#byLower.get(lower) ?? []), i]);
    }
  }

  /** The column index for `key`; `-1` when no column takes it; `-2` when its column is another key's. */
  lookup(key: string): number {
    const known = this.#index.get(key);
    if (known !== undefined) return known;
    const index = this.#resolve(key);
    if (index === -1) return -1;
    if (this.#keyOf[index] !== undefined) return -2;
    this.#keyOf[index] = key;
    this.#index.set(key, index);
    return index;
  }

  /** The key that already fills the column `key` would fill. */
  rival(key: string): string | undefined {
    const index = this.#resolve(key);
    return index === -1 ? undefined : this.#keyOf[index];
  }

  #resolve(key: string): number {
    const candidates = this.#byLower.get(key.toLowerCase()) ?? [];
    return this.#byName.get(key) ?? (candidates.length === 1 ? candidates[0]! : -1);
  }
}

/** How the records of this file are written into the COPY. */
interface Plan {
  /** The COPY column list, in order. */
  readonly columns: readonly { readonly name: string }[];
  /** A new table's inferred types, checked value by value; absent for an existing table. */
  readonly inferred?: readonly LogicalType[];
  /** Columns whose strings are written as JSON text. */
  readonly asJson: readonly boolean[];
  readonly keys: KeyMap;
  readonly sampleSize: number;
}

function schemaFailure(code: string, message: string, hint: string, extra: Partial<IngestError>): IngestFailure {
  return new IngestFailure(ingestError('schema', code, message, hint, extra));
}

/**
 * An existing table (fitted to the sampled keys, see table-fit.ts): every column but the source
 * columns is in the COPY, so a key first seen late still finds its column.
 */
async function planExisting(conn: DbConnection, file: ClaimedFile, table: TableName, found: readonly TableColumn[], sample: Sample, ctx: IngestContext): Promise<Plan> {
  const inferAdded = (names: readonly string[]) => names.map((name) => ({ name, type: inferJsonType(sample.records.map((r) => r.value[name])) }));
  let existing: TableColumn[];
  try {
    existing = (await fitTable(conn, table, found, sample.keys, inferAdded, file, ctx)).columns;
  } catch (failure) {
    if (!isIngestFailure(failure)) throw failure;
    const error = failure.error;
    const seen = typeof error.column === 'string' ? sample.firstSeen.get(error.column) : undefined;
    throw new IngestFailure(seen ? { ...error, message: `${error.message} (first in ${describePosition(seen)})`, line: seen.line } : error);
  }
  const keys = new KeyMap(existing);
  for (const key of sample.keys) keys.lookup(key);
  return {
    columns: existing,
    asJson: existing.map((c) => parseSqlType(c.sqlType).family === 'json'),
    keys,
    sampleSize: sample.records.length,
  };
}

function widenedTypes(ctx: IngestContext): Map<string, LogicalType> {
  const stored = ctx.fileState.get(WIDENED);
  return stored instanceof Map ? (stored as Map<string, LogicalType>) : new Map<string, LogicalType>();
}

async function planNew(conn: DbConnection, file: ClaimedFile, table: TableName, sample: Sample, ctx: IngestContext): Promise<Plan> {
  const first = sample.records[0]!;
  if (sample.keys.length === 0) {
    throw new IngestFailure(
      ingestError('data', 'JSON_NO_COLUMNS', `${file.name}: the first ${sample.records.length} record(s) have no keys, so there are no columns to create table ${tableLabel(table)} with`, 'Records must be objects of column names to values; fix the file, then replay it.', {
        file: file.name,
        line: first.line,
      }),
    );
  }
  const empty = sample.firstSeen.get('');
  if (empty) {
    throw new IngestFailure(
      ingestError('data', 'EMPTY_COLUMN_NAME', `${file.name}: ${describePosition(empty)} has an empty key, which cannot name a column`, 'Give every key a name, then replay the file.', {
        file: file.name,
        line: empty.line,
        column: '',
      }),
    );
  }
  const widened = widenedTypes(ctx);
  const columns: ColumnSpec[] = sample.keys.map((name) => ({
    name,
    type: widened.get(name) ?? inferJsonType(sample.records.map((r) => r.value[name])),
  }));
  await createTableFor(conn, table, columns, file, ctx);
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
    keys: new KeyMap(columns),
    sampleSize: sample.records.length,
  };
}

function describeValue(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
}

/** Turns records into CSV rows for one attempt; throws `IngestFailure` for keys or values that do not fit. */
class RowEncoder {
  readonly #values: unknown[];

  constructor(
    private readonly plan: Plan,
    private readonly file: ClaimedFile,
    private readonly table: TableName,
    private readonly ctx: IngestContext,
  ) {
    this.#values = plan.columns.map(() => undefined);
  }

  encode(record: JsonRecord): string {
    const { plan } = this;
    const values = this.#values;
    values.fill(undefined);
    const fields = record.value;
    for (const key in fields) {
      const index = plan.keys.lookup(key);
      if (index < 0) throw this.#keyFailure(record, key, index);
      values[index] = fields[key];
    }
    let row = '';
    for (let i = 0; i < values.length; i++) {
      if (i > 0) row += ',';
      const value = values[i];
      if (value === undefined || value === null) continue;
      if (plan.inferred) {
        const wider = widenFor(plan.inferred[i]!, value);
        if (wider) throw this.#widen(record, i, value, wider);
      }
      row += encodeField(value, plan.asJson[i]!);
    }
    return row + '\n';
  }

  #keyFailure(record: JsonRecord, key: string, reason: number): IngestFailure {
    const { file, table, plan } = this;
    const where = describePosition(record);
    const extra = { file: file.name, line: record.line, column: key };
    if (reason === -2) {
      const other = plan.keys.rival(key);
      return schemaFailure(
        'DUPLICATE_COLUMN',
        `${file.name}: key "${key}" at ${where} fills the same column of table ${tableLabel(table)} as key "${other ?? '?'}"`,
        'Keys that differ only in case map to one column; use one spelling throughout the file, then replay it.',
        extra,
      );
    }
    const names = plan.columns.map((c) => c.name).join(', ');
    return plan.inferred
      ? schemaFailure(
          'UNKNOWN_COLUMN',
          `${file.name}: key "${key}" at ${where} is not a column of table ${tableLabel(table)}, which was created from the first ${plan.sampleSize} record(s) (its columns: ${names})`,
          `Add column "${key}" to the table (ALTER TABLE ... ADD COLUMN), or make sure one of the first ${plan.sampleSize} records has the key, then replay the file.`,
          extra,
        )
      : schemaFailure(
          'UNKNOWN_COLUMN',
          `${file.name}: key "${key}" at ${where} is not a column of table ${tableLabel(table)} (its columns: ${names})`,
          `Drop key "${key}" from the records, or add it to the table (ALTER TABLE ... ADD COLUMN), then replay the file.`,
          extra,
        );
  }

  /** A value past the sample needs a wider type: remember it, and ask for a fresh attempt. */
  #widen(record: JsonRecord, index: number, value: unknown, wider: LogicalType): IngestFailure {
    const { file, plan, ctx } = this;
    const column = plan.columns[index]!.name;
    const type = plan.inferred![index]!;
    const reason = `column "${column}" was inferred as ${type.kind} from the first ${plan.sampleSize} record(s), but ${describePosition(record)} holds ${describeValue(value)}; retrying with ${wider.kind}`;
    return retryWider(ctx, file, column, wider, reason, record.line);
  }
}

/** Records the wider type for the next attempt (the table is created again with it). */
function retryWider(ctx: IngestContext, file: ClaimedFile, column: string, wider: LogicalType, reason: string, line?: number): IngestFailure {
  const widened = widenedTypes(ctx);
  widened.set(column, wider);
  ctx.fileState.set(WIDENED, widened);
  ctx.logger.info(reason, { file: file.name });
  return new IngestFailure(
    ingestError(
      'schema',
      'JSON_TYPE_CHANGED',
      `${file.name}: ${reason}`,
      'The file is retried at once with the wider type; if it still fails, create the table with the column types you want, then replay the file.',
      { file: file.name, column, retry: { reason }, ...(line === undefined ? {} : { line }) },
    ),
  );
}

/** The CSV text of all records, the sample's first, in ~256 KiB chunks. */
async function* csvChunks(sample: Sample, batches: AsyncIterator<JsonRecord[]>, encoder: RowEncoder, stop: { stopped: boolean }, skip?: JsonSkip): AsyncGenerator<string> {
  let rows: string[] = [];
  let size = 0;
  let batch: readonly JsonRecord[] | undefined = sample.records.concat(sample.rest);
  // `stop`: once the COPY has failed, reading on would only waste the rest of the file.
  while (batch && !stop.stopped) {
    await skip?.drain();
    for (const record of batch) {
      const bad = skip?.check(record);
      if (bad !== undefined) {
        await skip!.reject(record, bad);
        continue;
      }
      const row = encoder.encode(record);
      rows.push(row);
      size += row.length;
      if (size >= BATCH_CHARS) {
        yield rows.join('');
        rows = [];
        size = 0;
      }
    }
    const next = await batches.next();
    batch = next.done ? undefined : next.value;
  }
  if (!stop.stopped) await skip?.drain();
  if (rows.length > 0 && !stop.stopped) yield rows.join('');
}

/** Finds the `row`-th record (1-based) again: the database reports the COPY row, the operator needs the file's line. */
async function locate(file: ClaimedFile, row: number): Promise<RecordPosition | undefined> {
  let seen = 0;
  try {
    for await (const batch of readBatches(file)) {
      if (seen + batch.length >= row) {
        const record = batch[row - seen - 1]!;
        return { line: record.line, ...(record.index === undefined ? {} : { index: record.index }) };
      }
      seen += batch.length;
    }
  } catch {
    // The file went bad past the failing row; that row's position is all we wanted.
  }
  return undefined;
}

function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
}

/**
 * Turns a failed COPY into an error naming the record and column. Hyper reports the row of the
 * CSV stream (`file: 'stdin' line:3 column:2`), and with `HEADER false` row N is the Nth record.
 */
async function explainCopyError(error: unknown, file: ClaimedFile, plan: Plan, sql: string, ctx: IngestContext, skip?: JsonSkip): Promise<unknown> {
  if (isIngestFailure(error)) return error;
  const failure = fromDbError(error, file.name, sql);
  if (failure.kind === 'transient' || !failure.sqlState) return new IngestFailure(failure);
  const message = messageOf(error);
  // A NOT NULL violation names its row only in the message: "(line: 2, column 0)".
  const rowInMessage = /line:\s*(\d+)/.exec(message);
  const row = failure.line ?? (rowInMessage ? Number(rowInMessage[1]) : undefined);
  const columnIndex = typeof failure.column === 'number' ? failure.column - 1 : -1;
  const column = plan.columns[columnIndex]?.name ?? /column "([^"]+)"/.exec(message)?.[1];
  const position = row === undefined ? undefined : await locate(file, row);

  const type = plan.inferred?.[columnIndex];
  if (type && column !== undefined && failure.sqlState.startsWith('22') && type.kind !== 'text' && type.kind !== 'json') {
    // A string the sample took for a date (or similar) that the database cannot read as one.
    const wider = widen(type);
    const where = position ? describePosition(position) : `COPY row ${row ?? '?'}`;
    return retryWider(ctx, file, column, wider, `column "${column}" was inferred as ${type.kind} from the first ${plan.sampleSize} record(s), but ${where} does not fit (${message}); retrying with ${wider.kind}`, position?.line);
  }

  if (skip && !plan.inferred) {
    const again = await skip.refuse(file, failure, row, message, column);
    if (again) return again;
  }

  const where = position ? describePosition(position) : row === undefined ? undefined : `record ${row}`;
  const subject = [where, column === undefined ? undefined : `column "${column}"`].filter((part) => part !== undefined).join(', ');
  const { line: _row, column: _column, ...rest } = failure;
  return new IngestFailure({
    ...rest,
    message: `${file.name}: ${subject ? `${subject}: ` : ''}${message}`,
    ...(position ? { line: position.line } : {}),
    ...(column === undefined ? {} : { column }),
  });
}

async function append(conn: DbConnection, file: ClaimedFile, table: TableName, ctx: IngestContext): Promise<AppendResult> {
  if (file.size === 0) {
    throw new IngestFailure(
      ingestError('data', 'EMPTY_FILE', `${file.name} is empty (0 bytes)`, 'A JSON file needs an array of objects or JSON lines; write the file completely before creating its .ready, then replay it.', {
        file: file.name,
      }),
    );
  }
  const existing = await conn.describeTable(table);
  let plan: Plan | undefined;
  const skip = jsonSkip(ctx, existing, () => (plan ? (key) => plan!.keys.lookup(key) : undefined));
  const batches = readBatches(file, skip?.unreadable);
  try {
    const sample = await takeSample(batches);
    if (sample.records.length === 0) {
      await skip?.drain();
      // Only an empty array gets here; it says nothing about columns, so no table is created.
      ctx.logger.info('empty array: nothing to append', { file: file.name, table: tableLabel(table) });
      return { rows: 0 };
    }
    if (!existing && !ctx.schema.createTable) {
      throw new IngestFailure(
        ingestError('schema', 'TABLE_MISSING', `table ${tableLabel(table)} does not exist and creating tables is disabled`, 'Create the table, or enable table creation, then replay the file.', {
          file: file.name,
        }),
      );
    }
    plan = existing ? await planExisting(conn, file, table, existing, sample, ctx) : await planNew(conn, file, table, sample, ctx);
    const sources = sourceValues(file, ctx);
    const sql = `COPY ${qualifiedName(table)} (${columnList([...plan.columns, ...sources])}) FROM STDIN WITH (FORMAT csv, HEADER false)`;
    const stop = { stopped: false };
    try {
      const chunks = csvChunks(sample, batches, new RowEncoder(plan, file, table, ctx), stop, skip);
      return { rows: await conn.copyFrom(sql, sources.length > 0 ? withSourceFields(chunks, sources) : chunks) };
    } catch (error) {
      stop.stopped = true;
      throw await explainCopyError(error, file, plan, sql, ctx, skip);
    }
  } finally {
    await batches.return(undefined);
  }
}

/** JSON arrays of objects (`.json`) and JSON lines (`.json`, `.jsonl`, `.ndjson`). */
export const jsonIngester: IngesterPlugin = defineIngester({
  name: 'json',
  extensions: ['.json', '.jsonl', '.ndjson'],
  append(conn, file, table, ctx) {
    return ResultAsync.fromPromise(append(conn, file, table, ctx), (error) => fromDbError(error, file.name));
  },
});

export default jsonIngester;
