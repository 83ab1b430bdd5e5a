/**
 * The fallback: decode the file with hyparquet one row group at a time and stream it as CSV text
 * for `COPY ... FROM STDIN WITH (FORMAT csv)`, for databases that cannot read the file themselves.
 * Memory is bounded by one decoded row group plus one batch of text.
 *
 * Values are written in the one text form per type of plugins/shared/csv-text.ts (quoting, NULL,
 * dates, times, timestamps, bytes, decimals); lists, maps and structs are JSON text.
 */
import { Buffer } from 'node:buffer';
import type { AsyncBuffer, FileMetaData, SchemaElement } from 'hyparquet';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile } from '../../src/types.ts';
import { type ColumnPages, decoderMessage, decodeRows, openGroup, yieldToEventLoop } from './decode.ts';
import type { ParquetColumn, TimeUnit, ValueCodec } from './column.ts';
import {
  formatDate,
  formatDecimal as decimalText,
  formatFloat,
  formatTimeOfDay,
  formatTimestamp,
  hexBytes,
  quoteCsv,
} from '../shared/csv-text.ts';

export { formatDate };

/** Text handed to COPY at a time: big enough that per-chunk overhead vanishes, small enough to not matter. */
export const BATCH_CHARS = 1 << 20;

const utf8 = new TextDecoder('utf-8');

// ---------------------------------------------------------------------------------------------
// Dates and times
// ---------------------------------------------------------------------------------------------

/** A TIME value (number for MILLIS, bigint for MICROS/NANOS) → `HH:MM:SS[.ffffff]`. */
export function formatTime(value: number | bigint, unit: TimeUnit): string {
  const micros = unit === 'MILLIS' ? Number(value) * 1000 : unit === 'MICROS' ? Number(value) : Number(BigInt(value) / 1000n);
  return formatTimeOfDay(micros);
}

// ---------------------------------------------------------------------------------------------
// Values → CSV fields
// ---------------------------------------------------------------------------------------------

/** A big-endian two's complement integer (Parquet's DECIMAL in bytes). */
function bytesToBigInt(bytes: Uint8Array): bigint {
  if (bytes.length === 0) return 0n;
  if (bytes.length <= 6) {
    // Up to 48 bits fit a double exactly: skip BigInt arithmetic for the common widths.
    let value = 0;
    for (const byte of bytes) value = value * 256 + byte;
    if (bytes[0]! >= 0x80) value -= 2 ** (bytes.length * 8);
    return BigInt(value);
  }
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  if (bytes[0]! >= 0x80) value -= 1n << BigInt(bytes.length * 8);
  return value;
}

const JULIAN_EPOCH_DAY = 2440588n;
const MICROS_PER_DAY = 86_400_000_000n;
const NANOS_LIMIT = 1n << 63n;

/**
 * An INT96 timestamp (its 12 bytes: nanoseconds of the day, then the Julian day, little-endian)
 * as timestamp text, the way Spark, Arrow C++ and DuckDB read it: Julian day (unsigned) less the
 * epoch's, plus the nanoseconds cut to microseconds. Nanoseconds of 2^63 or more are refused:
 * readers disagree on them (signed in Arrow C++ and DuckDB, unsigned in hyperd), and no writer
 * puts more than a day's there.
 */
export function int96Text(bytes: Uint8Array): string {
  if (bytes.length !== 12) throw new RangeError(`an INT96 value of ${bytes.length} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, 12);
  const nanos = view.getBigUint64(0, true);
  if (nanos >= NANOS_LIMIT)
    throw new Int96OutOfRange(
      `an INT96 timestamp holds ${nanos} nanoseconds of the day, which readers disagree on (a day has 86400000000000)`,
    );
  const days = BigInt(view.getUint32(8, true)) - JULIAN_EPOCH_DAY;
  return formatTimestamp(days * MICROS_PER_DAY + nanos / 1000n, false);
}

/** An INT96 value no reading agrees on (see `int96Text`). */
export class Int96OutOfRange extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = 'Int96OutOfRange';
  }
}

/** The unscaled integer of a DECIMAL and its scale → exact decimal text (`-0.05`). */
export function formatDecimal(unscaled: number | bigint | Uint8Array, scale: number): string {
  return decimalText(unscaled instanceof Uint8Array ? bytesToBigInt(unscaled) : BigInt(unscaled), scale);
}

/**
 * A nested value as JSON text. Unlike `JSON.stringify`, bigints stay numbers (without losing
 * digits), bytes become base64 strings, and a non-finite float becomes `null`.
 */
export function toJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      return 'null';
  }
  if (value instanceof Uint8Array) return JSON.stringify(Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64'));
  if (value instanceof Date) return JSON.stringify(Number.isNaN(value.getTime()) ? null : value.toISOString());
  if (Array.isArray(value) || ArrayBuffer.isView(value)) {
    const list = value as ArrayLike<unknown>;
    const items: string[] = [];
    for (let i = 0; i < list.length; i++) items.push(toJson(list[i]));
    return `[${items.join(',')}]`;
  }
  const fields: string[] = [];
  for (const [key, item] of Object.entries(value)) fields.push(`${JSON.stringify(key)}:${toJson(item)}`);
  return `{${fields.join(',')}}`;
}

type Encoder = (value: unknown) => string;

/** One function per column, chosen once: the per-value work is a null check and a format. */
export function encoderFor(codec: ValueCodec): Encoder {
  switch (codec.kind) {
    case 'plain':
      return (v) => (v === null || v === undefined ? '' : String(v));
    case 'uint32':
      return (v) => (v === null || v === undefined ? '' : String(BigInt.asUintN(32, BigInt(v as number | bigint))));
    case 'float':
      return (v) => (v === null || v === undefined ? '' : formatFloat(Number(v)));
    case 'string': {
      const { suffix } = codec;
      if (suffix === undefined) return (v) => (v === null || v === undefined ? '' : quoteCsv(String(v)));
      // The zone goes before a trailing ` BC`: `0044-03-15 12:00:00.000000+00 BC`.
      return (v) => {
        if (v === null || v === undefined) return '';
        const text = String(v);
        return text.endsWith(' BC') ? `${text.slice(0, -3)}${suffix} BC` : `${text}${suffix}`;
      };
    }
    case 'utf8':
      return (v) => (v === null || v === undefined ? '' : quoteCsv(v instanceof Uint8Array ? utf8.decode(v) : String(v)));
    case 'bytes':
      return (v) => (v === null || v === undefined ? '' : v instanceof Uint8Array ? hexBytes(v) : quoteCsv(String(v)));
    case 'decimal': {
      const { scale } = codec;
      return (v) => (v === null || v === undefined ? '' : formatDecimal(v as number | bigint | Uint8Array, scale));
    }
    case 'time': {
      const { unit } = codec;
      return (v) => (v === null || v === undefined ? '' : formatTime(v as number | bigint, unit));
    }
    case 'int96':
      return (v) => (v === null || v === undefined ? '' : int96Text(v as Uint8Array));
    case 'nested':
      return (v) => (v === null || v === undefined ? '' : quoteCsv(toJson(v)));
  }
}

// ---------------------------------------------------------------------------------------------
// Row groups → CSV batches
// ---------------------------------------------------------------------------------------------

/**
 * The footer as hyparquet should read it. `raw`: the DECIMAL annotation taken off, so hyparquet
 * hands over the unscaled integers (it would otherwise turn them into floats and lose digits).
 * `asInt64`: unsigned 32-bit columns stored only with DELTA_BINARY_PACKED, read as INT64: the
 * spec wraps INT32 delta arithmetic modulo 2^32 and some writers (DuckDB) store a first value
 * above 2^31 - 1 unwrapped, which hyparquet's 32-bit reader (and hyperd's) misreads; its 64-bit
 * reader takes it, and the codec wraps the result (see `uint32`).
 */
export function readableFooter(
  metadata: FileMetaData,
  raw: ReadonlySet<SchemaElement>,
  asInt64: ReadonlySet<SchemaElement>,
  int96: ReadonlySet<SchemaElement> = new Set(),
): FileMetaData {
  if (raw.size === 0 && asInt64.size === 0 && int96.size === 0) return metadata;
  // The decoder takes the physical type from each column chunk, not from the schema.
  const int64Names = new Set([...asInt64].map((e) => e.name));
  const int96Names = new Set([...int96].map((e) => e.name));
  return {
    ...metadata,
    schema: metadata.schema.map((element) => {
      if (int96.has(element)) return { ...element, type: 'FIXED_LEN_BYTE_ARRAY', type_length: 12 };
      if (!raw.has(element) && !asInt64.has(element)) return element;
      const { converted_type: _converted, logical_type: _logical, ...rest } = element;
      return asInt64.has(element) ? { ...rest, type: 'INT64' } : rest;
    }),
    row_groups: metadata.row_groups.map((group) => ({
      ...group,
      columns: group.columns.map((chunk) => {
        const meta = chunk.meta_data;
        if (meta && int96Names.has(meta.path_in_schema[0]!))
          return { ...chunk, meta_data: { ...meta, type: 'FIXED_LEN_BYTE_ARRAY' as const } };
        return meta && int64Names.has(meta.path_in_schema[0]!) ? { ...chunk, meta_data: { ...meta, type: 'INT64' as const } } : chunk;
      }),
    })),
  };
}

export interface CsvSource {
  readonly file: ClaimedFile;
  readonly source: AsyncBuffer;
  /** The footer as hyparquet should read it (see `readableFooter`). */
  readonly metadata: FileMetaData;
  readonly columns: readonly ParquetColumn[];
  /** Counts the rows produced, for the caller to compare with what COPY reports. */
  readonly counter: { rows: number };
}

function corrupt(file: ClaimedFile, group: number, error: unknown): IngestFailure {
  const message = decoderMessage(error, 'a value');
  return new IngestFailure(
    ingestError(
      'data',
      'PARQUET_CORRUPT',
      `${file.name}: row group ${group} cannot be decoded: ${message}`,
      'The file is damaged; write it again from its source, then replay it.',
      {
        file: file.name,
        cause: error,
      },
    ),
  );
}

function outOfRange(file: ClaimedFile, column: string, row: number, error: Int96OutOfRange): IngestFailure {
  return new IngestFailure(
    ingestError(
      'data',
      'PARQUET_VALUE_OUT_OF_RANGE',
      `${file.name}: column "${column}", row ${row + 1}: ${error.message}`,
      'The value is not a timestamp any reader agrees on: write it again from its source (as a TIMESTAMP column, not ' +
        'INT96), then replay the file.',
      {
        file: file.name,
        column,
        line: row + 1,
        cause: error,
      },
    ),
  );
}

/** Where a column's values are read from: the decoded pages of one row group, in order. */
interface Cursor {
  readonly pages: ColumnPages;
  page: number;
  values: ArrayLike<unknown>;
  index: number;
}

function nextValue(cursor: Cursor): unknown {
  while (cursor.index === cursor.values.length) {
    cursor.values = cursor.pages[++cursor.page]!;
    cursor.index = 0;
  }
  return cursor.values[cursor.index++];
}

/** CSV text of every row, in batches of about `batchChars`, decoding one row group at a time. */
export async function* csvBatches(src: CsvSource, batchChars = BATCH_CHARS): AsyncGenerator<string> {
  const encoders = src.columns.map((c) => encoderFor(c.codec));
  const width = encoders.length;
  let lines: string[] = [];
  let chars = 0;
  let rowStart = 0;
  for (const [index, group] of src.metadata.row_groups.entries()) {
    const rowEnd = rowStart + Number(group.num_rows);
    if (rowEnd === rowStart) continue;
    const { bytes: groupBytes, window } = await openGroup(src, index);
    for (let windowStart = rowStart; windowStart < rowEnd; windowStart += window) {
      const windowEnd = Math.min(windowStart + window, rowEnd);
      const cursors = (await decodeRows(src, groupBytes, index, windowStart, windowEnd)).map(
        (pages): Cursor => ({ pages, page: 0, values: pages[0] ?? [], index: 0 }),
      );
      for (let row = windowStart; row < windowEnd; row++) {
        let line: string;
        let at = 0;
        try {
          line = encoders[0]!(nextValue(cursors[0]!));
          for (at = 1; at < width; at++) line += `,${encoders[at]!(nextValue(cursors[at]!))}`;
        } catch (error) {
          if (error instanceof Int96OutOfRange) throw outOfRange(src.file, src.columns[at]!.name, row, error);
          // A value of a shape its column type cannot have (e.g. a fraction in an INT64 decimal).
          throw corrupt(src.file, index, error);
        }
        lines.push(line);
        chars += line.length + 1;
        if (chars >= batchChars) {
          // One flat string per batch (joining beats growing a rope line by line).
          lines.push('');
          yield lines.join('\n');
          lines = [];
          chars = 0;
          // COPY's socket usually takes a batch at once (no macrotask in between): let timers and
          // other files' work run between batches.
          await yieldToEventLoop();
        }
      }
    }
    src.counter.rows += rowEnd - rowStart;
    rowStart = rowEnd;
  }
  if (lines.length > 0) {
    lines.push('');
    yield lines.join('\n');
  }
}
