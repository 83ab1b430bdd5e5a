/**
 * Source columns: columns the watcher fills itself on every row, so a row can be traced back to
 * the file it came from (and one bad file's rows deleted). Their names are the user's; their
 * values are constants of the file (its name, its claim id) or of its transaction (the time it
 * began). Each loading path adds them its own way: a constant select expression where the
 * database reads the file itself (`INSERT ... SELECT ..., 'name' FROM external(...)`), extra
 * fields appended to each record of the CSV text streamed to `COPY ... FROM STDIN`. The partition
 * columns of `partitionColumns` (partition-columns.ts) are constants of a file too, and go the
 * same ways: every function here that is given the file includes them.
 */
import { err, ok, type Result } from 'neverthrow';
import { IngestFailure } from '../errors.ts';
import { concatBytes } from '../util/bytes.ts';
import { givenTypes } from './column-types.ts';
import { partitionValues } from './partition-columns.ts';
import { quoteLiteral } from './sql.ts';
import type { ClaimedFile, ColumnSpec, IngestContext, LogicalType, SourceColumns } from '../types.ts';

export const SOURCE_KEYS = ['file', 'claim', 'committed'] as const;
export type SourceKey = (typeof SOURCE_KEYS)[number];

const TYPES: Record<SourceKey, LogicalType> = { file: { kind: 'text' }, claim: { kind: 'text' }, committed: { kind: 'timestamptz' } };

/** One source column and this file's value for it. */
export interface SourceValue {
  readonly name: string;
  readonly type: LogicalType;
  /** The value as text (a CSV field, before quoting); null for NULL (a partition's). */
  readonly text: string | null;
}

/** The configured source columns, in a fixed order (file, claim, committed). */
export function sourceColumnSpecs(columns: SourceColumns | undefined): ColumnSpec[] {
  if (!columns) return [];
  return SOURCE_KEYS.flatMap((key) => (columns[key] ? [{ name: columns[key], type: TYPES[key] }] : []));
}

/** Whether the watcher may add constants to a file's rows (source columns, or partition columns). */
export function hasSourceColumns(ctx: IngestContext): boolean {
  return ctx.schema.partitionColumns === true || sourceColumnSpecs(ctx.schema.sourceColumns).length > 0;
}

/**
 * Whether `name` is a column the watcher fills (by the matching rule's case-insensitivity): a
 * configured source column, or, given the file, one of its partition columns.
 */
export function isSourceColumn(ctx: IngestContext, name: string, file?: ClaimedFile): boolean {
  const folded = name.toLowerCase();
  if (sourceColumnSpecs(ctx.schema.sourceColumns).some((c) => c.name.toLowerCase() === folded)) return true;
  return file !== undefined && partitionsOf(file, ctx).some((p) => p.name.toLowerCase() === folded);
}

/** The file's partition values (none without `partitionColumns`); a path that has none right fails the file. */
function partitionsOf(file: ClaimedFile, ctx: IngestContext): SourceValue[] {
  if (ctx.schema.partitionColumns !== true) return [];
  const parsed = partitionValues(file.name, ctx.schema.inMarkerFolder === true ? 1 : 0);
  if (parsed.isErr()) throw new IngestFailure(parsed.error);
  return parsed.value;
}

/**
 * The columns the watcher fills on `file`'s rows: the configured source columns, then its
 * partition columns, typed as given (`columnTypes`, `allText`) or as inferred from the value.
 */
export function fileColumnSpecs(file: ClaimedFile, ctx: IngestContext): ColumnSpec[] {
  if (ctx.schema.partitionColumns !== true) return sourceColumnSpecs(ctx.schema.sourceColumns);
  const partitions = partitionsOf(file, ctx).map((p) => ({ name: p.name, type: p.type }));
  return [...sourceColumnSpecs(ctx.schema.sourceColumns), ...givenTypes(partitions, ctx.schema)];
}

/** This file's values, one per configured source column, then one per partition column. */
export function sourceValues(file: ClaimedFile, ctx: IngestContext): SourceValue[] {
  const time = (ctx.startedAt ?? new Date()).toISOString();
  const values: Record<SourceKey, string> = { file: file.name, claim: file.claimId, committed: time };
  const columns = ctx.schema.sourceColumns ?? {};
  const sources = SOURCE_KEYS.flatMap((key) => (columns[key] ? [{ name: columns[key], type: TYPES[key], text: values[key] }] : []));
  return ctx.schema.partitionColumns === true ? [...sources, ...partitionsOf(file, ctx)] : sources;
}

/**
 * Constant select expressions for the values, e.g. `'orders.csv'` and `CAST('...' AS TIMESTAMPTZ)`;
 * a NULL goes untyped, so that it fits the column whatever its type.
 */
export function sourceSelect(values: readonly SourceValue[], sqlType: (t: LogicalType) => string): string[] {
  return values.map((v) =>
    v.text === null ? 'NULL' : v.type.kind === 'text' ? quoteLiteral(v.text) : `CAST(${quoteLiteral(v.text)} AS ${sqlType(v.type)})`,
  );
}

/** A quoted field; NULL is COPY's unquoted empty field. */
function csvField(text: string | null): string {
  return text === null ? '' : `"${text.replaceAll('"', '""')}"`;
}

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/**
 * CSV text (records as the database's COPY parser splits them: line breaks outside quoted fields)
 * with `values` appended to every record as extra fields. A header line, when there is one, gets
 * them too (COPY skips it anyway). A record's `\r\n` keeps its `\r` after the new fields. Works on
 * strings or bytes in any chunking: the quoted-or-not state carries over from chunk to chunk.
 */
export async function* withSourceFields(
  source: AsyncIterable<Uint8Array | string>,
  values: readonly SourceValue[],
  delimiter = ',',
): AsyncIterable<Uint8Array> {
  const encoder = new TextEncoder();
  const suffix = encoder.encode(values.map((v) => `${delimiter}${csvField(v.text)}`).join(''));
  const cr = new Uint8Array([CR]);
  let quoted = false;
  // The record being read has something in it (a blank line gets no fields).
  let inRecord = false;
  // The previous chunk ended on a `\r` outside quotes, held back: it goes after the suffix when a `\n` follows.
  let pendingCr = false;
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? encoder.encode(chunk) : chunk;
    if (bytes.length === 0) continue;
    const parts: Uint8Array[] = [];
    if (pendingCr) {
      if (bytes[0] === LF && inRecord) parts.push(suffix);
      parts.push(cr);
      inRecord = bytes[0] !== LF;
      pendingCr = false;
    }
    let from = 0;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (b === QUOTE) quoted = !quoted;
      if (b === LF && !quoted) {
        const end = i > 0 && bytes[i - 1] === CR ? i - 1 : i;
        parts.push(bytes.subarray(from, end));
        if (inRecord) parts.push(suffix);
        if (end < i) parts.push(cr);
        from = i;
        inRecord = false;
      } else if (b !== CR && b !== LF) inRecord = true;
    }
    let end = bytes.length;
    if (!quoted && bytes[end - 1] === CR) {
      pendingCr = true;
      end--;
    }
    parts.push(bytes.subarray(from, end));
    yield concatBytes(parts);
  }
  // A last record without a line break still gets its fields.
  if (inRecord) yield suffix;
  if (pendingCr) yield cr;
}

/**
 * Parses the CLI's `--source-column KEY=NAME` values (`file=_source_file`, `claim=_claim_id`,
 * `committed=_committed_at`) into `SourceColumns`, or says what is wrong.
 */
export function parseSourceColumns(specs: readonly string[]): Result<SourceColumns, string> {
  const columns: Partial<Record<SourceKey, string>> = {};
  for (const spec of specs) {
    const match = /^([a-z]+)=(.+)$/.exec(spec);
    const key = match?.[1];
    if (!match || !key || !(SOURCE_KEYS as readonly string[]).includes(key)) {
      return err(`${JSON.stringify(spec)} is not KEY=COLUMN with KEY one of ${SOURCE_KEYS.join(', ')} (e.g. file=_source_file)`);
    }
    columns[key as SourceKey] = match[2]!;
  }
  return checkSourceColumns(columns).map(() => columns);
}

/** Source column names must be non-empty and distinct (case-insensitively, as columns match). */
export function checkSourceColumns(columns: SourceColumns | undefined): Result<void, string> {
  const seen = new Set<string>();
  for (const key of SOURCE_KEYS) {
    const name = columns?.[key];
    if (name === undefined) continue;
    if (typeof name !== 'string' || name.trim() === '') return err(`the ${key} source column needs a name`);
    if (seen.has(name.toLowerCase())) return err(`source column name ${JSON.stringify(name)} is given twice`);
    seen.add(name.toLowerCase());
  }
  return ok(undefined);
}
