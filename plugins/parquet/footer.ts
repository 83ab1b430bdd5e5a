/**
 * Reading a claimed Parquet file through hyparquet without loading it: an `AsyncBuffer` over
 * `ClaimedFile.read`, and the footer, checked before anything else looks at the file. The checks
 * run on both paths, so a broken file always ends as one of our readable errors, never as whatever
 * hyperd or the decoder happens to say halfway through.
 */
import { type AsyncBuffer, type FileMetaData, parquetMetadata, parquetSchema, type SchemaTree } from 'hyparquet';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile } from '../../src/types.ts';
import { chunkStart, decoderMessage } from './decode.ts';
import { checkFooterThrift, NameNotUtf8, ThriftMismatch } from './thrift-check.ts';

const hex = (bytes: Uint8Array): string =>
  Array.from(bytes.subarray(0, 32), (b) => b.toString(16).padStart(2, '0')).join(' ') + (bytes.length > 32 ? ' ...' : '');
import { arrowHintMismatch } from './arrow-hint.ts';
import { checkStructure, FooterInconsistent } from './footer-structure.ts';
// The same verifier the Arrow ingester runs on its own messages.
import { verifyMessage } from '../arrow/verify.ts';
import { ByteBuffer } from 'flatbuffers';
import { Message as FbMessage } from 'apache-arrow/fb/message';
import { MessageHeader } from 'apache-arrow/fb/message-header';

const MAGIC = 'PAR1';
/** "PAR1" + footer length + "PAR1": nothing shorter is a Parquet file. */
const MIN_SIZE = 12;
/** Writers' footers are kilobytes to a few megabytes; a length beyond this is not believed. */
export const MAX_FOOTER_BYTES = 64 << 20;

const REPLAY_HINT = 'Write the file completely (a Parquet file ends with its footer and the bytes "PAR1"), then replay it.';
const CORRUPT_HINT = 'The file is damaged; write it again from its source, then replay it.';

function fail(file: ClaimedFile, code: string, message: string, hint: string, cause?: unknown): IngestFailure {
  return new IngestFailure(
    ingestError('data', code, `${file.name}: ${message}`, hint, { file: file.name, ...(cause === undefined ? {} : { cause }) }),
  );
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  // `read` hands out a fresh buffer per call: when it is exactly the bytes read, no copy is needed.
  if (bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) return bytes.buffer;
  const copy = new ArrayBuffer(bytes.byteLength);
  new Uint8Array(copy).set(bytes);
  return copy;
}

/** Reads byte ranges on demand (the footer, then one column chunk at a time), never the whole file. */
export function asyncBufferOf(file: ClaimedFile): AsyncBuffer {
  return {
    byteLength: file.size,
    async slice(start: number, end: number = file.size): Promise<ArrayBuffer> {
      const bytes = await file.read(start, end - start);
      if (bytes.length !== end - start) {
        // The claim recorded `size`: fewer bytes now means the file shrank under us.
        throw fail(
          file,
          'PARQUET_TRUNCATED',
          `expected ${end - start} bytes at offset ${start} but the file ends after ${start + bytes.length}`,
          REPLAY_HINT,
        );
      }
      return toArrayBuffer(bytes);
    },
  };
}

function isMagic(bytes: Uint8Array): boolean {
  return bytes.length === 4 && String.fromCharCode(...bytes) === MAGIC;
}

/**
 * The Arrow schema that Arrow writers (arrow-rs, Arrow C++, pyarrow) keep in the footer
 * (`ARROW:schema`: an IPC schema message, base64): when it is there, it must be one, as arrow-rs
 * insists (it refuses the file otherwise), and nest the columns as the Parquet schema does
 * (arrow-hint.ts). Damage there is damage to the footer.
 */
function checkArrowSchema(file: ClaimedFile, metadata: FileMetaData): void {
  const entry = metadata.key_value_metadata?.find((kv) => kv.key === 'ARROW:schema');
  if (entry?.value === undefined) return;
  const bad = (why: string) =>
    fail(file, 'PARQUET_CORRUPT', `the footer's ARROW:schema (the Arrow schema its writer kept) is damaged: ${why}`, CORRUPT_HINT);
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(entry.value), (c) => c.charCodeAt(0));
  } catch {
    throw bad('it is not base64');
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const prefix = bytes.length >= 8 && view.getInt32(0, true) === -1 ? 8 : 4;
  if (bytes.length < prefix + 8) throw bad(`it is ${bytes.length} bytes long`);
  try {
    verifyMessage(bytes.subarray(prefix), 'the schema message');
  } catch (error) {
    throw bad(error instanceof Error ? error.message : String(error));
  }
  if (FbMessage.getRootAsMessage(new ByteBuffer(bytes.subarray(prefix))).headerType() !== MessageHeader.Schema)
    throw bad('it is not a schema message');
  let root: SchemaTree;
  try {
    root = parquetSchema(metadata);
  } catch {
    return; // the schema's own check (readFooter) says what is wrong with it
  }
  const mismatch = arrowHintMismatch(bytes.subarray(prefix), root);
  if (mismatch)
    throw fail(
      file,
      'PARQUET_CORRUPT',
      `the footer's ARROW:schema (the Arrow schema its writer kept) disagrees with its Parquet schema: ${mismatch}`,
      CORRUPT_HINT,
    );
}

/** Footers whose own row total disagreed with their row groups' (replaced by theirs). */
const ROWS_MENDED = new WeakSet<FileMetaData>();

/** Whether the footer's row total was replaced by its row groups' (see `readFooter`). */
export function rowsMended(metadata: FileMetaData): boolean {
  return ROWS_MENDED.has(metadata);
}

/**
 * The file's footer, checked: the magic bytes at both ends, a footer hyparquet can decode, row
 * counts that add up, and every column chunk inside the data region. Throws `IngestFailure`s:
 * `EMPTY_FILE`, `PARQUET_NOT_PARQUET`, `PARQUET_TRUNCATED`, `PARQUET_CORRUPT`.
 */
export async function readFooter(file: ClaimedFile): Promise<FileMetaData> {
  if (file.size === 0) {
    throw fail(
      file,
      'EMPTY_FILE',
      'the file is empty (0 bytes)',
      'A Parquet file holds at least its footer; write the file completely before creating its .ready, then replay it.',
    );
  }
  const head = await file.read(0, 4);
  const tail = file.size >= 8 ? await file.read(file.size - 4, 4) : new Uint8Array(0);
  const startsRight = isMagic(head) || MAGIC.startsWith(String.fromCharCode(...head));
  if (!startsRight) {
    throw fail(
      file,
      'PARQUET_NOT_PARQUET',
      'not a Parquet file (it does not start with the bytes "PAR1")',
      'Check what produced the file; only Parquet files may be named .parquet or .pq.',
    );
  }
  if (file.size < MIN_SIZE || !isMagic(tail)) {
    throw fail(
      file,
      'PARQUET_TRUNCATED',
      `the file is truncated: it starts like a Parquet file but has no footer (${file.size} bytes, not ending with "PAR1")`,
      REPLAY_HINT,
    );
  }
  const footerLength = new DataView(toArrayBuffer(await file.read(file.size - 8, 4))).getUint32(0, true);
  if (footerLength > file.size - MIN_SIZE) {
    throw fail(
      file,
      'PARQUET_CORRUPT',
      `the footer length (${footerLength} bytes) is larger than the file (${file.size} bytes)`,
      CORRUPT_HINT,
    );
  }
  if (footerLength > MAX_FOOTER_BYTES) {
    throw fail(
      file,
      'PARQUET_TOO_LARGE',
      `the footer is ${footerLength} bytes, beyond the ${MAX_FOOTER_BYTES} bytes this reader accepts`,
      'Write the file with fewer columns or row groups per file, then replay it.',
    );
  }
  const footer = await file.read(file.size - 8 - footerLength, footerLength + 8);
  let metadata: FileMetaData;
  try {
    checkFooterThrift(footer.subarray(0, footerLength));
    // geoparquet: false keeps WKB columns as plain bytes (our type table has no geometry).
    metadata = parquetMetadata(footer, { geoparquet: false });
  } catch (error) {
    if (error instanceof IngestFailure) throw error;
    if (error instanceof NameNotUtf8) {
      throw fail(
        file,
        'ENCODING_INVALID',
        `a column name in the Parquet schema (${error.where}) is not valid UTF-8 (bytes ${hex(error.bytes)})`,
        'Write the file with column names in UTF-8 (as the format requires), then replay it.',
        error,
      );
    }
    if (error instanceof ThriftMismatch)
      throw fail(file, 'PARQUET_CORRUPT', `the Parquet footer is damaged: ${error.message}`, CORRUPT_HINT, error);
    throw fail(file, 'PARQUET_CORRUPT', `the Parquet footer cannot be read: ${decoderMessage(error, 'the footer')}`, CORRUPT_HINT, error);
  }
  let rows: bigint;
  try {
    rows = checkStructure(metadata);
  } catch (error) {
    if (!(error instanceof FooterInconsistent)) throw error;
    throw new IngestFailure(
      ingestError('data', 'PARQUET_CORRUPT', `${file.name}: the Parquet footer is damaged: ${error.message}`, CORRUPT_HINT, {
        file: file.name,
        ...(error.column === undefined ? {} : { column: error.column }),
        cause: error,
      }),
    );
  }
  const dataEnd = file.size - 8 - metadata.metadata_length;
  for (const [g, group] of metadata.row_groups.entries()) {
    for (const chunk of group.columns) {
      const meta = chunk.meta_data;
      if (!meta || chunk.file_path !== undefined) {
        throw fail(
          file,
          'PARQUET_CORRUPT',
          `row group ${g} has a column chunk that is ${meta ? 'stored in another file' : 'encrypted or missing its metadata'}`,
          'Write the file as a single, unencrypted Parquet file, then replay it.',
        );
      }
      const start = chunkStart(chunk);
      const end = start + meta.total_compressed_size;
      if (start < 4n || meta.total_compressed_size < 0n || end > BigInt(dataEnd)) {
        throw fail(
          file,
          'PARQUET_CORRUPT',
          `column "${meta.path_in_schema.join('.')}" of row group ${g} lies outside the file's data (bytes ${start}..${end} of ${dataEnd})`,
          CORRUPT_HINT,
        );
      }
    }
  }
  checkArrowSchema(file, metadata);
  try {
    parquetSchema(metadata);
  } catch (error) {
    throw fail(file, 'PARQUET_CORRUPT', `the footer's schema cannot be read: ${decoderMessage(error, 'the schema')}`, CORRUPT_HINT, error);
  }
  // Readers (Arrow C++, arrow-rs, DuckDB, Spark) take the rows the row groups hold, whatever the
  // footer's own total says (some writers got it wrong): so do we, on both paths. A negative total
  // no writer makes: DuckDB refuses it, and so does this.
  if (metadata.num_rows < 0n)
    throw fail(file, 'PARQUET_CORRUPT', `the footer counts ${metadata.num_rows} rows (its row groups hold ${rows})`, CORRUPT_HINT);
  if (rows !== metadata.num_rows) {
    const mended = { ...metadata, num_rows: rows };
    ROWS_MENDED.add(mended);
    return mended;
  }
  return metadata;
}
