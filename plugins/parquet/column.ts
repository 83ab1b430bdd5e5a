/**
 * What a mapped Parquet column is: its `LogicalType`, how the file spells its type (for
 * messages), whether hyperd reads it, and the codec the fallback writes its values with. The
 * mapping itself is `types.ts`; the decoder (`decode.ts`, `csv.ts`) needs only these shapes.
 */
import type { SchemaTree } from 'hyparquet';
import type { LogicalType } from '../../src/types.ts';

/** How the fallback turns one decoded value of a column into CSV text (see `csv.ts`). */
export type ValueCodec =
  /** numbers, bigints, booleans: their JavaScript spelling */
  | { readonly kind: 'plain' }
  /**
   * unsigned 32-bit: hyparquet hands out numbers, or bigints where the column is read as INT64
   * (see `readableFooter`), wrapped modulo 2^32 as the spec's delta arithmetic wants
   */
  | { readonly kind: 'uint32' }
  /** float/double: also NaN and ±Infinity, spelled as SQL reads them */
  | { readonly kind: 'float' }
  /** already a string (UTF-8 text, UUID, JSON text, dates and timestamps our parsers format) */
  | { readonly kind: 'string'; readonly suffix?: string }
  /** raw bytes that hold UTF-8 text (ENUM: hyparquet leaves them undecoded with `utf8: false`) */
  | { readonly kind: 'utf8' }
  | { readonly kind: 'bytes' }
  /** the unscaled integer (number, bigint or big-endian two's complement bytes) */
  | { readonly kind: 'decimal'; readonly scale: number }
  | { readonly kind: 'time'; readonly unit: TimeUnit }
  /**
   * INT96 (Impala, Spark): read as its 12 bytes (see `readableFooter`), nanoseconds of the day
   * then the Julian day, and turned into an instant here
   */
  | { readonly kind: 'int96' }
  /**
   * lists, maps, structs, as hyparquet assembles them; `utf8`: decode the byte arrays inside as
   * text (so ENUM fields read as text), false when a field holds raw binary (kept as base64)
   */
  | { readonly kind: 'nested'; readonly utf8: boolean };

export type TimeUnit = 'MILLIS' | 'MICROS' | 'NANOS';

export interface ParquetColumn {
  readonly name: string;
  readonly type: LogicalType;
  /** How the file spells the type, for messages: `INT64 TIMESTAMP(MICROS, UTC)`. */
  readonly parquetType: string;
  /** hyperd's own Parquet reader handles it (the table above). */
  readonly hyperReads: boolean;
  readonly codec: ValueCodec;
  /** The footer says DECIMAL: the fallback reads the unscaled integers (see `csv.ts`). */
  readonly decimal: boolean;
  /**
   * Paths (`l.list.element`) of unsigned 32-bit fields inside a list, map or struct: the decoder
   * misreads them when they are delta-encoded (see `readableFooter`), which only the column
   * chunks tell.
   */
  readonly nestedUint32?: readonly string[];
}

export type MapResult =
  | { readonly ok: true; readonly column: ParquetColumn }
  | { readonly ok: false; readonly parquetType: string; readonly reason: string };

/** `INT64 TIMESTAMP(MICROS, UTC)`, `BYTE_ARRAY STRING`, `group LIST`: for error messages. */
export function describeParquetType(node: SchemaTree): string {
  const e = node.element;
  const physical =
    node.children.length > 0
      ? 'group'
      : e.type === 'FIXED_LEN_BYTE_ARRAY'
        ? `FIXED_LEN_BYTE_ARRAY(${e.type_length ?? '?'})`
        : (e.type ?? 'unknown');
  const repeated = e.repetition_type === 'REPEATED' ? 'REPEATED ' : '';
  const lt = e.logical_type;
  let annotation = '';
  if (lt) {
    switch (lt.type) {
      case 'DECIMAL':
        annotation = `DECIMAL(${lt.precision},${lt.scale})`;
        break;
      case 'TIME':
      case 'TIMESTAMP':
        annotation = `${lt.type}(${lt.unit}, ${lt.isAdjustedToUTC ? 'UTC' : 'local'})`;
        break;
      case 'INTEGER':
        annotation = `INT(${lt.bitWidth}, ${lt.isSigned ? 'signed' : 'unsigned'})`;
        break;
      default:
        annotation = lt.type ?? 'a logical type unknown to this reader';
    }
  } else if (e.converted_type) {
    annotation = e.converted_type === 'DECIMAL' ? `DECIMAL(${e.precision ?? '?'},${e.scale ?? 0})` : e.converted_type;
  }
  return `${repeated}${physical}${annotation ? ` ${annotation}` : ''}`;
}
