/**
 * What a page's levels and values must be, checked by decoding its levels and (for dictionary
 * indices and text) its values, never converting them: what Arrow C++, arrow-rs and DuckDB refuse
 * and hyparquet or hyperd would take.
 */
import type { ColumnChunk, FileMetaData, ParquetParsers, SchemaElement } from 'hyparquet';
import type { parquetHeader } from 'hyparquet/src/column.js';
import { readDataPage, readDataPageV2 } from 'hyparquet/src/datapage.js';
import { getMaxDefinitionLevel, getMaxRepetitionLevel, getSchemaPath } from 'hyparquet/src/schema.js';
import { IngestFailure } from '../../src/errors.ts';
import { isUtf8 } from '../shared/utf8.ts';
import { CodecError, decompressPage, strictCompressors } from './codecs.ts';
import { decoderMessage } from './decoder-message.ts';
import { booleanRunValues, levelRuns } from './rle-runs.ts';

/** The leaf's schema path, element and a decoder description for hyparquet's page readers. */
function pageDecoder(chunk: ColumnChunk, schema: FileMetaData['schema']) {
  const meta = chunk.meta_data!;
  const schemaPath = getSchemaPath(schema, meta.path_in_schema);
  const element = schemaPath[schemaPath.length - 1]!.element;
  return {
    pathInSchema: meta.path_in_schema,
    type: meta.type,
    element,
    schemaPath,
    codec: meta.codec,
    parsers: {} as ParquetParsers,
    compressors: strictCompressors,
  };
}

/** Whether a leaf holds text: what the strict readers (Arrow C++, arrow-rs, DuckDB) check is UTF-8. */
export function isTextLeaf(element: SchemaElement): boolean {
  const logical = element.logical_type?.type;
  return (
    element.type === 'BYTE_ARRAY' &&
    (logical === 'STRING' ||
      logical === 'JSON' ||
      logical === 'ENUM' ||
      element.converted_type === 'UTF8' ||
      element.converted_type === 'JSON' ||
      element.converted_type === 'ENUM')
  );
}

/** A PLAIN dictionary page of byte arrays: each value UTF-8. */
function checkTextDictionary(page: Uint8Array, count: number, fail: (what: string) => IngestFailure): void {
  const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + 4 > page.length) throw fail(`ends inside dictionary value ${i}`);
    const length = view.getUint32(at, true);
    at += 4;
    if (at + length > page.length) throw fail(`has dictionary value ${i} of ${length} bytes past its end`);
    if (!isUtf8(page, at, at + length)) throw fail(`has dictionary value ${i} that is not valid UTF-8`);
    at += length;
  }
}

/**
 * What a page's values must be, checked by decoding its levels and values (not converting them):
 * every index of a dictionary-encoded page inside its dictionary (hyparquet looks an index up
 * without a bound: a typed dictionary then hands out 0, any other `undefined`, which would land as
 * NULL), and every value of a text column UTF-8 (hyparquet and hyperd take any bytes). Arrow C++,
 * arrow-rs and DuckDB refuse both.
 */
export function checkPageValues(
  header: ReturnType<typeof parquetHeader>,
  body: Uint8Array,
  chunk: ColumnChunk,
  schema: FileMetaData['schema'],
  dictionary: number | undefined,
  fail: (what: string, cause?: unknown) => IngestFailure,
): number {
  const meta = chunk.meta_data!;
  const decoder = pageDecoder(chunk, schema);
  const text = isTextLeaf(decoder.element);
  const page = header.data_page_header ?? header.data_page_header_v2;
  const indexed = page !== undefined && (page.encoding === 'PLAIN_DICTIONARY' || page.encoding === 'RLE_DICTIONARY');
  if (header.type === 'DICTIONARY_PAGE') {
    if (text) checkTextDictionary(uncompressed(header, body, meta.codec, fail), header.dictionary_page_header!.num_values, fail);
    return 0;
  }
  if (header.type !== 'DATA_PAGE' && header.type !== 'DATA_PAGE_V2') return 0;
  const { valuesAt, rows } = checkLevels(header, body, meta.codec, decoder.schemaPath, fail);
  if (page !== undefined && page.encoding.startsWith('DELTA_')) checkDeltaHeader(header, body, meta.codec, decoder.schemaPath, fail);
  if (page?.encoding === 'RLE' && meta.type === 'BOOLEAN') checkBooleanRuns(header, body, meta.codec, valuesAt, decoder, fail);
  if (!indexed && !text) return rows;
  if (!indexed && page?.encoding === 'PLAIN') {
    checkPlainText(plainValues(header, body, meta.codec, valuesAt, fail), fail);
    return rows;
  }
  if (indexed && dictionary === undefined) throw fail('is dictionary-encoded, but the column chunk has no dictionary page');
  let values: ArrayLike<unknown>;
  try {
    if (header.type === 'DATA_PAGE_V2') values = readDataPageV2(body, header, decoder).dataPage;
    else values = readDataPage(uncompressed(header, body, meta.codec, fail), header.data_page_header!, decoder).dataPage;
  } catch (error) {
    if (error instanceof IngestFailure) throw error;
    if (error instanceof CodecError) throw fail(`cannot be decompressed: ${error.message}`, error);
    throw fail(`cannot be decoded: ${decoderMessage(error, 'its values')}`, error);
  }
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (indexed) {
      if (typeof value !== 'number' || value < 0 || value >= dictionary!)
        throw fail(`has dictionary index ${String(value)} (value ${i}), outside its dictionary of ${dictionary} values`);
    } else if (value instanceof Uint8Array && !isUtf8(value)) {
      throw fail(`has value ${i} that is not valid UTF-8 (a text column)`);
    }
  }
  return rows;
}

/**
 * Repetition and definition levels no higher than the column's: hyparquet takes a level past the
 * maximum for a NULL (or a shorter list); DuckDB and Arrow C++ refuse the page. Run by run (the
 * RLE / bit-packed hybrid), without decoding values. Returns where the values begin and how many
 * rows begin in the page (its repetition levels of 0; every value where the column does not repeat).
 */
function checkLevels(
  header: ReturnType<typeof parquetHeader>,
  body: Uint8Array,
  codec: string,
  schemaPath: ReturnType<typeof getSchemaPath>,
  fail: (what: string, cause?: unknown) => IngestFailure,
): { valuesAt: number; rows: number } {
  const maxRep = getMaxRepetitionLevel(schemaPath);
  const maxDef = getMaxDefinitionLevel(schemaPath);
  const v2 = header.data_page_header_v2;
  if (v2) {
    const rows = levelRuns(body.subarray(0, v2.repetition_levels_byte_length), maxRep, 'repetition', fail, v2.num_values, 0);
    // Readers find the rows of a page by its header's count (arrow-rs: "StructArrayReader out of sync").
    if (rows !== v2.num_rows) throw fail(`says it holds ${v2.num_rows} rows where its ${v2.num_values} values begin ${rows}`);
    const defined = levelRuns(
      body.subarray(v2.repetition_levels_byte_length, v2.repetition_levels_byte_length + v2.definition_levels_byte_length),
      maxDef,
      'definition',
      fail,
      v2.num_values,
      maxDef,
    );
    // Readers take the page's values to be num_values - num_nulls (hyparquet, arrow-rs); levels
    // that say otherwise would put values on the wrong rows. Arrow C++ and arrow-rs refuse it.
    if (v2.num_values - defined !== v2.num_nulls)
      throw fail(`says it holds ${v2.num_nulls} NULLs where its definition levels give ${v2.num_values - defined}`);
    return { valuesAt: v2.repetition_levels_byte_length + v2.definition_levels_byte_length, rows };
  }
  const count = header.data_page_header!.num_values;
  checkLevelEncodings(header.data_page_header!, maxRep, maxDef, fail);
  if (maxRep === 0 && maxDef === 0) return { valuesAt: 0, rows: count };
  const page = uncompressed(header, body, codec, fail);
  const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
  let at = 0;
  let rows = count;
  for (const [max, what] of [
    [maxRep, 'repetition'],
    [maxDef, 'definition'],
  ] as const) {
    if (max === 0) continue;
    if (at + 4 > page.length) throw fail(`ends inside its ${what} levels`);
    const length = view.getUint32(at, true);
    if (at + 4 + length > page.length) throw fail(`has ${what} levels of ${length} bytes past its end`);
    const zeros = levelRuns(page.subarray(at + 4, at + 4 + length), max, what, fail, count, what === 'repetition' ? 0 : undefined);
    if (what === 'repetition') rows = zeros;
    at += 4 + length;
  }
  return { valuesAt: at, rows };
}

/**
 * A page that is valid Parquet but stored in a way this reader does not decode: the file fails as
 * unsupported (not as damaged), naming what to write instead.
 */
export class UnsupportedPage extends Error {}

/**
 * A v1 page's level encodings: RLE (the hybrid every writer uses) or the deprecated BIT_PACKED;
 * anything else is damage (arrow-rs: "invalid level encoding"), and hyparquet would read any of
 * them as RLE. BIT_PACKED levels have no length prefix and another bit order, so where a page has
 * such levels (a maximum above 0) hyparquet would misread them: refused, never guessed.
 */
function checkLevelEncodings(
  page: NonNullable<ReturnType<typeof parquetHeader>['data_page_header']>,
  maxRep: number,
  maxDef: number,
  fail: (what: string, cause?: unknown) => IngestFailure,
): void {
  for (const [encoding, max, what] of [
    [page.repetition_level_encoding, maxRep, 'repetition'],
    [page.definition_level_encoding, maxDef, 'definition'],
  ] as const) {
    if (encoding !== 'RLE' && encoding !== 'BIT_PACKED')
      throw fail(`gives ${String(encoding)} as the encoding of its ${what} levels (levels are RLE or BIT_PACKED)`);
    if (encoding === 'BIT_PACKED' && max > 0)
      throw new UnsupportedPage(`stores its ${what} levels with the deprecated BIT_PACKED encoding, which this reader does not decode`);
  }
}

/** A data page's value section: after its levels (`valuesAt`), decompressed. */
function plainValues(
  header: ReturnType<typeof parquetHeader>,
  body: Uint8Array,
  codec: string,
  valuesAt: number,
  fail: (what: string, cause?: unknown) => IngestFailure,
): Uint8Array {
  const v2 = header.data_page_header_v2;
  if (!v2) return uncompressed(header, body, codec, fail).subarray(valuesAt);
  const rest = body.subarray(valuesAt);
  return v2.is_compressed === false || header.uncompressed_page_size === valuesAt
    ? rest
    : uncompressedBytes(codec, rest, header.uncompressed_page_size - valuesAt, fail);
}

/** PLAIN byte arrays (a 4-byte length, then the bytes) each UTF-8, read in place. */
function checkPlainText(values: Uint8Array, fail: (what: string) => IngestFailure): void {
  const view = new DataView(values.buffer, values.byteOffset, values.byteLength);
  let at = 0;
  for (let i = 0; at + 4 <= values.length; i++) {
    const length = view.getUint32(at, true);
    at += 4;
    if (at + length > values.length) throw fail(`has value ${i} of ${length} bytes past its end`);
    if (!isUtf8(values, at, at + length)) throw fail(`has value ${i} that is not valid UTF-8 (a text column)`);
    at += length;
  }
}

/**
 * RLE-encoded booleans (a 4-byte length, then runs of 1-bit values) hold a value for each
 * non-NULL row of the page: hyparquet reads the values a short run lacks as false; arrow-rs and
 * DuckDB refuse the page ("not enough bytes").
 */
function checkBooleanRuns(
  header: ReturnType<typeof parquetHeader>,
  body: Uint8Array,
  codec: string,
  valuesAt: number,
  decoder: ReturnType<typeof pageDecoder>,
  fail: (what: string, cause?: unknown) => IngestFailure,
): void {
  const v2 = header.data_page_header_v2;
  let defined: number;
  if (v2) defined = v2.num_values - v2.num_nulls;
  else {
    const maxDef = getMaxDefinitionLevel(decoder.schemaPath);
    const levels = readDataPage(uncompressed(header, body, codec, fail), header.data_page_header!, decoder).definitionLevels;
    defined = maxDef === 0 || !levels ? header.data_page_header!.num_values : levels.filter((l) => l === maxDef).length;
  }
  const values = plainValues(header, body, codec, valuesAt, fail);
  if (values.length < 4) throw fail(`ends before its boolean values (${defined} of them)`);
  const length = new DataView(values.buffer, values.byteOffset, values.byteLength).getUint32(0, true);
  if (4 + length > values.length) throw fail(`has boolean values of ${length} bytes past its end`);
  const count = booleanRunValues(values.subarray(4, 4 + length), defined, fail);
  if (count < defined) throw fail(`has ${count} boolean values for its ${defined} non-NULL values`);
}

/**
 * The block header of a delta-encoded page's values: the format's block size is a multiple of 128
 * and each miniblock a multiple of 32 values (hyparquet decodes other sizes; arrow-rs and DuckDB
 * refuse them).
 */
function checkDeltaHeader(
  header: ReturnType<typeof parquetHeader>,
  body: Uint8Array,
  codec: string,
  schemaPath: ReturnType<typeof getSchemaPath>,
  fail: (what: string, cause?: unknown) => IngestFailure,
): void {
  let values: Uint8Array;
  const v2 = header.data_page_header_v2;
  if (v2) {
    const levels = v2.repetition_levels_byte_length + v2.definition_levels_byte_length;
    const rest = body.subarray(levels);
    values = v2.is_compressed === false ? rest : uncompressedBytes(codec, rest, header.uncompressed_page_size - levels, fail);
  } else {
    values = uncompressed(header, body, codec, fail);
    const view = new DataView(values.buffer, values.byteOffset, values.byteLength);
    let at = 0;
    for (const levels of [getMaxRepetitionLevel(schemaPath), getMaxDefinitionLevel(schemaPath)]) {
      if (levels === 0) continue;
      if (at + 4 > values.length) throw fail('ends inside its levels');
      at += 4 + view.getUint32(at, true);
    }
    values = values.subarray(Math.min(at, values.length));
  }
  const varint = (from: number): [number, number] => {
    let value = 0;
    for (let k = 0; k < 5 && from + k < values.length; k++) {
      value += (values[from + k]! & 0x7f) * 2 ** (7 * k);
      if (!(values[from + k]! & 0x80)) return [value, from + k + 1];
    }
    throw fail('has a malformed delta block header');
  };
  const [blockSize, next] = varint(0);
  const [miniblocks] = varint(next);
  if (blockSize === 0 || blockSize % 128 !== 0 || miniblocks === 0 || blockSize % miniblocks !== 0 || (blockSize / miniblocks) % 32 !== 0) {
    throw fail(
      `has a delta block of ${blockSize} values in ${miniblocks} miniblocks (the format wants multiples of 128, and of 32 per miniblock)`,
    );
  }
}

function uncompressedBytes(
  codec: string,
  bytes: Uint8Array,
  size: number,
  fail: (what: string, cause?: unknown) => IngestFailure,
): Uint8Array {
  try {
    return decompressPage(codec, bytes, size);
  } catch (error) {
    if (error instanceof CodecError) throw fail(`cannot be decompressed: ${error.message}`, error);
    throw error;
  }
}

function uncompressed(
  header: ReturnType<typeof parquetHeader>,
  body: Uint8Array,
  codec: string,
  fail: (what: string, cause?: unknown) => IngestFailure,
): Uint8Array {
  try {
    return decompressPage(codec, body, header.uncompressed_page_size);
  } catch (error) {
    if (error instanceof CodecError) throw fail(`cannot be decompressed: ${error.message}`, error);
    throw error;
  }
}
