/**
 * Arrow IPC messages, read one at a time from a claimed file and checked before anything is
 * decoded or sent on.
 *
 * `readMessageAt` reads one message's framing and metadata (continuation token or the pre-0.15
 * framing; a zero length is the end-of-stream marker) and tells a message cut by the end of the
 * file (truncated) from one whose numbers cannot be right (corrupt). `checkBatchMessage` checks a
 * record or dictionary batch's metadata against the schema's layout. `safeMessages` turns a
 * list of checked blocks into one IPC stream of checked, decompressed, little-endian messages,
 * which both Hyper and apache-arrow's reader then take as it is.
 */
import { MessageHeader } from 'apache-arrow/fb/message-header';
import { DictionaryBatch as FbDictionaryBatch } from 'apache-arrow/fb/dictionary-batch';
import { RecordBatch as FbRecordBatch } from 'apache-arrow/fb/record-batch';
import { BufferRegion, DictionaryBatch, FieldNode, Message, RecordBatch } from 'apache-arrow/ipc/metadata/message';
import type { ClaimedFile } from '../../src/types.ts';
import { safeBody } from './body.ts';
import { checkValues, valueBuffers } from './value-checks.ts';
import { type BatchHeader, MAX_BODY, type NodePlan, planBatch, readBatchHeader, type Region } from './layout.ts';
import { corrupt, IpcProblem, makeBreather } from './problem.ts';
import { fbMessage, readFlatbuffer, type SchemaShape } from './shape.ts';
import { verifyMessage } from './verify.ts';

/** Message metadata (a flatbuffer of a few hundred bytes, more for wide schemas) past this is refused. */
const MAX_METADATA = 64 << 20;
export const EOS = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0);

/** One message in the file: where its metadata and its body are. */
export interface Block {
  readonly offset: number;
  /** 8 (continuation token and length) or 4 (pre-0.15 framing: length only). */
  readonly prefix: number;
  readonly metadataLength: number;
  readonly bodyLength: number;
  readonly header: MessageHeader;
}

/** What `readMessageAt` found: a message, or the end-of-stream marker. */
export type Framed = { readonly end: true; readonly prefix: number } | (Block & { readonly end: false; readonly metadata: Uint8Array });

const truncated = (message: string): IpcProblem => new IpcProblem('ARROW_TRUNCATED', message);

/** Bytes read at once at a message's start: its framing and, mostly, its whole metadata (one read, not two). */
const PEEK = 4096;

/** Reads the message starting at `offset`; the file's data ends at `limit` (its footer, for the file format). */
export async function readMessageAt(file: ClaimedFile, offset: number, limit: number): Promise<Framed> {
  const peek = await file.read(offset, Math.max(0, Math.min(PEEK, limit - offset)));
  const head = peek.subarray(0, 8);
  if (head.length < 4) throw truncated(`the Arrow data ends inside a message's length prefix (at byte ${offset})`);
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  const modern = view.getInt32(0, true) === -1;
  if (modern && head.length < 8) throw truncated(`the Arrow data ends inside a message's length prefix (at byte ${offset})`);
  const prefix = modern ? 8 : 4;
  const metadataLength = view.getInt32(prefix - 4, true);
  if (metadataLength === 0) return { end: true, prefix };
  if (metadataLength < 0 || metadataLength > MAX_METADATA)
    throw corrupt(`the message at byte ${offset} gives a metadata length of ${metadataLength}`);
  const metadataStart = offset + prefix;
  if (metadataStart + metadataLength > limit) throw truncated(`the Arrow data ends inside the metadata of the message at byte ${offset}`);
  const metadata =
    prefix + metadataLength <= peek.length ? peek.slice(prefix, prefix + metadataLength) : await file.read(metadataStart, metadataLength);
  verifyMessage(metadata, `the metadata of the message at byte ${offset}`);
  const { header, bodyLength } = readFlatbuffer(`the metadata of the message at byte ${offset}`, () => {
    const message = fbMessage(metadata);
    return { header: message.headerType(), bodyLength: message.bodyLength() };
  });
  const bodyStart = metadataStart + metadataLength;
  if (bodyLength < 0n) throw corrupt(`the message at byte ${offset} gives a body length of ${bodyLength}`);
  if (bodyLength > BigInt(limit - bodyStart)) {
    if (bodyLength > BigInt(MAX_BODY))
      throw corrupt(`the message at byte ${offset} gives a body length of ${bodyLength} bytes, more than the file holds`);
    throw truncated(
      `the Arrow data ends inside the body of the message at byte ${offset} (${bodyLength} bytes announced, ${limit - bodyStart} there)`,
    );
  }
  return { end: false, offset, prefix, metadataLength, bodyLength: Number(bodyLength), header, metadata };
}

/** A batch message's header, its plan against the layout, and (dictionaries) its id and delta flag. */
export interface CheckedBatch {
  readonly header: BatchHeader;
  readonly plans: readonly NodePlan[];
  readonly dictionary?: { readonly id: bigint; readonly isDelta: boolean };
}

/** Checks a record batch or dictionary batch message's metadata against the schema's layout. */
export function checkBatchMessage(block: Block, metadata: Uint8Array, shape: SchemaShape): CheckedBatch {
  verifyMessage(metadata, `the metadata of the message at byte ${block.offset}`);
  return readFlatbuffer(`the metadata of the message at byte ${block.offset}`, () => {
    const message = fbMessage(metadata);
    const unionValidity = message.version() < 4;
    if (block.header === MessageHeader.RecordBatch) {
      const batch = message.header(new FbRecordBatch()) as FbRecordBatch | null;
      if (!batch) throw corrupt(`the record batch message at byte ${block.offset} has no header`);
      const header = readBatchHeader(batch, block.bodyLength, block.metadataLength);
      return { header, plans: planBatch(shape.fields, header, unionValidity) };
    }
    if (block.header === MessageHeader.DictionaryBatch) {
      const batch = message.header(new FbDictionaryBatch()) as FbDictionaryBatch | null;
      const data = batch?.data();
      if (!batch || !data) throw corrupt(`the dictionary batch message at byte ${block.offset} has no data`);
      const id = batch.id();
      const values = shape.dictionaries.get(id);
      if (!values) throw corrupt(`a dictionary batch has id ${id}, which no column of the schema uses`);
      const header = readBatchHeader(data, block.bodyLength, block.metadataLength);
      // The dictionary's values are one column of the batch; its length is the dictionary's.
      const plans = planBatch([values], header, unionValidity);
      return { header, plans, dictionary: { id, isDelta: batch.isDelta() } };
    }
    if (block.header === MessageHeader.Schema) throw corrupt(`a second schema message at byte ${block.offset}`);
    const name = (MessageHeader as unknown as Record<number, string>)[block.header] ?? `type ${block.header}`;
    if (block.header === MessageHeader.Tensor || block.header === MessageHeader.SparseTensor) {
      throw new IpcProblem('ARROW_UNSUPPORTED', `the file holds a ${name} message; only tables (record batches) are read`);
    }
    throw corrupt(`the message at byte ${block.offset} has an unknown kind (${name})`);
  });
}

/** The metadata as a message the current framing carries: continuation token, padded length, flatbuffer. */
function frame(metadata: Uint8Array): Uint8Array {
  const padded = (metadata.length + 7) & ~7;
  const out = new Uint8Array(8 + padded);
  const view = new DataView(out.buffer);
  view.setInt32(0, -1, true);
  view.setInt32(4, padded, true);
  out.set(metadata, 8);
  return out;
}

type Node = { readonly length: number; readonly nullCount: number };
const NO_BUFFER: Region = { offset: 0, length: 0 };

/**
 * The nodes and buffers of a batch in transport form (encoded.ts): a list view as a struct of its
 * offsets, sizes and values, run-end encoding as a struct of its run ends and values. The buffers
 * stay where they are; only the metadata lists them differently.
 */
function transportLayout(plans: readonly NodePlan[], regions: readonly Region[]): { nodes: Node[]; buffers: Region[] } {
  const nodes: Node[] = [];
  const buffers: Region[] = [];
  const region = (plan: NodePlan, role: string): Region => regions[plan.buffers.find((b) => b.role === role)!.index]!;
  const walk = (plan: NodePlan): void => {
    const { length, nullCount } = plan;
    if (plan.shape.layout === 'list-view32' || plan.shape.layout === 'list-view64') {
      nodes.push({ length, nullCount }, { length, nullCount: 0 });
      buffers.push(region(plan, 'validity'), NO_BUFFER, region(plan, 'view-offsets'));
      nodes.push({ length, nullCount: 0 });
      buffers.push(NO_BUFFER, region(plan, 'sizes'));
    } else if (plan.shape.layout === 'run-end') {
      nodes.push({ length, nullCount: 0 });
      buffers.push(NO_BUFFER);
    } else {
      nodes.push({ length, nullCount });
      for (const b of plan.buffers) buffers.push(regions[b.index]!);
    }
    plan.children.forEach(walk);
  };
  plans.forEach(walk);
  return { nodes, buffers };
}

/** A batch's metadata again, with its buffers where decompression put them, no compression, and (`encoded`) in transport form. */
function reencode(checked: CheckedBatch, regions: readonly Region[], bodyLength: number, encoded: boolean): Uint8Array {
  const { header } = checked;
  const layout = encoded ? transportLayout(checked.plans, regions) : { nodes: header.nodes, buffers: regions };
  const batch = new RecordBatch(
    header.length,
    layout.nodes.map((n) => new FieldNode(n.length, n.nullCount)),
    layout.buffers.map((r) => new BufferRegion(r.offset, r.length)),
    null,
    [...header.variadicCounts],
  );
  const message = checked.dictionary
    ? Message.from(new DictionaryBatch(batch, checked.dictionary.id, checked.dictionary.isDelta), bodyLength)
    : Message.from(batch, bodyLength);
  return Message.encode(message);
}

/**
 * The blocks as one IPC stream: `schemaMessage` first, then each message with its body checked
 * (and decompressed and swapped where needed), then the end-of-stream marker. One body is in
 * memory at a time.
 */
export async function* safeMessages(
  file: ClaimedFile,
  schemaMessage: Uint8Array,
  blocks: readonly Block[],
  shape: SchemaShape,
): AsyncIterable<Uint8Array> {
  const breathe = makeBreather();
  const sizes = new Map<bigint, number>();
  yield schemaMessage;
  for (const block of blocks) {
    const metadataStart = block.offset + block.prefix;
    const metadata = await file.read(metadataStart, block.metadataLength);
    const checked = checkBatchMessage(block, metadata, shape);
    const raw = await file.read(metadataStart + block.metadataLength, block.bodyLength);
    if (raw.length !== block.bodyLength) throw truncated(`the Arrow data ends inside the body of the message at byte ${block.offset}`);
    const safe = safeBody(checked.header, checked.plans, raw, shape.bigEndian, sizes);
    if (checked.dictionary) {
      const { id, isDelta } = checked.dictionary;
      sizes.set(id, (isDelta ? (sizes.get(id) ?? 0) : 0) + checked.header.length);
    }
    yield frame(
      safe.regions || shape.encoded ? reencode(checked, safe.regions ?? checked.header.buffers, safe.body.length, shape.encoded) : metadata,
    );
    if (safe.body.length > 0) yield safe.body;
    await breathe();
  }
  yield EOS;
}

/**
 * Runs the checks `safeMessages` runs on every message, for a file hyperd then reads itself from
 * its path: the same metadata checks, and the same value checks, but reading from each body only
 * the buffers those checks look at (`valueBuffers`: offsets, dictionary indices, views, union ids).
 *
 * Why that refuses every damaged file the full pass refuses, for the files this is used on
 * (uncompressed, little-endian, so the bytes on disk are the bytes checked): the full pass reads
 * the other buffers only to hand them on, and checks nothing in them. Their place was checked
 * from the metadata alone (`readBatchHeader`, `planBatch`: each buffer inside its body, long
 * enough for its node's rows; each body inside the file, `readMessageAt`), and a fixed-width
 * value, a validity bit or a boolean is a value of its type whatever its bytes are: no bytes in
 * them can make a reader go outside the file or read another row. Compressed or big-endian files
 * are read whole here too (they never reach hyperd as they are).
 */
export async function checkMessages(file: ClaimedFile, blocks: readonly Block[], shape: SchemaShape): Promise<void> {
  const breathe = makeBreather();
  const sizes: DictionaryLengths = new Map();
  for (const block of blocks) {
    const metadata = await file.read(block.offset + block.prefix, block.metadataLength);
    await checkBlockValues(file, block, checkBatchMessage(block, metadata, shape), shape.bigEndian, sizes);
    await breathe();
  }
}

/** The current length of each dictionary, by id, as the messages so far set it. */
export type DictionaryLengths = Map<bigint, number>;

/** One message's value checks (see `checkMessages`), its metadata already checked; counts its dictionary. */
export async function checkBlockValues(
  file: ClaimedFile,
  block: Block,
  checked: CheckedBatch,
  bigEndian: boolean,
  sizes: DictionaryLengths,
): Promise<void> {
  const bodyStart = block.offset + block.prefix + block.metadataLength;
  if (checked.header.codec !== null || bigEndian) {
    const raw = await file.read(bodyStart, block.bodyLength);
    if (raw.length !== block.bodyLength) throw truncated(`the Arrow data ends inside the body of the message at byte ${block.offset}`);
    safeBody(checked.header, checked.plans, raw, bigEndian, sizes);
  } else {
    const regions = checked.header.buffers;
    const read = new Map<number, Uint8Array>();
    for (const index of valueBuffers(checked.plans)) {
      const region = regions[index]!;
      const bytes = region.length === 0 ? new Uint8Array(0) : await file.read(bodyStart + region.offset, region.length);
      if (bytes.length !== region.length) throw truncated(`the Arrow data ends inside the body of the message at byte ${block.offset}`);
      read.set(index, bytes);
    }
    const bytesOf = (index: number): Uint8Array => {
      const bytes = read.get(index);
      // valueBuffers and checkValues name the same buffers; a miss is a bug here, not in the file.
      if (!bytes) throw new Error(`buffer ${index} was not read for its value check`);
      return bytes;
    };
    for (const plan of checked.plans) checkValues(plan, bytesOf, (index) => regions[index]!.length, sizes);
  }
  if (checked.dictionary) {
    const { id, isDelta } = checked.dictionary;
    sizes.set(id, (isDelta ? (sizes.get(id) ?? 0) : 0) + checked.header.length);
  }
}
