/**
 * Decoding a row group with hyparquet, with every size the file states checked before anything
 * is allocated for it. hyparquet trusts a page header's `num_values` and `uncompressed_page_size`
 * (it allocates arrays of that length), so a damaged or hostile file could otherwise take
 * gigabytes or end in a bare `Invalid array length`. A row group's column chunks are read once
 * (at most `MAX_GROUP_BYTES`), their page headers walked and checked, then decoded from memory a
 * window of rows and one column at a time, the event loop getting a turn in between: memory is
 * bounded by the group's compressed bytes plus one window's values, and one file holds up the
 * others for at most one page's decoding (about 0.45 s for a page of 1M strings here).
 */
import { type AsyncBuffer, type ColumnChunk, type FileMetaData, parquetRead } from 'hyparquet';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import { canDecompress, CodecError, strictCompressors } from './codecs.ts';
import { UnsupportedPage } from './page-values.ts';
import { checkPages, decoderMessage, type PageChecks } from './pages.ts';

export { decoderMessage, MAX_PAGE_BYTES } from './pages.ts';
import type { ClaimedFile } from '../../src/types.ts';
import { PARSERS } from './parsers.ts';
import type { ParquetColumn } from './column.ts';

/** The most compressed bytes of one row group (the columns loaded) this decoder holds at once. */
export const MAX_GROUP_BYTES = 1 << 30;

const CORRUPT_HINT = 'The file is damaged; write it again from its source, then replay it.';

export function corruptColumn(file: ClaimedFile, group: number, column: string, what: string, cause?: unknown): IngestFailure {
  return new IngestFailure(
    ingestError(
      'data',
      'PARQUET_CORRUPT',
      `${file.name}: column "${column}" of row group ${group} cannot be decoded: ${what}`,
      CORRUPT_HINT,
      {
        file: file.name,
        column,
        ...(cause === undefined ? {} : { cause }),
      },
    ),
  );
}

/**
 * One column chunk's pages checked (pages.ts): damage fails the file as PARQUET_CORRUPT, a valid
 * page this reader does not decode as PARQUET_UNSUPPORTED_ENCODING.
 */
function checkChunkPages(
  file: ClaimedFile,
  group: number,
  column: string,
  bytes: Uint8Array,
  chunk: ColumnChunk,
  metadata: FileMetaData,
  checks: PageChecks,
): number {
  try {
    return checkPages(
      bytes,
      chunk,
      metadata.schema,
      (what, cause) => corruptColumn(file, group, column, what, cause),
      checks,
      Number(metadata.row_groups[group]!.num_rows),
    );
  } catch (error) {
    if (!(error instanceof UnsupportedPage)) throw error;
    throw new IngestFailure(
      ingestError(
        'data',
        'PARQUET_UNSUPPORTED_ENCODING',
        `${file.name}: column "${column}" of row group ${group}: a page ${error.message}`,
        'Write the file with a current Parquet writer (RLE levels), then replay it.',
        { file: file.name, column },
      ),
    );
  }
}

/** The row group's column chunks, read and checked once, served to hyparquet from memory. */
function chunkCache(source: AsyncBuffer, held: readonly { start: number; bytes: ArrayBuffer }[]): AsyncBuffer {
  return {
    byteLength: source.byteLength,
    slice(start, end = source.byteLength) {
      const chunk = held.find((c) => start >= c.start && end <= c.start + c.bytes.byteLength);
      return chunk ? chunk.bytes.slice(start - chunk.start, end - chunk.start) : source.slice(start, end);
    },
  };
}

/** Gives other files' work (and timers, I/O) a turn between two column chunks. */
export const yieldToEventLoop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

export interface GroupSource {
  readonly file: ClaimedFile;
  readonly source: AsyncBuffer;
  /** The footer as hyparquet should read it (see `readableFooter`). */
  readonly metadata: FileMetaData;
  readonly columns: readonly ParquetColumn[];
}

/** The decoded pages of one column over one row group, in row order. */
export type ColumnPages = readonly ArrayLike<unknown>[];

/**
 * Rows decoded at a time from a row group of flat columns: hyparquet decodes a column chunk's
 * pages synchronously, and about 250k values is what it decodes in well under a second here.
 * A page is the smallest unit it decodes (DuckDB writes a 1M-row group as one page per column):
 * when pages are that large, windows would decode each page again, so the group is decoded whole.
 * (Lists, maps and structs cannot be entered mid-chunk either.)
 */
const WINDOW_ROWS = 1 << 18;

export interface OpenGroup {
  /** The group's column chunks, checked, for hyparquet to read. */
  readonly bytes: AsyncBuffer;
  /** Rows to decode at a time (see `WINDOW_ROWS`). */
  readonly window: number;
}

/**
 * Reads and checks every column chunk of row group `index` that `src.columns` needs: the bytes
 * hyparquet then decodes, window by window (see `decodeRows`), from memory.
 */
export async function openGroup(src: GroupSource, index: number): Promise<OpenGroup> {
  const { file, metadata, columns } = src;
  const names = new Set(columns.map((c) => c.name));
  const chunks = metadata.row_groups[index]!.columns.filter((chunk) => names.has(chunk.meta_data!.path_in_schema[0]!));
  const total = chunks.reduce((sum, chunk) => sum + Number(chunk.meta_data!.total_compressed_size), 0);
  if (total > MAX_GROUP_BYTES) {
    throw new IngestFailure(
      ingestError(
        'data',
        'PARQUET_TOO_LARGE',
        `${file.name}: row group ${index} is ${total} bytes compressed, beyond the ${MAX_GROUP_BYTES} bytes this decoder holds at once`,
        'Write the file with smaller row groups, then replay it.',
        {
          file: file.name,
        },
      ),
    );
  }
  const held: { start: number; bytes: ArrayBuffer }[] = [];
  let largestPage = 0;
  for (const chunk of chunks) {
    const meta = chunk.meta_data!;
    const name = meta.path_in_schema[0]!;
    if (!canDecompress(meta.codec)) {
      throw new IngestFailure(
        ingestError(
          'data',
          'PARQUET_UNSUPPORTED_CODEC',
          `${file.name}: column "${name}" of row group ${index} is compressed with ${meta.codec}, which this reader cannot decompress`,
          'Write the file with snappy, gzip, zstd, brotli or LZ4 compression (or none), then replay it.',
          {
            file: file.name,
            column: name,
          },
        ),
      );
    }
    const start = Number(chunkStart(chunk));
    const bytes = await src.source.slice(start, start + Number(meta.total_compressed_size));
    largestPage = Math.max(largestPage, checkChunkPages(file, index, name, new Uint8Array(bytes), chunk, metadata, { decompress: false }));
    held.push({ start, bytes });
    await yieldToEventLoop();
  }
  const rows = Number(metadata.row_groups[index]!.num_rows);
  const whole = largestPage * 2 > WINDOW_ROWS || columns.some((c) => c.codec.kind === 'nested');
  return { bytes: chunkCache(src.source, held), window: whole ? rows : WINDOW_ROWS };
}

/**
 * Every page of every column chunk checked as `openGroup` checks them, and decompressed too: what
 * runs before hyperd reads the file itself, whose reader takes damaged pages that ours refuses (a
 * GZIP page failing its data check, a SNAPPY page shorter than its header says). One column chunk
 * is in memory at a time; values are not decoded.
 */
export async function checkFilePages(file: ClaimedFile, source: AsyncBuffer, metadata: FileMetaData): Promise<void> {
  for (const [index, group] of metadata.row_groups.entries()) {
    for (const chunk of group.columns) {
      const meta = chunk.meta_data!;
      const name = meta.path_in_schema[0]!;
      const start = Number(chunkStart(chunk));
      const bytes = await source.slice(start, start + Number(meta.total_compressed_size));
      checkChunkPages(file, index, name, new Uint8Array(bytes), chunk, metadata, { decompress: true });
      await yieldToEventLoop();
    }
  }
}

/** Decodes rows `rowStart..rowEnd` (of the file) of row group `index`, column by column. */
export async function decodeRows(
  src: GroupSource,
  group: AsyncBuffer,
  index: number,
  rowStart: number,
  rowEnd: number,
): Promise<ColumnPages[]> {
  const decoded: ColumnPages[] = [];
  for (const column of src.columns) {
    const fail = (what: string, cause?: unknown) => corruptColumn(src.file, index, column.name, what, cause);
    decoded.push(await decodeColumn(src, group, column, rowStart, rowEnd, fail));
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
      compressors: strictCompressors,
      // Plain BYTE_ARRAY columns are bytes, not text: decode only what the footer calls text.
      utf8: column.codec.kind === 'nested' && column.codec.utf8,
      parsers: PARSERS,
      onChunk: (chunk) => {
        pages.push({ rowStart: chunk.rowStart, values: chunk.columnData });
      },
    });
  } catch (error) {
    if (error instanceof IngestFailure || typeof (error as { code?: unknown } | null)?.code === 'string') throw error;
    if (error instanceof CodecError) throw fail(`a page cannot be decompressed: ${error.message}`, error);
    throw fail(decoderMessage(error, 'a page'), error);
  }
  // hyparquet hands out whole pages: keep the part of each inside the rows asked for.
  pages.sort((a, b) => a.rowStart - b.rowStart);
  const out: ArrayLike<unknown>[] = [];
  let next = rowStart;
  for (const page of pages) {
    const from = Math.max(page.rowStart, next);
    const to = Math.min(page.rowStart + page.values.length, rowEnd);
    if (to <= from) continue;
    if (from !== next) throw fail(`no values for rows ${next}..${from - 1}`);
    out.push(
      from === page.rowStart && to === page.rowStart + page.values.length
        ? page.values
        : sliceOf(page.values, from - page.rowStart, to - page.rowStart),
    );
    next = to;
  }
  if (next !== rowEnd) throw fail(`${next - rowStart} values decoded where the footer says ${rowEnd - rowStart} rows`);
  return out;
}

function sliceOf(values: ArrayLike<unknown>, from: number, to: number): ArrayLike<unknown> {
  const sliceable = values as ArrayLike<unknown> & {
    subarray?: (a: number, b: number) => ArrayLike<unknown>;
    slice?: (a: number, b: number) => ArrayLike<unknown>;
  };
  if (typeof sliceable.subarray === 'function') return sliceable.subarray(from, to);
  if (typeof sliceable.slice === 'function') return sliceable.slice(from, to);
  return Array.from({ length: to - from }, (_, i) => values[from + i]);
}
