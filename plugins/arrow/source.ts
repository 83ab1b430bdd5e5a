/**
 * Opening a claimed file as Arrow IPC, in either layout, with memory bounded by one record batch:
 *
 * - the stream format (`0xFFFFFFFF` continuation, or the pre-0.15 "legacy" framing) is read as
 *   it lies, in the claimed file's large chunks;
 * - the file format (`ARROW1` ... footer ... `ARROW1`) is turned into a stream by reading the
 *   footer and then the dictionary and record batch blocks it lists, in file order. apache-arrow's
 *   own reader would do a full `read()` of a file-format byte stream (it needs random access), and
 *   Arrow JS files carry the schema only in the footer, so the bytes between the magic and the
 *   footer are not a stream by themselves.
 *
 * Either way the result is one IPC stream: Hyper's `FORMAT ARROWSTREAM` takes it as it is, and
 * apache-arrow's stream reader decodes it one batch at a time.
 */
import { AsyncByteQueue, RecordBatchReader, RecordBatchStreamWriter, type RecordBatch, type Schema } from 'apache-arrow';
import { Footer, type FileBlock } from 'apache-arrow/ipc/metadata/file';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile, IngestError } from '../../src/types.ts';

const MAGIC = 'ARROW1';
/** `ARROW1` plus two bytes of padding at the start of a file. */
const FILE_HEAD = 8;
/** Footer length (int32) plus `ARROW1` at the end of a file. */
const FILE_TAIL = 10;
/** End-of-stream marker of the current IPC framing: continuation token, then a zero length. */
export const EOS = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0);

export interface IpcSource {
  readonly format: 'file' | 'stream';
  readonly schema: Schema;
  /**
   * Every message starts with the `0xFFFFFFFF` continuation token (IPC ≥ 0.15). Hyper reads only
   * that framing ("Message does not begin with IPC continuation token"); legacy input is re-encoded.
   */
  readonly modernFraming: boolean;
  /** The input as one IPC stream (schema, dictionaries, record batches, end-of-stream marker). */
  streamBytes(): AsyncIterable<Uint8Array>;
  /** Decoded record batches, one at a time. */
  batches(): AsyncIterable<RecordBatch>;
}

function fail(code: string, file: ClaimedFile, message: string, hint: string, cause?: unknown): IngestFailure {
  return new IngestFailure(ingestError('data', code, `${file.name}: ${message}`, hint, { file: file.name, ...(cause === undefined ? {} : { cause }) }));
}

const REWRITE_HINT = 'The producer must write the file completely (close the Arrow writer) before creating its .ready; then replay the file.';
const NOT_ARROW_HINT = 'Write Arrow IPC (file format, i.e. Feather v2, or stream format) with an Arrow library, or give the file the extension of its real format; then replay it.';

/** Turns an apache-arrow reader error into an `IngestError` naming the file. */
export function readError(file: ClaimedFile, error: unknown): IngestError {
  if (error instanceof IngestFailure) return error.error;
  const message = error instanceof Error ? error.message : String(error);
  if (/compressed but codec not found/i.test(message)) {
    return fail(
      'ARROW_COMPRESSED',
      file,
      `its record batches are compressed (LZ4/ZSTD), which this reader cannot decode (${message})`,
      'Write the file uncompressed (pyarrow: feather.write_feather(..., compression="uncompressed"), or IpcWriteOptions(compression=None)), then replay it.',
      error,
    ).error;
  }
  if (/^Expected to read \d+/.test(message)) {
    return fail('ARROW_TRUNCATED', file, `the Arrow data ends early: ${message}`, REWRITE_HINT, error).error;
  }
  return fail('ARROW_CORRUPT', file, `not valid Arrow IPC data: ${message}`, NOT_ARROW_HINT, error).error;
}

/**
 * An `AsyncByteQueue` the writer writes into that keeps what it is given for us to take
 * synchronously: the writer is driven one batch at a time, so there is never more than one batch
 * of output waiting (apache-arrow's own queue would buffer without bound).
 */
export class ChunkCollector extends AsyncByteQueue {
  #chunks: Uint8Array[] = [];
  #bytes = 0;

  override write(value: Parameters<AsyncByteQueue['write']>[0]): void {
    // The writer only ever passes Uint8Array views of its buffers (see `RecordBatchWriter._write`).
    if (!(value instanceof Uint8Array)) throw new TypeError('ChunkCollector takes Uint8Array chunks only');
    if (value.byteLength === 0) return;
    this.#chunks.push(value);
    this.#bytes += value.byteLength;
  }

  override close(): void {}

  get byteLength(): number {
    return this.#bytes;
  }

  /** Everything written since the last call, as one buffer (so COPY gets a few large writes). */
  take(): Uint8Array {
    const chunks = this.#chunks;
    this.#chunks = [];
    this.#bytes = 0;
    if (chunks.length === 1) return chunks[0]!;
    const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.byteLength;
    }
    return out;
  }
}

/** The schema message alone, as the stream writer frames it. */
function schemaMessage(schema: Schema): Uint8Array {
  const sink = new ChunkCollector();
  new RecordBatchStreamWriter().reset(sink, schema);
  return sink.take();
}

function int32At(bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(at, true);
}

function startsWithMagic(bytes: Uint8Array): boolean {
  return bytes.length >= MAGIC.length && new TextDecoder().decode(bytes.subarray(0, MAGIC.length)) === MAGIC;
}

async function* decode(file: ClaimedFile, bytes: () => AsyncIterable<Uint8Array>): AsyncIterable<RecordBatch> {
  let reader: RecordBatchReader;
  try {
    reader = await RecordBatchReader.from(bytes());
    await reader.open();
  } catch (error) {
    throw new IngestFailure(readError(file, error));
  }
  const iterator = reader[Symbol.asyncIterator]();
  try {
    for (;;) {
      let next: IteratorResult<RecordBatch>;
      try {
        next = await iterator.next();
      } catch (error) {
        throw new IngestFailure(readError(file, error));
      }
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await iterator.return?.();
  }
}

/** Opens `file` as Arrow IPC; rejects with an `IngestFailure` (data error) when it is not. */
export async function openIpc(file: ClaimedFile): Promise<IpcSource> {
  if (file.size === 0) {
    throw fail('EMPTY_FILE', file, 'is empty (0 bytes)', 'An Arrow file holds at least its schema; write the file completely before creating its .ready, then replay it.');
  }
  const head = await file.read(0, FILE_HEAD);
  return startsWithMagic(head) ? openFileFormat(file) : openStreamFormat(file, head);
}

async function openFileFormat(file: ClaimedFile): Promise<IpcSource> {
  if (file.size < FILE_HEAD + FILE_TAIL) {
    throw fail('ARROW_TRUNCATED', file, `starts like an Arrow IPC file but is only ${file.size} bytes long`, REWRITE_HINT);
  }
  const tail = await file.read(file.size - FILE_TAIL, FILE_TAIL);
  if (!startsWithMagic(tail.subarray(4))) {
    throw fail('ARROW_TRUNCATED', file, 'starts like an Arrow IPC file (ARROW1) but does not end with its footer: the file is incomplete or truncated', REWRITE_HINT);
  }
  const footerLength = int32At(tail, 0);
  const footerStart = file.size - FILE_TAIL - footerLength;
  if (footerLength <= 0 || footerStart < FILE_HEAD) {
    throw fail('ARROW_CORRUPT', file, `the Arrow file footer length (${footerLength}) does not fit the file (${file.size} bytes)`, NOT_ARROW_HINT);
  }
  let footer: Footer;
  try {
    footer = Footer.decode(await file.read(footerStart, footerLength));
  } catch (error) {
    throw fail('ARROW_CORRUPT', file, `the Arrow file footer cannot be decoded: ${error instanceof Error ? error.message : String(error)}`, NOT_ARROW_HINT, error);
  }
  const schema = footer.schema as Schema | null | undefined;
  if (!schema) throw fail('ARROW_CORRUPT', file, 'the Arrow file footer holds no schema', NOT_ARROW_HINT);

  // Dictionaries and batches in file order: a dictionary (or delta) precedes the batches using it.
  const blocks: FileBlock[] = [...footer.dictionaryBatches(), ...footer.recordBatches()].sort((a, b) => a.offset - b.offset);
  for (const block of blocks) {
    const end = block.offset + block.metaDataLength + block.bodyLength;
    if (block.offset < FILE_HEAD || block.metaDataLength <= 0 || block.bodyLength < 0 || end > footerStart) {
      throw fail('ARROW_CORRUPT', file, `the Arrow file footer lists a block (offset ${block.offset}, ${block.metaDataLength + block.bodyLength} bytes) outside the data`, NOT_ARROW_HINT);
    }
  }
  const first = blocks[0];
  const modernFraming = first === undefined || int32At(await file.read(first.offset, 4), 0) === -1;
  const header = schemaMessage(schema);

  async function* streamBytes(): AsyncIterable<Uint8Array> {
    yield header;
    for (const block of blocks) yield* file.stream({ start: block.offset, end: block.offset + block.metaDataLength + block.bodyLength });
    yield EOS;
  }
  return { format: 'file', schema, modernFraming, streamBytes, batches: () => decode(file, streamBytes) };
}

async function openStreamFormat(file: ClaimedFile, head: Uint8Array): Promise<IpcSource> {
  const modernFraming = head.length >= 4 && int32At(head, 0) === -1;
  // The first message's metadata length: after the continuation token, or first (legacy framing).
  const prefix = modernFraming ? 8 : 4;
  const metadataLength = head.length >= prefix ? int32At(head, prefix - 4) : -1;
  if (!modernFraming && (metadataLength <= 0 || metadataLength > file.size - prefix)) {
    const shown = Array.from(head.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join(' ');
    throw fail('ARROW_NOT_IPC', file, `is not Arrow IPC data: it starts with neither "ARROW1" (file format) nor an IPC message (stream format), but with bytes ${shown}`, NOT_ARROW_HINT);
  }
  if (metadataLength <= 0 || metadataLength > file.size - prefix) {
    throw fail('ARROW_TRUNCATED', file, `the Arrow stream ends inside its schema (${file.size} bytes)`, REWRITE_HINT);
  }
  // Without its end-of-stream marker a stream cut at a message boundary would still decode: only
  // the marker tells a complete stream from one whose last batches are missing.
  const eosLength = modernFraming ? EOS.length : 4;
  const tail = await file.read(Math.max(0, file.size - eosLength), eosLength);
  const ended = modernFraming ? tail.length === EOS.length && tail.every((b, i) => b === EOS[i]) : tail.length === 4 && int32At(tail, 0) === 0;
  if (!ended) {
    throw fail(
      'ARROW_TRUNCATED',
      file,
      'the Arrow stream does not end with its end-of-stream marker: the file is incomplete or truncated',
      'Close the Arrow stream writer (it writes the end-of-stream marker) before creating the .ready, then replay the file.',
    );
  }

  let schema: Schema | undefined;
  try {
    const reader = await RecordBatchReader.from(file.stream());
    await reader.open();
    schema = reader.schema as Schema | undefined;
    await reader.cancel();
  } catch (error) {
    throw new IngestFailure(readError(file, error));
  }
  if (!schema) throw fail('ARROW_CORRUPT', file, 'the Arrow stream holds no schema', NOT_ARROW_HINT);
  const streamBytes = (): AsyncIterable<Uint8Array> => file.stream();
  return { format: 'stream', schema, modernFraming, streamBytes, batches: () => decode(file, streamBytes) };
}
