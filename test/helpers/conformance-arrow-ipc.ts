/**
 * Rewriting Arrow IPC streams at the message level, for the conformance suite: a big-endian copy
 * of a little-endian stream (as the format allows: the schema says which byte order the buffers
 * are in), and damaged copies (lengths, offsets, ids out of range). Written from the format's
 * specification with apache-arrow's metadata classes, independently of the reader under test.
 */
import { DataType, type Field, type Schema } from 'apache-arrow';
import { Endianness } from 'apache-arrow/fb/endianness';
import { ByteBuffer } from 'flatbuffers';
import { Message as FbMessage } from 'apache-arrow/fb/message';
import { Schema as FbSchema } from 'apache-arrow/fb/schema';
import { FileBlock, Footer } from 'apache-arrow/ipc/metadata/file';
import { BodyCompression, BufferRegion, DictionaryBatch, FieldNode, Message, RecordBatch } from 'apache-arrow/ipc/metadata/message';
import { concatBytes } from '../../src/util/bytes.ts';

/** One message of a stream: its decoded metadata and its body. */
export interface RawMessage {
  message: Message;
  /** The metadata as it was written. */
  metadata: Uint8Array;
  body: Uint8Array;
}

/** Splits an IPC stream (current framing) into messages; stops at the end-of-stream marker. */
export function splitStream(bytes: Uint8Array): RawMessage[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: RawMessage[] = [];
  let at = 0;
  while (at + 8 <= bytes.length) {
    const length = view.getInt32(at + 4, true);
    if (length === 0) break;
    const metadata = bytes.slice(at + 8, at + 8 + length);
    const message = Message.decode(metadata);
    const start = at + 8 + length;
    out.push({ message, metadata, body: bytes.slice(start, start + message.bodyLength) });
    at = start + message.bodyLength;
  }
  return out;
}

/** Frames metadata and body as a stream message (continuation token, padded length). */
function framed(metadata: Uint8Array, body: Uint8Array): Uint8Array[] {
  const padded = (metadata.length + 7) & ~7;
  const prefix = new Uint8Array(8);
  new DataView(prefix.buffer).setInt32(0, -1, true);
  new DataView(prefix.buffer).setInt32(4, padded, true);
  const meta = new Uint8Array(padded);
  meta.set(metadata);
  return [prefix, meta, body];
}

/** Joins messages back into a stream; `eos` adds the end-of-stream marker. */
export function joinStream(messages: readonly { metadata: Uint8Array; body: Uint8Array }[], eos = true): Uint8Array {
  const parts = messages.flatMap((m) => framed(m.metadata, m.body));
  if (eos) parts.push(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0));
  return concatBytes(parts);
}

/** Runs `encode` with apache-arrow's schema encoder writing big-endian as the byte order. */
function asBigEndian<T>(encode: () => T): T {
  const original = FbSchema.addEndianness;
  FbSchema.addEndianness = (builder) => builder.addFieldInt16(0, Endianness.Big, Endianness.Little);
  try {
    return encode();
  } finally {
    FbSchema.addEndianness = original;
  }
}

/** The schema message with the byte order set to big-endian. */
function bigEndianSchema(schema: Schema): Uint8Array {
  return asBigEndian(() => Message.encode(Message.from(schema)));
}

/** Whether a schema message's metadata says big-endian. */
function saysBigEndian(metadata: Uint8Array): boolean {
  const schema = FbMessage.getRootAsMessage(new ByteBuffer(metadata)).header(new FbSchema()) as FbSchema | null;
  return schema?.endianness() === Endianness.Big;
}

/** Per buffer of one node (in layout order): the byte widths of the parts of a value to reverse. */
function bufferParts(type: DataType, out: number[][]): void {
  if (DataType.isDictionary(type)) {
    out.push([], [type.indices.bitWidth / 8]);
    return;
  }
  if (DataType.isNull(type)) return;
  if (DataType.isBool(type)) out.push([], []);
  else if (DataType.isInt(type)) out.push([], [type.bitWidth / 8]);
  else if (DataType.isFloat(type)) out.push([], [2 << type.precision]);
  else if (DataType.isDecimal(type)) out.push([], [type.bitWidth / 8]);
  else if (DataType.isDate(type)) out.push([], [type.unit === 0 ? 4 : 8]);
  else if (DataType.isTime(type)) out.push([], [type.bitWidth / 8]);
  else if (DataType.isTimestamp(type) || DataType.isDuration(type)) out.push([], [8]);
  else if (DataType.isInterval(type)) out.push([], type.unit === 0 ? [4] : type.unit === 1 ? [4, 4] : [4, 4, 8]);
  else if (DataType.isFixedSizeBinary(type)) out.push([], []);
  else if (DataType.isUtf8(type) || DataType.isBinary(type)) out.push([], [4], []);
  else if (DataType.isLargeUtf8(type) || DataType.isLargeBinary(type)) out.push([], [8], []);
  else if (DataType.isList(type) || DataType.isMap(type)) out.push([], [4]);
  else if (DataType.isLargeList(type)) out.push([], [8]);
  else if (DataType.isFixedSizeList(type) || DataType.isStruct(type)) out.push([]);
  else throw new Error(`big-endian copy: no layout for ${String(type)}`);
  for (const child of (type.children ?? []) as Field[]) bufferParts(child.type, out);
}

function swapped(body: Uint8Array, regions: readonly BufferRegion[], parts: readonly number[][]): Uint8Array {
  const out = body.slice();
  regions.forEach((region, k) => {
    const widths = parts[k]!;
    const stride = widths.reduce((a, b) => a + b, 0);
    if (stride <= 1) return;
    for (let at = region.offset; at + stride <= region.offset + region.length; at += stride) {
      let p = at;
      for (const w of widths) {
        out.subarray(p, p + w).reverse();
        p += w;
      }
    }
  });
  return out;
}

/** A big-endian copy of a little-endian stream written by apache-arrow (uncompressed). */
export function toBigEndian(stream: Uint8Array): Uint8Array {
  const messages = splitStream(stream);
  const schema = messages[0]!.message.header() as Schema;
  const out: { metadata: Uint8Array; body: Uint8Array }[] = [{ metadata: bigEndianSchema(schema), body: new Uint8Array(0) }];
  for (const { message, body } of messages.slice(1)) {
    const parts: number[][] = [];
    let regions: readonly BufferRegion[];
    if (message.isDictionaryBatch()) {
      const header = message.header() as DictionaryBatch;
      bufferParts(schema.dictionaries.get(header.id)!, parts);
      regions = header.data.buffers;
    } else {
      for (const field of schema.fields) bufferParts(field.type, parts);
      regions = (message.header() as RecordBatch).buffers;
    }
    if (parts.length !== regions.length)
      throw new Error(`big-endian copy: ${parts.length} buffers planned, ${regions.length} in the message`);
    out.push({ metadata: Message.encode(message), body: swapped(body, regions, parts) });
  }
  return joinStream(out);
}

/** A record batch header with some of its numbers changed. */
export function withBatch(
  message: Message,
  change: { length?: number; nodes?: FieldNode[]; buffers?: BufferRegion[]; bodyLength?: number },
): Uint8Array {
  const header = message.header() as RecordBatch;
  const batch = new RecordBatch(
    change.length ?? header.length,
    change.nodes ?? header.nodes,
    change.buffers ?? header.buffers,
    null,
    header.variadicBufferCounts,
  );
  return Message.encode(Message.from(batch, change.bodyLength ?? message.bodyLength));
}

/** A dictionary batch under another id (and, when given, as a delta or not). */
export function withDictionaryId(message: Message, id: number, isDelta?: boolean): Uint8Array {
  const header = message.header() as DictionaryBatch;
  return Message.encode(Message.from(new DictionaryBatch(header.data, id, isDelta ?? header.isDelta), message.bodyLength));
}

export { BodyCompression, BufferRegion, FieldNode, Message, RecordBatch };

/**
 * The stream with its batches compressed as the format says (pyarrow, arrow-rs and Arrow C++ write
 * it so): each buffer prefixed by its *uncompressed* length as an int64, or -1 when compressing
 * would not make it smaller. (apache-arrow JS 21 writes the compressed length there instead, which
 * other readers refuse; so the suite compresses here, with real compressors.)
 */
export function compressStream(stream: Uint8Array, codec: 'lz4' | 'zstd', encode: (bytes: Uint8Array) => Uint8Array): Uint8Array {
  const messages = splitStream(stream);
  const out = [{ metadata: messages[0]!.metadata, body: messages[0]!.body }];
  for (const { message, body } of messages.slice(1)) {
    const dictionary = message.isDictionaryBatch() ? (message.header() as DictionaryBatch) : undefined;
    const batch = dictionary ? dictionary.data : (message.header() as RecordBatch);
    const parts: Uint8Array[] = [];
    const regions: BufferRegion[] = [];
    let at = 0;
    for (const region of batch.buffers) {
      const raw = body.subarray(region.offset, region.offset + region.length);
      if (raw.length === 0) {
        regions.push(new BufferRegion(at, 0));
        continue;
      }
      const packed = encode(raw);
      const smaller = packed.length < raw.length;
      const prefix = new Uint8Array(8);
      new DataView(prefix.buffer).setBigInt64(0, smaller ? BigInt(raw.length) : -1n, true);
      const data = smaller ? packed : raw;
      regions.push(new BufferRegion(at, 8 + data.length));
      const padding = new Uint8Array(((8 + data.length + 7) & ~7) - (8 + data.length));
      parts.push(prefix, data, padding);
      at += 8 + data.length + padding.length;
    }
    const compressed = new RecordBatch(
      batch.length,
      batch.nodes,
      regions,
      new BodyCompression(codec === 'lz4' ? 0 : 1),
      batch.variadicBufferCounts,
    );
    const header = dictionary ? new DictionaryBatch(compressed, dictionary.id, dictionary.isDelta) : compressed;
    out.push({ metadata: Message.encode(Message.from(header, at)), body: concatBytes(parts) });
  }
  return joinStream(out);
}

/** The stream's messages as an IPC file (magic, messages, footer listing the blocks, magic). */
export function streamToFile(stream: Uint8Array): Uint8Array {
  const messages = splitStream(stream);
  const schema = messages[0]!.message.header() as Schema;
  const parts: Uint8Array[] = [new TextEncoder().encode('ARROW1\0\0')];
  let at = 8;
  const dictionaries: FileBlock[] = [];
  const batches: FileBlock[] = [];
  for (const m of messages) {
    const framedParts = framed(m.metadata, m.body);
    const metaLength = framedParts[0]!.length + framedParts[1]!.length;
    if (!m.message.isSchema()) (m.message.isDictionaryBatch() ? dictionaries : batches).push(new FileBlock(metaLength, m.body.length, at));
    parts.push(...framedParts);
    at += metaLength + m.body.length;
  }
  // The footer repeats the schema, byte order included.
  const encode = (): Uint8Array => Footer.encode(new Footer(schema, undefined, batches, dictionaries));
  const footer = saysBigEndian(messages[0]!.metadata) ? asBigEndian(encode) : encode();
  const length = new Uint8Array(4);
  new DataView(length.buffer).setInt32(0, footer.length, true);
  parts.push(footer, length, new TextEncoder().encode('ARROW1'));
  return concatBytes(parts);
}
