/**
 * Records turned into the CSV text the database's COPY parser reads, checking each key and value
 * against the plan on the way.
 */
import { ingestError, IngestFailure } from '../../src/errors.ts';
import { tableLabel } from '../../src/columns/sql.ts';
import type { ClaimedFile, IngestContext, IngestError, LogicalType, TableName } from '../../src/types.ts';
import { dateFailure } from '../shared/date-columns.ts';
import { type DateRule, isDateProblem, readDate } from '../shared/date-read.ts';
import type { JsonSkip } from './bad-rows.ts';
import { encodeField } from './csv.ts';
import { isLosslessNumber } from './exact.ts';
import { widenFor } from './infer.ts';
import { includeLate, type Plan } from './plan.ts';
import { describePosition, type JsonRecord } from './record.ts';
import type { Sample } from './sample.ts';
import { retryWider } from './widen-retry.ts';

/** CSV text per chunk sent to COPY: large enough that the per-write overhead is negligible, small enough to keep memory low. */
const BATCH_CHARS = 1 << 18;

function schemaFailure(code: string, message: string, hint: string, extra: Partial<IngestError>): IngestFailure {
  return new IngestFailure(ingestError('schema', code, message, hint, extra));
}

function describeValue(value: unknown): string {
  if (isLosslessNumber(value)) return `number ${value.value.length > 60 ? `${value.value.slice(0, 57)}...` : value.value}`;
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 60 ? `${text.slice(0, 57)}...` : text}`;
}

/** Turns records into CSV rows for one attempt; throws `IngestFailure` for keys or values that do not fit. */
export class RowEncoder {
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
      if (index < 0) {
        const late = index === -1 ? (plan.filledLater?.lookup(key) ?? -1) : -1;
        if (late >= 0) throw includeLate(this.ctx, this.file, plan.filledLater!.columns[late]!.name, record.line);
        throw this.#keyFailure(record, key, index);
      }
      values[index] = fields[key];
    }
    let row = '';
    for (let i = 0; i < values.length; i++) {
      if (i > 0) row += ',';
      let value = values[i];
      if (value === undefined || value === null) continue;
      if (typeof value === 'string' && plan.nulls.has(value)) continue;
      if (plan.inferred) {
        const wider = widenFor(plan.inferred[i]!, value);
        if (wider) throw this.#widen(record, i, value, wider);
      }
      const rule = plan.dates[i];
      if (rule && typeof value === 'string') value = this.#date(record, i, value, rule);
      row += encodeField(value, plan.asJson[i]!);
    }
    return row + '\n';
  }

  /**
   * A date string as ISO text, or the file's failure: a value against the order decided or the
   * settings given fails it; one that is no date widens a column inferred from the sample to text
   * (as any value that does not fit), and fails the file in a table that exists (with bad rows
   * skipped, the skip's check has set such a record aside before it gets here).
   */
  #date(record: JsonRecord, index: number, value: string, rule: DateRule): string {
    const read = readDate(value, rule);
    if (!isDateProblem(read)) return read;
    const column = this.plan.columns[index]!.name;
    const unreadable = read.code === 'DATE_INVALID' || read.code === 'DATE_UNREADABLE';
    if (this.plan.inferred && unreadable) throw this.#widen(record, index, value, { kind: 'text' });
    throw dateFailure(this.file, column, record.line, read);
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
          `${file.name}: key "${key}" at ${where} is not a column of table ${tableLabel(table)}, which was created from the ` +
            `first ${plan.sampleSize} record(s) (its columns: ${names})`,
          `Add column "${key}" to the table (ALTER TABLE ... ADD COLUMN), or make sure one of the first ${plan.sampleSize} ` +
            `records has the key, then replay the file.`,
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
    const reason =
      `column "${column}" was inferred as ${type.kind} from the first ${plan.sampleSize} record(s), ` +
      `but ${describePosition(record)} holds ${describeValue(value)}; retrying with ${wider.kind}`;
    return retryWider(ctx, file, column, wider, reason, record.line);
  }
}

/** The CSV text of all records, the sample's first, in ~256 KiB chunks. */
export async function* csvChunks(
  sample: Sample,
  batches: AsyncIterator<JsonRecord[]>,
  encoder: RowEncoder,
  stop: { stopped: boolean },
  skip?: JsonSkip,
): AsyncGenerator<string> {
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
