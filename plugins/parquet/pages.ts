/**
 * The pages of one column chunk checked before hyparquet decodes them or hyperd reads them: each
 * page header (its Thrift structure and sizes, which hyparquet trusts to allocate), its CRC-32,
 * its decompression (strict, see codecs.ts) and what its levels and values must be (page-values.ts).
 */
import type { ColumnChunk, FileMetaData } from 'hyparquet';
import { parquetHeader } from 'hyparquet/src/column.js';
import type { IngestFailure } from '../../src/errors.ts';
import { crc32 } from '../shared/crc32.ts';
import { CodecError, decompressPage } from './codecs.ts';
import { decoderMessage } from './decoder-message.ts';
import { checkPageValues } from './page-values.ts';
import { checkPageHeaderThrift, ThriftMismatch } from './thrift-check.ts';

/** The largest page, uncompressed, this decoder accepts (writers use about 1 MiB). */
export const MAX_PAGE_BYTES = 1 << 29;
/** Values per page beyond which the count must be backed by the page's bytes (see `pageValueBound`). */
const MIN_VALUE_BOUND = 1 << 22;

/**
 * Values a page of `bytes` uncompressed bytes can hold: at least one bit each (a run-length
 * encoded page of nulls or of one repeated value can say more in fewer bytes, hence the floor).
 */
function pageValueBound(bytes: number): number {
  return Math.max(MIN_VALUE_BOUND, bytes * 8 + 64);
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/** What `checkPages` does beyond the page headers. */
export interface PageChecks {
  /** Decompress every page (strictly, see codecs.ts) and throw the result away: the check made before hyperd reads the file. */
  readonly decompress: boolean;
}

/**
 * Walks the page headers of one column chunk and checks each before hyparquet trusts it: its
 * Thrift structure, its sizes, its CRC-32 where the writer gave one, and (when asked) that it
 * decompresses to exactly the size it states. Returns the most values a data page holds.
 */
export function checkPages(
  bytes: Uint8Array,
  chunk: ColumnChunk,
  schema: FileMetaData['schema'],
  fail: (what: string, cause?: unknown) => IngestFailure,
  checks: PageChecks = { decompress: false },
  /** The row group's rows: the pages must begin exactly as many. */
  groupRows?: number,
): number {
  const meta = chunk.meta_data!;
  let dictionary: number | undefined;
  const expected = Number(meta.num_values);
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  let values = 0;
  let rows = 0;
  let largest = 0;
  let pages = 0;
  // To the chunk's end, not only to its last value: arrow-rs and Arrow C++ read every page the
  // chunk's size covers, so bytes after the last page (a size too large) fail there.
  while (reader.offset < bytes.length) {
    const at = reader.offset;
    let header: ReturnType<typeof parquetHeader>;
    try {
      checkPageHeaderThrift(bytes, at);
      header = parquetHeader(reader);
    } catch (error) {
      const why = error instanceof ThriftMismatch ? error.message : decoderMessage(error, 'the header');
      throw fail(`the page header at byte ${at} of the column chunk cannot be read (${why})`, error);
    }
    const { compressed_page_size: compressed, uncompressed_page_size: uncompressed } = header;
    if (!isCount(compressed) || reader.offset + compressed > bytes.length) {
      throw fail(`a page at byte ${at} claims ${compressed} bytes, beyond the column chunk's ${bytes.length}`);
    }
    if (!isCount(uncompressed) || uncompressed > MAX_PAGE_BYTES) {
      throw fail(`a page at byte ${at} claims ${uncompressed} bytes uncompressed (at most ${MAX_PAGE_BYTES} are accepted)`);
    }
    const page = header.data_page_header ?? header.data_page_header_v2 ?? header.dictionary_page_header;
    const count = page?.num_values;
    if (page !== undefined && (!isCount(count) || count > pageValueBound(uncompressed))) {
      throw fail(`a page at byte ${at} claims ${count} values in ${uncompressed} bytes`);
    }
    const v2 = header.data_page_header_v2;
    if (
      v2 !== undefined &&
      (!isCount(v2.num_nulls) ||
        v2.num_nulls > count! ||
        !isCount(v2.num_rows) ||
        !isCount(v2.definition_levels_byte_length) ||
        !isCount(v2.repetition_levels_byte_length) ||
        v2.definition_levels_byte_length + v2.repetition_levels_byte_length > compressed)
    )
      throw fail(
        `the v2 data page at byte ${at} claims ${v2.num_nulls} NULLs and ${v2.num_rows} rows among ${count} values, and ` +
          `${v2.repetition_levels_byte_length} + ${v2.definition_levels_byte_length} bytes of levels in ${compressed}`,
      );
    const body = bytes.subarray(reader.offset, reader.offset + compressed);
    if (header.crc !== undefined && crc32(body) !== header.crc >>> 0)
      throw fail(`the page at byte ${at} fails its CRC-32 check (the page's bytes are damaged)`);
    if (header.type === 'DICTIONARY_PAGE') {
      if (header.dictionary_page_header === undefined) throw fail(`the dictionary page at byte ${at} has no dictionary page header`);
      if (pages > 0) throw fail(`a second dictionary page at byte ${at} (a column chunk has at most one, first)`);
      dictionary = count;
    }
    if (header.type === 'DATA_PAGE' || header.type === 'DATA_PAGE_V2') {
      // The header its type names: readers take a v1 page's from data_page_header alone, a v2 page's
      // from data_page_header_v2 (a damaged type with the other one's header: hyparquet threw).
      const own = header.type === 'DATA_PAGE' ? header.data_page_header : header.data_page_header_v2;
      if (own === undefined)
        throw fail(`the ${header.type === 'DATA_PAGE' ? 'v1' : 'v2'} data page at byte ${at} has no header of its kind`);
      values += count!;
      largest = Math.max(largest, count!);
      if (values > expected) throw fail(`its pages hold more values (${values}) than the footer says (${expected})`);
    }
    const atPage = (what: string, cause?: unknown) => fail(`the page at byte ${at} ${what}`, cause);
    checkPageBody(header, body, meta.codec, checks, atPage);
    rows += checkPageValues(header, body, chunk, schema, dictionary, atPage);
    reader.offset += compressed;
    pages++;
  }
  if (values < expected) throw fail(`its pages hold ${values} values where the footer says ${expected}`);
  // Rows begin where a repetition level is 0: a damaged level makes more or fewer rows than the
  // row group's (arrow-rs: "StructArrayReader out of sync"), and hyparquet would shift the lists.
  if (groupRows !== undefined && rows !== groupRows) throw fail(`its pages begin ${rows} rows where its row group holds ${groupRows}`);
  return largest;
}

/** A page's sizes against its body, and (when asked) its decompression. */
function checkPageBody(
  header: ReturnType<typeof parquetHeader>,
  body: Uint8Array,
  codec: string,
  checks: PageChecks,
  fail: (what: string, cause?: unknown) => IngestFailure,
): void {
  const v2 = header.type === 'DATA_PAGE_V2' ? header.data_page_header_v2 : undefined;
  let compressed = body;
  let size = header.uncompressed_page_size;
  if (v2) {
    const levels = v2.repetition_levels_byte_length + v2.definition_levels_byte_length;
    if (!isCount(v2.repetition_levels_byte_length) || !isCount(v2.definition_levels_byte_length) || levels > body.length || levels > size) {
      throw fail(`gives ${levels} bytes of levels, more than its ${Math.min(body.length, size)} bytes`);
    }
    if (v2.is_compressed === false || size === levels) {
      if (body.length !== size) throw fail(`is stored uncompressed in ${body.length} bytes where its header says ${size}`);
      return;
    }
    compressed = body.subarray(levels);
    size -= levels;
  } else if (header.type !== 'DATA_PAGE' && header.type !== 'DICTIONARY_PAGE') {
    return;
  }
  if (!checks.decompress && codec !== 'UNCOMPRESSED') return;
  try {
    decompressPage(codec, compressed, size);
  } catch (error) {
    if (error instanceof CodecError) throw fail(`cannot be decompressed: ${error.message}`, error);
    throw fail(`cannot be decompressed: ${decoderMessage(error, `its ${codec} data`)}`, error);
  }
}

export { decoderMessage };
