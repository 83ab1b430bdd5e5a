/**
 * The judge of the conformance suite: the rows a writer meant, read back from its own Arrow data
 * with apache-arrow, as the text the database gives for each value (`col::text`), and a
 * comparison of those rows with the table's, as multisets (order of rows aside).
 *
 * Written from the types' definitions, not from the reader under test: timestamps from their
 * unit and integer value, decimals from their two's-complement words, floats compared as numbers
 * (the database prints REAL with fewer digits than a JS number has).
 */
import { type Data, DataType, type Table, makeVector, Precision, TimeUnit } from 'apache-arrow';
import { uint16ToFloat64 } from 'apache-arrow/util/math';

type Canon = (text: string | null) => string | null;

const same: Canon = (t) => t;

function pad(n: number | bigint, width = 2): string {
  return String(n).padStart(width, '0');
}

function isoDate(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

function fraction(micros: bigint): string {
  if (micros === 0n) return '';
  return `.${pad(micros, 6)}`.replace(/0+$/, '');
}

function timestampText(micros: bigint, zone: boolean): string {
  const seconds = micros / 1_000_000n - (micros % 1_000_000n < 0n ? 1n : 0n);
  const rest = micros - seconds * 1_000_000n;
  const date = new Date(Number(seconds) * 1000).toISOString();
  return `${date.slice(0, 10)} ${date.slice(11, 19)}${fraction(rest)}${zone ? '+00' : ''}`;
}

function timeText(micros: bigint): string {
  const s = micros / 1_000_000n;
  return `${pad(s / 3600n)}:${pad((s / 60n) % 60n)}:${pad(s % 60n)}${fraction(micros % 1_000_000n)}`;
}

function toMicros(value: bigint, unit: TimeUnit): bigint {
  if (unit === TimeUnit.SECOND) return value * 1_000_000n;
  if (unit === TimeUnit.MILLISECOND) return value * 1000n;
  if (unit === TimeUnit.MICROSECOND) return value;
  return value / 1000n - (value % 1000n < 0n ? 1n : 0n);
}

function decimalText(words: Uint32Array, at: number, count: number, scale: number): string {
  let value = 0n;
  for (let w = count - 1; w >= 0; w--) value = (value << 32n) | BigInt(words[at + w]!);
  if (words[at + count - 1]! & 0x80000000) value -= 1n << BigInt(32 * count);
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** Hyper's interval text (ISO 8601: `P1Y2M3DT4H5M6.789000S`) as `months|days|micros`. */
function isoParts(text: string): string {
  const m = /^P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?)(\d+)(?:\.(\d+))?S)?)?$/.exec(text);
  if (!m) return `unreadable interval ${text}`;
  const n = (s: string | undefined): bigint => BigInt(s ?? 0);
  const seconds = n(m[7]) * 1_000_000n + BigInt((m[8] ?? '').padEnd(6, '0').slice(0, 6) || 0);
  const micros = (n(m[4]) * 3600n + n(m[5]) * 60n) * 1_000_000n + (m[6] === '-' ? -seconds : seconds);
  return `${n(m[1]) * 12n + n(m[2])}|${n(m[3])}|${micros}`;
}

const hex = (bytes: Uint8Array): string => `\\x${Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')}`;

/** A nested value as plain JSON (as the reader writes nested columns: JSON text). */
function plain(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), plain(v)]));
  if (typeof value === 'object' && 'toJSON' in value && typeof value.toJSON === 'function') return plain(value.toJSON());
  if (Array.isArray(value)) return value.map(plain);
  if (ArrayBuffer.isView(value)) return Array.from(value as unknown as ArrayLike<number>, plain);
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  return value;
}

/** The database's text of one value of `data` at `row` (null for NULL), and how to canonicalise the database's text. */
function column(data: Data): { text: (row: number) => string | null; canon: Canon } {
  const type: DataType = data.type;
  const valid = (row: number): boolean => data.getValid(row);
  const wrap = (f: (row: number) => string, canon: Canon = same) => ({ text: (row: number) => (valid(row) ? f(row) : null), canon });
  if (DataType.isDictionary(type) || DataType.isUtf8(type) || DataType.isLargeUtf8(type) || DataType.isUtf8View(type)) {
    const vector = makeVector(data);
    if (DataType.isDictionary(type) && !DataType.isUtf8(type.dictionary)) throw new Error('judge: dictionaries of text only');
    return { text: (row) => (vector.get(row) as string | null) ?? null, canon: same };
  }
  if (DataType.isNull(type)) return { text: () => null, canon: same };
  if (DataType.isBool(type)) {
    const vector = makeVector(data);
    return wrap((row) => String(vector.get(row)));
  }
  if (DataType.isInt(type)) return wrap((row) => String((data.values as ArrayLike<number | bigint>)[row]));
  if (DataType.isFloat(type)) {
    const values = data.values as ArrayLike<number>;
    const single = type.precision !== Precision.DOUBLE;
    // The database prints DOUBLE PRECISION with 15 significant digits: compared at that precision.
    const canon: Canon = (t) => (t === null ? null : String(single ? Math.fround(Number(t)) : Number(Number(t).toPrecision(15))));
    return wrap(
      (row) =>
        String(type.precision === Precision.HALF ? uint16ToFloat64(values[row]!) : single ? Math.fround(values[row]!) : values[row]!),
      canon,
    );
  }
  if (DataType.isDecimal(type)) {
    const stride = type.bitWidth / 32;
    return wrap((row) => decimalText(data.values as Uint32Array, row * stride, stride, type.scale));
  }
  if (DataType.isBinary(type) || DataType.isLargeBinary(type) || DataType.isFixedSizeBinary(type) || DataType.isBinaryView(type)) {
    const vector = makeVector(data);
    return wrap((row) => hex(vector.get(row) as Uint8Array));
  }
  if (DataType.isDate(type)) {
    const values = data.values as ArrayLike<number | bigint>;
    return wrap((row) => isoDate(type.unit === 0 ? Number(values[row]) : Math.floor(Number(values[row]) / 86_400_000)));
  }
  if (DataType.isTimestamp(type)) {
    return wrap((row) => timestampText(toMicros((data.values as BigInt64Array)[row]!, type.unit), Boolean(type.timezone)));
  }
  if (DataType.isTime(type)) return wrap((row) => timeText(toMicros(BigInt((data.values as ArrayLike<number | bigint>)[row]!), type.unit)));
  if (DataType.isInterval(type) || DataType.isDuration(type)) {
    const view = new DataView(data.values.buffer, data.values.byteOffset, data.values.byteLength);
    const parts = (row: number): [number, number, bigint] => {
      if (DataType.isDuration(type)) {
        const v = view.getBigInt64(row * 8, true);
        return [0, 0, type.unit === TimeUnit.NANOSECOND ? v / 1000n : toMicros(v, type.unit)];
      }
      if (type.unit === 0) return [view.getInt32(row * 4, true), 0, 0n];
      if (type.unit === 1) return [0, view.getInt32(row * 8, true), BigInt(view.getInt32(row * 8 + 4, true)) * 1000n];
      return [view.getInt32(row * 16, true), view.getInt32(row * 16 + 4, true), view.getBigInt64(row * 16 + 8, true) / 1000n];
    };
    return wrap(
      (row) => parts(row).join('|'),
      (t) => (t === null || t.includes('|') ? t : isoParts(t)),
    );
  }
  if (
    DataType.isList(type) ||
    DataType.isLargeList(type) ||
    DataType.isFixedSizeList(type) ||
    DataType.isStruct(type) ||
    DataType.isMap(type)
  ) {
    const vector = makeVector(data);
    return wrap(
      (row) => JSON.stringify(plain(vector.get(row))),
      (t) => (t === null ? null : JSON.stringify(JSON.parse(t))),
    );
  }
  throw new Error(`judge: no text for ${String(type)}`);
}

export interface Verdict {
  readonly ok: boolean;
  readonly detail: string;
}

/**
 * The writer's rows (from its own data), as canonical JSON rows in sorted order (sorted once here,
 * not by each of the four paths that judge a case), and the canonicaliser per column.
 */
export function expectedRows(table: Table): { names: string[]; rows: string[]; canons: Canon[] } {
  const names = table.schema.fields.map((f) => f.name);
  const rows: string[] = [];
  let canons: Canon[] = names.map(() => same);
  for (const batch of table.batches) {
    const columns = batch.data.children.map((child) => column(child));
    canons = columns.map((c) => c.canon);
    for (let row = 0; row < batch.numRows; row++) rows.push(JSON.stringify(columns.map((c) => c.canon(c.text(row)))));
  }
  return { names, rows: rows.sort(), canons };
}

/** Compares the table's rows (each column as `::text`) with the writer's, as multisets. */
export function judge(expected: ReturnType<typeof expectedRows>, actual: readonly Record<string, string | null>[]): Verdict {
  const got = actual.map((row) => JSON.stringify(expected.names.map((name, k) => expected.canons[k]!(row[name] ?? null))));
  if (got.length !== expected.rows.length)
    return { ok: false, detail: `${got.length} rows landed, the writer wrote ${expected.rows.length}` };
  const want = expected.rows;
  got.sort();
  for (let i = 0; i < want.length; i++) {
    if (want[i] !== got[i]) return { ok: false, detail: `row differs: expected ${want[i]}, got ${got[i]}` };
  }
  return { ok: true, detail: 'values match' };
}
