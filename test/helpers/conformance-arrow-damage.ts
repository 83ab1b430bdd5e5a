/**
 * Damaged Arrow data for the conformance suite, each made from a valid stream by changing one
 * thing the format fixes: a length, an offset, a count, an id, a type. Every one of them must be
 * refused (nothing lands), quickly, with an error that says what is wrong.
 */
import { ByteBuffer } from 'flatbuffers';
import { Field, Int32, List, Schema, Table, tableToIPC, vectorFromArray } from 'apache-arrow';
import { Message as FbMessage } from 'apache-arrow/fb/message';
import { Schema as FbSchema } from 'apache-arrow/fb/schema';
import {
  BodyCompression,
  BufferRegion,
  FieldNode,
  joinStream,
  Message,
  type RawMessage,
  RecordBatch,
  splitStream,
  withBatch,
  withDictionaryId,
} from './conformance-arrow-ipc.ts';
import { dictionaryTable, inBatches, plainTable } from './conformance-arrow-writers.ts';
import { concatBytes } from '../../src/util/bytes.ts';

export interface Damaged {
  readonly name: string;
  readonly bytes: Uint8Array;
  /** The code the refusal must carry. */
  readonly code: RegExp;
  /** The column the refusal must name, when the damage is in one. */
  readonly column?: string;
}

const asIs = (m: RawMessage): { metadata: Uint8Array; body: Uint8Array } => ({ metadata: m.metadata, body: m.body });

/** The position of field `k`'s type id byte in a schema message's metadata. */
function typeIdPosition(metadata: Uint8Array, k: number): number {
  const schema = FbMessage.getRootAsMessage(new ByteBuffer(metadata)).header(new FbSchema()) as FbSchema;
  const field = schema.fields(k)!;
  const slot = field.bb!.__offset(field.bb_pos, 8);
  if (!slot) throw new Error('no type id in the field');
  return field.bb_pos + slot;
}

/** Streams with one thing wrong each (the base: 1,000 rows of id, value, name, at in two batches). */
export function damagedStreams(): Damaged[] {
  const base = tableToIPC(inBatches(plainTable(1000), 500), 'stream');
  const messages = splitStream(base);
  const [schema, first, second] = [messages[0]!, messages[1]!, messages[2]!];
  const rebuilt = (firstMetadata: Uint8Array, firstBody = first.body): Uint8Array =>
    joinStream([asIs(schema), { metadata: firstMetadata, body: firstBody }, asIs(second)]);
  const header = first.message.header() as { buffers: BufferRegion[]; nodes: FieldNode[]; length: number };
  const buffers = (k: number, region: BufferRegion): BufferRegion[] => header.buffers.map((b, i) => (i === k ? region : b));
  const out: Damaged[] = [];
  out.push({ name: 'cut inside a record batch body', bytes: base.subarray(0, base.length - 8 - 100), code: /^ARROW_TRUNCATED$/ });
  out.push({ name: 'cut inside the end-of-stream marker', bytes: base.subarray(0, base.length - 4), code: /^ARROW_TRUNCATED$/ });
  out.push({
    name: 'buffer offset past the body',
    bytes: rebuilt(withBatch(first.message, { buffers: buffers(6, new BufferRegion(first.body.length + 64, 8)) })),
    code: /^ARROW_CORRUPT$/,
  });
  out.push({
    name: 'buffer length past the body',
    bytes: rebuilt(withBatch(first.message, { buffers: buffers(6, new BufferRegion(header.buffers[6]!.offset, first.body.length * 4)) })),
    code: /^ARROW_CORRUPT$/,
  });
  out.push({
    name: 'body length past the file (1 TiB)',
    bytes: rebuilt(withBatch(first.message, { bodyLength: 2 ** 40 })),
    code: /^ARROW_CORRUPT$/,
  });
  out.push({
    name: 'negative node length',
    bytes: rebuilt(withBatch(first.message, { nodes: header.nodes.map((n, i) => (i === 2 ? new FieldNode(-5, 0) : n)) })),
    code: /^ARROW_CORRUPT$/,
  });
  out.push({
    name: 'row count of 2^40',
    bytes: rebuilt(withBatch(first.message, { length: 2 ** 40, nodes: header.nodes.map(() => new FieldNode(2 ** 40, 0)) })),
    code: /^ARROW_CORRUPT$/,
  });
  out.push({
    name: 'row count of 100M over 500 rows of buffers',
    bytes: rebuilt(withBatch(first.message, { length: 1e8, nodes: header.nodes.map(() => new FieldNode(1e8, 0)) })),
    code: /^ARROW_CORRUPT$/,
    column: 'id',
  });
  out.push({
    name: 'null count above the length',
    bytes: rebuilt(withBatch(first.message, { nodes: header.nodes.map((n, i) => (i === 0 ? new FieldNode(n.length, n.length + 1) : n)) })),
    code: /^ARROW_CORRUPT$/,
  });
  // The name column's offsets are buffer 5 (id: validity, values; value: validity, values; name: validity, offsets, data).
  const offsets = (change: (view: DataView, region: BufferRegion) => void): Uint8Array => {
    const body = first.body.slice();
    change(new DataView(body.buffer), header.buffers[5]!);
    return rebuilt(withBatch(first.message, {}), body);
  };
  out.push({
    name: 'string offsets past the data',
    bytes: offsets((v, r) => v.setInt32(r.offset + 500 * 4, 1e8, true)),
    code: /^ARROW_CORRUPT$/,
    column: 'name',
  });
  out.push({
    name: 'string offsets going down',
    bytes: offsets((v, r) => v.setInt32(r.offset + 250 * 4, 1, true)),
    code: /^ARROW_CORRUPT$/,
    column: 'name',
  });
  const garbage = withBatch(first.message, {}).slice();
  for (let i = 0; i < garbage.length; i++) garbage[i] = (i * 7919 + 13) & 0xff;
  out.push({ name: 'record batch metadata overwritten', bytes: rebuilt(garbage), code: /^ARROW_CORRUPT$/ });
  const hugeMetadata = base.slice();
  // The first batch's length prefix follows the schema message (which has no body).
  new DataView(hugeMetadata.buffer).setInt32(8 + schema.metadata.length + 4, 0x7ffffff0, true);
  out.push({ name: 'metadata length of 2 GiB', bytes: hugeMetadata, code: /^ARROW_(CORRUPT|TRUNCATED)$/ });

  // Dictionaries: an id no column uses, and an index past the dictionary.
  const dict = splitStream(tableToIPC(dictionaryTable(), 'stream'));
  const dictStream = (change: (m: RawMessage, k: number) => { metadata: Uint8Array; body: Uint8Array }): Uint8Array =>
    joinStream(dict.map((m, k) => change(m, k)));
  out.push({
    name: 'dictionary batch with an unknown id',
    bytes: dictStream((m) => (m.message.isDictionaryBatch() ? { metadata: withDictionaryId(m.message, 99), body: m.body } : asIs(m))),
    code: /^ARROW_CORRUPT$/,
  });
  out.push({
    name: 'dictionary index past the dictionary',
    bytes: dictStream((m) => {
      if (!m.message.isRecordBatch()) return asIs(m);
      const body = m.body.slice();
      const indices = (m.message.header() as { buffers: BufferRegion[] }).buffers[3]!;
      new DataView(body.buffer).setInt32(indices.offset, 50, true);
      return { metadata: withBatch(m.message, {}), body };
    }),
    code: /^ARROW_CORRUPT$/,
    column: 'tag',
  });

  // A compressed buffer announcing 1.5 GB for 500 rows of int32 (a "zip bomb").
  const zstdLike = compressedHeader(first, 1, 1_500_000_000n);
  out.push({
    name: 'compressed buffer announcing 1.5 GB for 500 rows',
    bytes: rebuilt(zstdLike.metadata, zstdLike.body),
    code: /^ARROW_CORRUPT$/,
    column: 'id',
  });

  // A list nested 100 deep (schema only).
  let type: List | Int32 = new Int32();
  for (let depth = 0; depth < 100; depth++) type = new List(new Field('item', type, true));
  out.push({
    name: 'list nested 100 levels deep',
    bytes: tableToIPC(new Table(new Schema([new Field('deep', type, true)])), 'stream'),
    code: /^ARROW_CORRUPT$/,
    column: 'deep',
  });
  return out;
}

/**
 * The batch as a ZSTD-compressed one whose buffers are all left uncompressed (-1), but buffer
 * `k`, whose prefix announces `announced` bytes (its data is a tiny ZSTD frame).
 */
function compressedHeader(m: RawMessage, k: number, announced: bigint): { metadata: Uint8Array; body: Uint8Array } {
  const header = m.message.header() as RecordBatch;
  const parts: Uint8Array[] = [];
  const regions: BufferRegion[] = [];
  let at = 0;
  header.buffers.forEach((region, i) => {
    const raw = m.body.subarray(region.offset, region.offset + region.length);
    if (raw.length === 0 && i !== k) {
      regions.push(new BufferRegion(at, 0));
      return;
    }
    const prefix = new Uint8Array(8);
    new DataView(prefix.buffer).setBigInt64(0, i === k ? announced : -1n, true);
    // An empty ZSTD frame stands in for the compressed data (never decoded: the prefix is refused first).
    const data = i === k ? Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x00, 0x01, 0x00, 0x00) : raw;
    const padding = new Uint8Array(((8 + data.length + 7) & ~7) - (8 + data.length));
    regions.push(new BufferRegion(at, 8 + data.length));
    parts.push(prefix, data, padding);
    at += 8 + data.length + padding.length;
  });
  const batch = new RecordBatch(header.length, header.nodes, regions, new BodyCompression(1), header.variadicBufferCounts);
  return { metadata: Message.encode(Message.from(batch, at)), body: concatBytes(parts) };
}

/** A large stream (1M rows, 16 batches) whose last batch has a string offset past its data. */
export function bigDamagedStream(): Uint8Array {
  const messages = splitStream(tableToIPC(inBatches(plainTable(1_000_000), 65_536), 'stream'));
  const last = messages[messages.length - 1]!;
  const header = last.message.header() as RecordBatch;
  const body = last.body.slice();
  const offsets = header.buffers[5]!;
  new DataView(body.buffer).setInt32(offsets.offset + header.length * 4, 0x7fff0000, true);
  return joinStream(messages.map((m) => (m === last ? { metadata: m.metadata, body } : { metadata: m.metadata, body: m.body })));
}

/**
 * A file whose column `list` is given another type id in the schema (the batches stay a list's):
 * a list view's batch has one buffer more, and run-end encoding two children, so the batch no
 * longer fits its schema.
 */
export function unknownTypeStreams(): Damaged[] {
  const table = new Table({ id: vectorOf([1, 2]), list: listOf([[1], [2, 3]]) });
  const bytes = tableToIPC(table, 'stream');
  const out: Damaged[] = [];
  for (const [label, id] of [
    ['ListView', 25],
    ['LargeListView', 26],
    ['RunEndEncoded', 22],
  ] as const) {
    const copy = bytes.slice();
    const metadataLength = new DataView(copy.buffer).getInt32(4, true);
    const at = 8 + typeIdPosition(copy.subarray(8, 8 + metadataLength), 1);
    copy[at] = id;
    out.push({ name: `column of type ${label} over a list's batch`, bytes: copy, code: /^ARROW_CORRUPT$/ });
  }
  return out;
}

const vectorOf = (values: number[]) => vectorFromArray(values, new Int32());
const listOf = (values: number[][]) => vectorFromArray(values, new List(new Field('item', new Int32(), true)));
