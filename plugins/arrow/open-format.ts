/**
 * Reading Arrow IPC's two layouts into one list of checked blocks: the file format from its
 * footer's blocks, the stream format message by message. Every message's metadata is checked
 * (and with `checkValues` its buffers) as it is read, and tallied: rows, NULLs, and what keeps
 * the data from going to Hyper as it is. `source.ts` makes an `IpcSource` of what this returns.
 */
import { ByteBuffer } from 'flatbuffers';
import type { Schema } from 'apache-arrow';
import { Footer as FbFooter } from 'apache-arrow/fb/footer';
import { MessageHeader } from 'apache-arrow/fb/message-header';
import { Footer } from 'apache-arrow/ipc/metadata/file';
import { Message } from 'apache-arrow/ipc/metadata/message';
import type { ClaimedFile } from '../../src/types.ts';
import { type Block, checkBatchMessage, checkBlockValues, type DictionaryLengths, readMessageAt } from './messages.ts';
import { checkedSize, corrupt, IpcProblem, makeBreather } from './problem.ts';
import { fbMessage, FbSchema, readFlatbuffer, type SchemaShape, shapeOfSchema } from './shape.ts';
import { verifyFooter } from './verify.ts';
import { encodedSchemas, type Expansion, schemaHoldsEncoded } from './encoded.ts';

const MAGIC = 'ARROW1';
/** `ARROW1` plus two bytes of padding at the start of a file. */
export const FILE_HEAD = 8;
/** Footer length (int32) plus `ARROW1` at the end of a file. */
const FILE_TAIL = 10;

function int32At(bytes: Uint8Array, at: number): number {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getInt32(at, true);
}

export function startsWithMagic(bytes: Uint8Array): boolean {
  return bytes.length >= MAGIC.length && new TextDecoder().decode(bytes.subarray(0, MAGIC.length)) === MAGIC;
}

/** What opening found: the layout and the checked blocks, in file order. */
export interface Opened {
  readonly format: 'file' | 'stream';
  readonly schema: Schema | Schemas;
  readonly shape: SchemaShape;
  readonly blocks: readonly Block[];
  readonly notes: string[];
  readonly rows: number;
  readonly nulls: readonly number[];
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

export async function openFileFormat(file: ClaimedFile, options: OpenOptions): Promise<Opened> {
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

export async function openStreamFormat(file: ClaimedFile, head: Uint8Array, options: OpenOptions): Promise<Opened> {
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
