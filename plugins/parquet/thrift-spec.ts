/**
 * The Thrift structures of the Parquet format (parquet.thrift) that a reader goes by: the footer's
 * FileMetaData and each page's PageHeader, field by field (id, name, type, required, enum range),
 * for thrift-check.ts to check what hyparquet decodes against.
 */
/** A field's type in parquet.thrift, as the compact protocol's values come out of hyparquet's reader. */
export type FieldType =
  | 'bool'
  | 'i8'
  | 'i16'
  | 'i32'
  | 'i64'
  | 'double'
  | 'binary'
  | 'utf8'
  | 'string'
  | { readonly list: FieldType }
  | { readonly struct: StructSpec };

export interface FieldSpec {
  readonly name: string;
  readonly type: FieldType;
  readonly required?: boolean;
  /** Enum fields: the values the format defines, 0..`enumMax`. */
  readonly enumMax?: number;
  /** A count: never below 0 (arrow-rs refuses a negative one). */
  readonly count?: boolean;
}

/** `union`: exactly one of its fields is set (a field unknown to this definition counts: a newer writer's). */
export type StructSpec = { readonly name: string; readonly fields: Readonly<Record<number, FieldSpec>>; readonly union?: boolean };

const f = (name: string, type: FieldType, extra: Omit<FieldSpec, 'name' | 'type'> = {}): FieldSpec => ({ name, type, ...extra });
const req = (name: string, type: FieldType, enumMax?: number): FieldSpec =>
  f(name, type, { required: true, ...(enumMax === undefined ? {} : { enumMax }) });
const struct = (name: string, fields: Record<number, FieldSpec>): { struct: StructSpec } => ({ struct: { name, fields } });
const union = (name: string, fields: Record<number, FieldSpec>): { struct: StructSpec } => ({ struct: { name, fields, union: true } });
const empty = (name: string) => struct(name, {});

const PHYSICAL_TYPES = 7;
const REPETITIONS = 2;
const CONVERTED_TYPES = 21;
const CODECS = 7;
const PAGE_TYPES = 3;
/** Encodings the format defines (PLAIN .. BYTE_STREAM_SPLIT; a page of another one cannot be read). */
export const ENCODINGS = 9;
/** Encoding 1 (GROUP_VAR_INT) was never written by any writer and is gone from the format: readers refuse it. */
export const GROUP_VAR_INT = 1;

const STATISTICS = struct('Statistics', {
  1: f('max', 'binary'),
  2: f('min', 'binary'),
  3: f('null_count', 'i64', { count: true }),
  4: f('distinct_count', 'i64', { count: true }),
  5: f('max_value', 'binary'),
  6: f('min_value', 'binary'),
  7: f('is_max_value_exact', 'bool'),
  8: f('is_min_value_exact', 'bool'),
});
const TIME_UNIT = union('TimeUnit', {
  1: f('MILLIS', empty('MilliSeconds')),
  2: f('MICROS', empty('MicroSeconds')),
  3: f('NANOS', empty('NanoSeconds')),
});
const TIME_TYPE = (name: string) => struct(name, { 1: req('isAdjustedToUTC', 'bool'), 2: req('unit', TIME_UNIT) });
const LOGICAL_TYPE = union('LogicalType', {
  1: f('STRING', empty('StringType')),
  2: f('MAP', empty('MapType')),
  3: f('LIST', empty('ListType')),
  4: f('ENUM', empty('EnumType')),
  5: f('DECIMAL', struct('DecimalType', { 1: req('scale', 'i32'), 2: req('precision', 'i32') })),
  6: f('DATE', empty('DateType')),
  7: f('TIME', TIME_TYPE('TimeType')),
  8: f('TIMESTAMP', TIME_TYPE('TimestampType')),
  10: f('INTEGER', struct('IntType', { 1: req('bitWidth', 'i8'), 2: req('isSigned', 'bool') })),
  11: f('UNKNOWN', empty('NullType')),
  12: f('JSON', empty('JsonType')),
  13: f('BSON', empty('BsonType')),
  14: f('UUID', empty('UUIDType')),
  15: f('FLOAT16', empty('Float16Type')),
  16: f('VARIANT', struct('VariantType', { 1: f('specification_version', 'i8') })),
  17: f('GEOMETRY', struct('GeometryType', { 1: f('crs', 'string') })),
  18: f('GEOGRAPHY', struct('GeographyType', { 1: f('crs', 'string'), 2: f('algorithm', 'i32') })),
});
const SCHEMA_ELEMENT = struct('SchemaElement', {
  1: f('type', 'i32', { enumMax: PHYSICAL_TYPES }),
  2: f('type_length', 'i32'),
  3: f('repetition_type', 'i32', { enumMax: REPETITIONS }),
  4: req('name', 'utf8'),
  5: f('num_children', 'i32'),
  6: f('converted_type', 'i32', { enumMax: CONVERTED_TYPES }),
  7: f('scale', 'i32'),
  8: f('precision', 'i32'),
  9: f('field_id', 'i32'),
  10: f('logicalType', LOGICAL_TYPE),
});
const KEY_VALUE = struct('KeyValue', { 1: req('key', 'string'), 2: f('value', 'string') });
const COLUMN_META_DATA = struct('ColumnMetaData', {
  1: req('type', 'i32', PHYSICAL_TYPES),
  2: req('encodings', { list: 'i32' }, ENCODINGS),
  3: req('path_in_schema', { list: 'utf8' }),
  4: req('codec', 'i32', CODECS),
  5: req('num_values', 'i64'),
  6: f('total_uncompressed_size', 'i64'),
  7: req('total_compressed_size', 'i64'),
  8: f('key_value_metadata', { list: KEY_VALUE }),
  9: req('data_page_offset', 'i64'),
  10: f('index_page_offset', 'i64'),
  11: f('dictionary_page_offset', 'i64'),
  12: f('statistics', STATISTICS),
  13: f('encoding_stats', {
    list: struct('PageEncodingStats', {
      1: req('page_type', 'i32', PAGE_TYPES),
      2: req('encoding', 'i32', ENCODINGS),
      3: req('count', 'i32'),
    }),
  }),
  14: f('bloom_filter_offset', 'i64'),
  15: f('bloom_filter_length', 'i32'),
  16: f(
    'size_statistics',
    struct('SizeStatistics', {
      1: f('unencoded_byte_array_data_bytes', 'i64'),
      2: f('repetition_level_histogram', { list: 'i64' }),
      3: f('definition_level_histogram', { list: 'i64' }),
    }),
  ),
});
const COLUMN_CHUNK = struct('ColumnChunk', {
  1: f('file_path', 'string'),
  2: f('file_offset', 'i64'),
  3: f('meta_data', COLUMN_META_DATA),
  4: f('offset_index_offset', 'i64'),
  5: f('offset_index_length', 'i32'),
  6: f('column_index_offset', 'i64'),
  7: f('column_index_length', 'i32'),
  9: f('encrypted_column_metadata', 'binary'),
});
const ROW_GROUP = struct('RowGroup', {
  1: req('columns', { list: COLUMN_CHUNK }),
  2: f('total_byte_size', 'i64'),
  3: req('num_rows', 'i64'),
  4: f('sorting_columns', {
    list: struct('SortingColumn', { 1: req('column_idx', 'i32'), 2: req('descending', 'bool'), 3: req('nulls_first', 'bool') }),
  }),
  5: f('file_offset', 'i64'),
  6: f('total_compressed_size', 'i64'),
  7: f('ordinal', 'i16'),
});
export const FILE_META_DATA: StructSpec = {
  name: 'FileMetaData',
  fields: {
    1: req('version', 'i32'),
    2: req('schema', { list: SCHEMA_ELEMENT }),
    3: req('num_rows', 'i64'),
    4: req('row_groups', { list: ROW_GROUP }),
    5: f('key_value_metadata', { list: KEY_VALUE }),
    6: f('created_by', 'string'),
    7: f('column_orders', { list: union('ColumnOrder', { 1: f('TYPE_ORDER', empty('TypeDefinedOrder')) }) }),
  },
};
export const PAGE_HEADER: StructSpec = {
  name: 'PageHeader',
  fields: {
    1: req('type', 'i32', PAGE_TYPES),
    2: req('uncompressed_page_size', 'i32'),
    3: req('compressed_page_size', 'i32'),
    4: f('crc', 'i32'),
    5: f(
      'data_page_header',
      struct('DataPageHeader', {
        1: req('num_values', 'i32'),
        2: req('encoding', 'i32', ENCODINGS),
        3: req('definition_level_encoding', 'i32', ENCODINGS),
        4: req('repetition_level_encoding', 'i32', ENCODINGS),
        5: f('statistics', STATISTICS),
      }),
    ),
    6: f('index_page_header', empty('IndexPageHeader')),
    7: f(
      'dictionary_page_header',
      struct('DictionaryPageHeader', { 1: req('num_values', 'i32'), 2: req('encoding', 'i32', ENCODINGS), 3: f('is_sorted', 'bool') }),
    ),
    8: f(
      'data_page_header_v2',
      struct('DataPageHeaderV2', {
        1: req('num_values', 'i32'),
        2: req('num_nulls', 'i32'),
        3: req('num_rows', 'i32'),
        4: req('encoding', 'i32', ENCODINGS),
        5: req('definition_levels_byte_length', 'i32'),
        6: req('repetition_levels_byte_length', 'i32'),
        7: f('is_compressed', 'bool'),
        8: f('statistics', STATISTICS),
      }),
    ),
  },
};
