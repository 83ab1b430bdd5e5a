/**
 * Decoding one row group with hyparquet, one column at a time, with every size the file states
 * checked before anything is allocated for it. hyparquet trusts a page header's `num_values` and
 * `uncompressed_page_size` (it allocates arrays of that length), so a damaged or hostile file could
 * otherwise take gigabytes or end in a bare `Invalid array length`. Each column chunk is read
 * once, its page headers walked and checked, and only then decoded; between columns the event
 * loop gets a turn, so one file never holds up the others for longer than one column chunk.
 */
import { type AsyncBuffer, type ColumnChunk, type FileMetaData, parquetRead } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { parquetHeader } from 'hyparquet/src/column.js';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile } from '../../src/types.ts';
import { PARSERS } from './csv.ts';
import type { ParquetColumn } from './types.ts';

/** The most compressed bytes of one column chunk this decoder reads into memory at once. */
export const MAX_CHUNK_BYTES = 1 << 30;
/** The largest page, uncompressed, this decoder accepts (writers use about 1 MiB). */
export const MAX_PAGE_BYTES = 1 << 29;
/** Values per page beyond which the count must be backed by the page's bytes (see `pageValueBound`). */
const MIN_VALUE_BOUND = 1 << 22;

const CORRUPT_HINT = 'The file is damaged; write it again from its source, then replay it.';

export function corruptColumn(file: ClaimedFile, group: number, column: string, what: string, cause?: unknown): IngestFailure {
  return new IngestFailure(
    ingestError('data', 'PARQUET_CORRUPT', `${file.name}: column "${column}" of row group ${group} cannot be decoded: ${what}`, CORRUPT_HINT, {
      file: file.name,
      column,
      ...(cause === undefined ? {} : { cause }),
    }),
  );
}

/**
 * Values a page of `bytes` uncompressed bytes can hold: at least one bit each (a run-length
 * encoded page of nulls or of one repeated value can say more in fewer bytes, hence the floor).
 */
function pageValueBound(bytes: number): number {
  return Math.max(MIN_VALUE_BOUND, bytes * 8 + 64);
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;

/** Walks the page headers of one column chunk and checks each size before hyparquet trusts it. */
function checkPages(bytes: Uint8Array, chunk: ColumnChunk, fail: (what: string, cause?: unknown) => IngestFailure): void {
  const meta = chunk.meta_data!;
  const expected = Number(meta.num_values);
  const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
  let values = 0;
  while (values < expected && reader.offset < bytes.length - 1) {
    const at = reader.offset;
    let header: ReturnType<typeof parquetHeader>;
    try {
      header = parquetHeader(reader);
    } catch (error) {
      throw fail(`the page header at byte ${at} of the column chunk cannot be read (${(error as Error).message})`, error);
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
    if (header.type === 'DATA_PAGE' || header.type === 'DATA_PAGE_V2') {
      if (page === undefined) throw fail(`the data page at byte ${at} has no data page header`);
      values += count!;
      if (values > expected) throw fail(`its pages hold more values (${values}) than the footer says (${expected})`);
    }
    reader.offset += compressed;
  }
  if (values < expected) throw fail(`its pages hold ${values} values where the footer says ${expected}`);
}

/** Reads each column chunk once: the bytes checked by `checkPages` are the ones hyparquet decodes. */
function chunkCache(source: AsyncBuffer): AsyncBuffer & { hold(start: number, bytes: ArrayBuffer): void } {
  let held: { start: number; bytes: ArrayBuffer } | undefined;
  return {
    byteLength: source.byteLength,
    hold(start, bytes) {
      held = { start, bytes };
    },
    slice(start, end = source.byteLength) {
      if (held && start >= held.start && end <= held.start + held.bytes.byteLength) {
        return held.bytes.slice(start - held.start, end - held.start);
      }
      return source.slice(start, end);
    },
  };
}

/** Gives other files' work (and timers, I/O) a turn between two column chunks. */
const yieldToEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export interface GroupSource {
  readonly file: ClaimedFile;
  readonly source: AsyncBuffer;
  /** The footer as hyparquet should read it (see `readableFooter`). */
  readonly metadata: FileMetaData;
  readonly columns: readonly ParquetColumn[];
}

/** The decoded pages of one column over one row group, in row order. */
export type ColumnPages = readonly ArrayLike<unknown>[];

/** Decodes row group `index` (rows `rowStart..rowEnd` of the file), column by column. */
export async function decodeGroup(src: GroupSource, index: number, rowStart: number, rowEnd: number): Promise<ColumnPages[]> {
  const { file, metadata, columns } = src;
  const group = metadata.row_groups[index]!;
  const cache = chunkCache(src.source);
  const decoded: ColumnPages[] = [];
  for (const column of columns) {
    const fail = (what: string, cause?: unknown) => corruptColumn(file, index, column.name, what, cause);
    for (const chunk of group.columns) {
      const meta = chunk.meta_data!;
      if (meta.path_in_schema[0] !== column.name) continue;
      const start = Number(chunkStart(chunk));
      const size = Number(meta.total_compressed_size);
      if (size > MAX_CHUNK_BYTES) {
        throw new IngestFailure(
          ingestError('data', 'PARQUET_TOO_LARGE', `${file.name}: column "${column.name}" of row group ${index} is ${size} bytes compressed, beyond the ${MAX_CHUNK_BYTES} bytes this decoder holds at once`, 'Write the file with smaller row groups, then replay it.', {
            file: file.name,
            column: column.name,
          }),
        );
      }
      const bytes = await src.source.slice(start, start + size);
      checkPages(new Uint8Array(bytes), chunk, fail);
      cache.hold(start, bytes);
    }
    decoded.push(await decodeColumn(src, cache, column, rowStart, rowEnd, fail));
    await yieldToEventLoop();
  }
  return decoded;
}

/**
 * Where a column chunk starts: its dictionary page when it has one (some writers say 0 for
 * "none"). The same rule as hyparquet's, so the bytes checked are the bytes it reads.
 */
export function chunkStart(chunk: ColumnChunk): bigint {
  const meta = chunk.meta_data!;
  return meta.dictionary_page_offset || meta.data_page_offset;
}

async function decodeColumn(
  src: GroupSource,
  source: AsyncBuffer,
  column: ParquetColumn,
  rowStart: number,
  rowEnd: number,
  fail: (what: string, cause?: unknown) => IngestFailure,
): Promise<ColumnPages> {
  const pages: { rowStart: number; values: ArrayLike<unknown> }[] = [];
  try {
    await parquetRead({
      file: source,
      metadata: src.metadata,
      columns: [column.name],
      rowStart,
      rowEnd,
      compressors,
      // Plain BYTE_ARRAY columns are bytes, not text: decode only what the footer calls text.
      utf8: column.codec.kind === 'nested' && column.codec.utf8,
      parsers: PARSERS,
      onChunk: (chunk) => {
        pages.push({ rowStart: chunk.rowStart, values: chunk.columnData });
      },
    });
  } catch (error) {
    if (error instanceof IngestFailure || typeof (error as { code?: unknown } | null)?.code === 'string') throw error;
    throw fail(error instanceof Error ? error.message : String(error), error);
  }
  pages.sort((a, b) => a.rowStart - b.rowStart);
  let next = rowStart;
  for (const page of pages) {
    if (page.rowStart !== next) throw fail(`no values for rows ${next}..${page.rowStart - 1}`);
    next += page.values.length;
  }
  if (next !== rowEnd) throw fail(`${next - rowStart} values decoded where the footer says ${rowEnd - rowStart} rows`);
  return pages.map((p) => p.values);
}
