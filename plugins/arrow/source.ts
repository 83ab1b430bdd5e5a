/**
 * Opening a claimed file as Arrow IPC, in either layout, with memory bounded by one record batch.
 *
 * The file is first read as a list of messages, and every message's metadata is checked against
 * the schema's layout (messages.ts, layout.ts) before any body is read:
 * - the stream format (`0xFFFFFFFF` continuation, or the pre-0.15 framing) is walked message by
 *   message. It is complete when it ends with the end-of-stream marker or at a message boundary
 *   (a writer may end a stream by closing it: Hyper's `COPY ... TO (FORMAT arrowstream)` does);
 *   a stream cut inside a message is truncated;
 * - the file format (`ARROW1` ... footer ... `ARROW1`) is read from its footer's blocks. apache-arrow's
 *   own reader would read a whole file-format input at once (it needs random access).
 *
 * Either way the result is one IPC stream of checked messages, decompressed and little-endian
 * (body.ts): Hyper's `FORMAT ARROWSTREAM` takes it as it is when nothing had to change, and
 * apache-arrow's stream reader decodes it one batch at a time.
 */
import { ByteBuffer } from 'flatbuffers';
import { AsyncByteQueue, RecordBatchStreamWriter, type RecordBatch, type Schema } from 'apache-arrow';
import { Footer as FbFooter } from 'apache-arrow/fb/footer';
import { MessageHeader } from 'apache-arrow/fb/message-header';
import { Footer } from 'apache-arrow/ipc/metadata/file';
import { Message } from 'apache-arrow/ipc/metadata/message';
import { concatBytes } from '../../src/util/bytes.ts';
import { ingestError, IngestFailure } from '../../src/errors.ts';
import type { ClaimedFile, IngestError } from '../../src/types.ts';
import {
  type Block,
  checkBatchMessage,
  checkBlockValues,
  checkMessages,
  type DictionaryLengths,
  readMessageAt,
  safeMessages,
} from './messages.ts';
import { checkedSize, corrupt, IpcProblem, makeBreather } from './problem.ts';
import { fbMessage, FbSchema, readFlatbuffer, type SchemaShape, shapeOfSchema } from './shape.ts';
import { verifyFooter } from './verify.ts';
import { encodedSchemas, type Expansion, schemaHoldsEncoded } from './encoded.ts';
import { decode } from './batches.ts';

const MAGIC = 'ARROW1';
/** `ARROW1` plus two bytes of padding at the start of a file. */
const FILE_HEAD = 8;
/** Footer length (int32) plus `ARROW1` at the end of a file. */
const FILE_TAIL = 10;

export interface IpcSource {
  readonly format: 'file' | 'stream';
  readonly schema: Schema;
  /**
   * `streamBytes()` is what Hyper reads as it is: little-endian, uncompressed, every message in
   * the current framing (Hyper: "Message does not begin with IPC continuation token") with V5
   * metadata. Otherwise the batches are decoded and re-encoded for Hyper.
   */
  readonly passThrough: boolean;
  /** Why not, for the log. */
  readonly notes: readonly string[];
  /** Rows of all record batches, as their (checked) metadata gives them. */
  readonly rows: number;
  /** NULLs of each top-level column over all record batches, as their metadata gives them. */
  readonly nulls: readonly number[];
  /** The input as one IPC stream of checked messages (schema, dictionaries, record batches, end-of-stream marker). */
  streamBytes(): AsyncIterable<Uint8Array>;
  /** Decoded record batches, one at a time. */
  batches(): AsyncIterable<RecordBatch>;
  /** Runs every check `streamBytes()` runs, reading of the bodies only what the checks look at (see `checkMessages`). */
  check(): Promise<void>;
}

function fail(code: string, file: ClaimedFile, message: string, hint: string, cause?: unknown, column?: string): IngestFailure {
  const kind = code === 'ARROW_UNSUPPORTED_TYPE' ? 'schema' : 'data';
  return new IngestFailure(
    ingestError(kind, code, `${file.name}: ${message}`, hint, {
      file: file.name,
      ...(column === undefined ? {} : { column }),
      ...(cause === undefined ? {} : { cause }),
    }),
  );
}

const REWRITE_HINT =
  'The producer must write the file completely (close the Arrow writer) before creating its .ready; then replay the file.';
const NOT_ARROW_HINT =
  'Write Arrow IPC (file format, i.e. Feather v2, or stream format) with an Arrow library, or give the file the extension ' +
  'of its real format; then replay it.';
const CORRUPT_HINT =
  'The file is damaged or was written by a faulty writer: write it again with an Arrow library (pyarrow, arrow-rs, Arrow ' +
  'C++, apache-arrow), then replay it.';
const HINTS: Record<IpcProblem['code'], string> = {
  ARROW_CORRUPT: CORRUPT_HINT,
  ARROW_NOT_IPC: NOT_ARROW_HINT,
  ARROW_TRUNCATED: REWRITE_HINT,
  ARROW_UNSUPPORTED: 'Write the file without that feature (e.g. with pyarrow defaults), then replay it.',
  ARROW_UNSUPPORTED_TYPE:
    'Cast that column in the producer to a type this reader takes (e.g. a union to one of its types), or drop it; then replay the file.',
  ARROW_BATCH_TOO_LARGE: 'Write the file with smaller record batches (e.g. 64k rows each), then replay it.',
  ENCODING_INVALID: 'Write the file with its column names in UTF-8 (as the format requires), then replay it.',
};

/** Turns a reader error (a problem found here, or apache-arrow's) into an `IngestError` naming the file. */
export function readError(file: ClaimedFile, error: unknown): IngestError {
  if (error instanceof IngestFailure) return error.error;
  if (error instanceof IpcProblem) return fail(error.code, file, error.message, HINTS[error.code], error, error.column).error;
  const message = error instanceof Error ? error.message : String(error);
  return fail('ARROW_CORRUPT', file, `the Arrow data cannot be decoded (${message})`, CORRUPT_HINT, error).error;
}

/** Runs `open`, reporting problems as `IngestFailure`s that name the file. */
async function reported<T>(file: ClaimedFile, open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    throw new IngestFailure(readError(file, error));
  }
}

/** The same bytes, with problems found while reading them reported as `IngestFailure`s. */
async function* guarded(file: ClaimedFile, bytes: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  try {
    yield* bytes;
  } catch (error) {
    throw new IngestFailure(readError(file, error));
  }
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
    return chunks.length === 1 ? chunks[0]! : concatBytes(chunks);
  }
}

/** The schema message alone, as the stream writer frames it (little-endian, V5). */
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

/** What opening found: the layout and the checked blocks, in file order. */
interface Opened {
  readonly format: 'file' | 'stream';
  readonly schema: Schema | Schemas;
  readonly shape: SchemaShape;
  readonly blocks: readonly Block[];
  readonly notes: string[];
  readonly rows: number;
  readonly nulls: readonly number[];
}

function source(file: ClaimedFile, opened: Opened, valuesChecked: boolean): IpcSource {
  const { shape, blocks, notes, rows, nulls } = opened;
  const { transport, logical, expansions } =
    'transport' in opened.schema ? opened.schema : { transport: opened.schema, logical: opened.schema, expansions: [] };
  if (transport !== logical) notes.push('list-view or run-end encoded columns: expanded');
  const schema = logical;
  const header = schemaMessage(transport);
  const streamBytes = (): AsyncIterable<Uint8Array> => guarded(file, safeMessages(file, header, blocks, shape));
  const check = (): Promise<void> => (valuesChecked ? Promise.resolve() : reported(file, () => checkMessages(file, blocks, shape)));
  return {
    format: opened.format,
    schema,
    passThrough: notes.length === 0,
    notes,
    rows,
    nulls,
    streamBytes,
    batches: () =>
      decode(
        streamBytes,
        (error) => new IngestFailure(readError(file, error)),
        transport === logical ? undefined : { logical, expansions },
      ),
    check,
  };
}

/** The block alone (its metadata, checked as it was read, is read again with its body: one message's metadata in memory at a time). */
function blockOf(framed: Block): Block {
  return {
    offset: framed.offset,
    prefix: framed.prefix,
    metadataLength: framed.metadataLength,
    bodyLength: framed.bodyLength,
    header: framed.header,
  };
}

/** What checking every message's metadata found, message by message as they are read. */
interface Tally {
  /** Checks one message's metadata (read with it by `readMessageAt`), and its values when asked; counts it. */
  add(block: Block, metadata: Uint8Array): Promise<void>;
  /** Notes what keeps the data from going to Hyper as it is; the rows and each column's NULLs of the record batches. */
  finish(notes: string[]): { rows: number; nulls: number[] };
}

/** `file` is given when the values are checked too (`OpenOptions.checkValues`). */
function tally(shape: SchemaShape, file: ClaimedFile | undefined): Tally {
  const sizes: DictionaryLengths = new Map();
  let compressed = false;
  let legacy = false;
  let rows = 0;
  const nulls = shape.fields.map(() => 0);
  return {
    async add(block, metadata) {
      const checked = checkBatchMessage(block, metadata, shape);
      if (file) await checkBlockValues(file, block, checked, shape.bigEndian, sizes);
      if (!checked.dictionary) {
        rows += checked.header.length;
        checked.plans.forEach((plan, k) => (nulls[k]! += plan.nullCount));
      }
      compressed ||= checked.header.codec !== null;
      legacy ||= block.prefix === 4 || readFlatbuffer('message metadata', () => fbMessage(metadata).version()) < 4;
    },
    finish(notes) {
      if (shape.bigEndian) notes.push('big-endian: swapped to little-endian');
      if (compressed) notes.push('compressed: decompressed');
      if (legacy) notes.push('pre-1.0 framing or metadata: re-encoded');
      return { rows, nulls };
    },
  };
}

export interface OpenOptions {
  /**
   * Run the value checks of `IpcSource.check` while opening, each message's buffers read right
   * after its metadata (one read of the metadata per message, not two); `check()` then has
   * nothing left to do. For a file hyperd will likely read itself.
   */
  readonly checkValues?: boolean;
}

/** Opens `file` as Arrow IPC; rejects with an `IngestFailure` (data or schema error) when it is not one this reader takes. */
export async function openIpc(file: ClaimedFile, options: OpenOptions = {}): Promise<IpcSource> {
  if (file.size === 0) {
    throw fail(
      'EMPTY_FILE',
      file,
      'is empty (0 bytes)',
      'An Arrow file holds at least its schema; write the file completely before creating its .ready, then replay it.',
    );
  }
  const head = await file.read(0, FILE_HEAD);
  const opened = await reported(file, () =>
    startsWithMagic(head) ? openFileFormat(file, options) : openStreamFormat(file, head, options),
  );
  return source(file, opened, options.checkValues === true);
}

function fbSchemaOf(metadata: Uint8Array): FbSchema {
  return readFlatbuffer('the schema', () => fbMessage(metadata).header(new FbSchema()) as FbSchema);
}

/** The schema apache-arrow decodes batches with, and the one they are planned and loaded by. */
export interface Schemas {
  readonly transport: Schema;
  readonly logical: Schema;
  readonly expansions: readonly Expansion[];
}

function decodedSchema(metadata: Uint8Array, fbSchema: FbSchema): Schema | Schemas {
  if (schemaHoldsEncoded(fbSchema)) return encodedSchemas(fbSchema);
  try {
    const schema = Message.decode(metadata).header() as Schema | null;
    if (!schema) throw new Error('no schema');
    return schema;
  } catch (error) {
    throw corrupt(`the schema cannot be decoded (${error instanceof Error ? error.message : String(error)})`);
  }
}

async function openFileFormat(file: ClaimedFile, options: OpenOptions): Promise<Opened> {
  if (file.size < FILE_HEAD + FILE_TAIL)
    throw new IpcProblem('ARROW_TRUNCATED', `starts like an Arrow IPC file but is only ${file.size} bytes long`);
  const tail = await file.read(file.size - FILE_TAIL, FILE_TAIL);
  if (!startsWithMagic(tail.subarray(4)))
    throw new IpcProblem(
      'ARROW_TRUNCATED',
      'starts like an Arrow IPC file (ARROW1) but does not end with its footer: the file is incomplete or truncated',
    );
  const footerLength = int32At(tail, 0);
  const footerStart = file.size - FILE_TAIL - footerLength;
  if (footerLength <= 0 || footerStart < FILE_HEAD)
    throw corrupt(`the Arrow file footer length (${footerLength}) does not fit the file (${file.size} bytes)`);
  const footerBytes = await file.read(footerStart, footerLength);
  verifyFooter(footerBytes);
  const { shape, places } = readFlatbuffer('the Arrow file footer', () => {
    const footer = FbFooter.getRootAsFooter(new ByteBuffer(footerBytes));
    const fbSchema = footer.schema();
    if (!fbSchema) throw corrupt('the Arrow file footer holds no schema');
    const places: { offset: number; what: string }[] = [];
    const count = footer.dictionariesLength() + footer.recordBatchesLength();
    if (count * 24 > footerLength) throw corrupt(`the Arrow file footer lists ${count} blocks, more than its ${footerLength} bytes hold`);
    for (let i = 0; i < footer.dictionariesLength(); i++)
      places.push({
        offset: checkedSize(footer.dictionaries(i)?.offset() ?? -1n, footerStart, `the offset of dictionary block ${i}`),
        what: 'dictionary',
      });
    for (let i = 0; i < footer.recordBatchesLength(); i++)
      places.push({
        offset: checkedSize(footer.recordBatches(i)?.offset() ?? -1n, footerStart, `the offset of record batch block ${i}`),
        what: 'record batch',
      });
    return { shape: shapeOfSchema(fbSchema), places };
  });
  let schema: Schema | Schemas;
  try {
    const fbSchema = FbFooter.getRootAsFooter(new ByteBuffer(footerBytes)).schema()!;
    schema = schemaHoldsEncoded(fbSchema) ? encodedSchemas(fbSchema) : Footer.decode(footerBytes).schema;
  } catch (error) {
    if (error instanceof IpcProblem) throw error;
    throw corrupt(`the schema in the Arrow file footer cannot be decoded (${error instanceof Error ? error.message : String(error)})`);
  }
  // Dictionaries and batches in file order: a dictionary (or delta) precedes the batches using it.
  places.sort((a, b) => a.offset - b.offset);
  const blocks: Block[] = [];
  const checks = tally(shape, options.checkValues ? file : undefined);
  const breathe = makeBreather();
  for (const place of places) {
    if (place.offset < FILE_HEAD)
      throw corrupt(`the Arrow file footer lists a ${place.what} block at byte ${place.offset}, inside the file's magic`);
    const message = await readMessageAt(file, place.offset, footerStart);
    if (message.end) throw corrupt(`the Arrow file footer lists a ${place.what} block at byte ${place.offset}, where the data ends`);
    await checks.add(message, message.metadata);
    blocks.push(blockOf(message));
    await breathe();
  }
  const notes: string[] = [];
  return { format: 'file', schema, shape, blocks, notes, ...checks.finish(notes) };
}

async function openStreamFormat(file: ClaimedFile, head: Uint8Array, options: OpenOptions): Promise<Opened> {
  const modern = head.length >= 4 && int32At(head, 0) === -1;
  const metadataLength = head.length >= (modern ? 8 : 4) ? int32At(head, modern ? 4 : 0) : -1;
  if (!modern && (metadataLength <= 0 || metadataLength > file.size - 4)) {
    const shown = Array.from(head.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join(' ');
    throw new IpcProblem(
      'ARROW_NOT_IPC',
      `is not Arrow IPC data: it starts with neither "ARROW1" (file format) nor an IPC message (stream format), but with bytes ${shown}`,
    );
  }
  const first = await readMessageAt(file, 0, file.size);
  if (first.end) throw corrupt('the Arrow stream ends (end-of-stream marker) before its schema');
  if (first.header !== MessageHeader.Schema) throw corrupt('the Arrow stream does not start with its schema');
  const shape = readFlatbuffer('the schema', () => {
    const fbSchema = fbMessage(first.metadata).header(new FbSchema()) as FbSchema | null;
    if (!fbSchema) throw corrupt('the schema message holds no schema');
    return shapeOfSchema(fbSchema);
  });
  const schema = decodedSchema(first.metadata, fbSchemaOf(first.metadata));
  const blocks: Block[] = [];
  const checks = tally(shape, options.checkValues ? file : undefined);
  const breathe = makeBreather();
  let at = first.offset + first.prefix + first.metadataLength + first.bodyLength;
  // A stream ends with its end-of-stream marker, or where the file ends at a message boundary.
  while (at < file.size) {
    const message = await readMessageAt(file, at, file.size);
    if (message.end) break;
    await checks.add(message, message.metadata);
    blocks.push(blockOf(message));
    at = message.offset + message.prefix + message.metadataLength + message.bodyLength;
    await breathe();
  }
  const notes: string[] = [];
  return { format: 'stream', schema, shape, blocks, notes, ...checks.finish(notes) };
}
