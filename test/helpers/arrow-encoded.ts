/**
 * Arrow IPC streams with ListView, LargeListView and RunEndEncoded columns, which apache-arrow
 * cannot write (arrow-rs and Arrow C++ do): the schema message built with the format's own
 * FlatBuffers builders, the record batch's metadata with apache-arrow's, the body by hand from
 * the specification's layouts.
 *
 * Four rows: `id` 1..4; `lv` (ListView<Int32>) [10, 11], NULL, [], [11, 12] over the child values
 * [10, 11, 12] (the last view overlaps the first); `ree` (RunEndEncoded<Int32, Utf8>) a, a, b, NULL.
 */
import { Builder } from 'flatbuffers';
import { Field as FbField } from 'apache-arrow/fb/field';
import { Int as FbInt } from 'apache-arrow/fb/int';
import { LargeListView } from 'apache-arrow/fb/large-list-view';
import { ListView } from 'apache-arrow/fb/list-view';
import { Message as FbMessage } from 'apache-arrow/fb/message';
import { MessageHeader } from 'apache-arrow/fb/message-header';
import { MetadataVersion } from 'apache-arrow/fb/metadata-version';
import { RunEndEncoded } from 'apache-arrow/fb/run-end-encoded';
import { Schema as FbSchema } from 'apache-arrow/fb/schema';
import { Type } from 'apache-arrow/fb/type';
import { Utf8 as FbUtf8 } from 'apache-arrow/fb/utf8';
import { BufferRegion, FieldNode, Message, RecordBatch } from 'apache-arrow/ipc/metadata/message';
import { concatBytes } from '../../src/util/bytes.ts';

type Child = (b: Builder) => number;

function field(b: Builder, name: string, nullable: boolean, type: Type, makeType: (b: Builder) => number, children: Child[] = []): number {
  const kids = children.map((c) => c(b));
  const nameOffset = b.createString(name);
  const typeOffset = makeType(b);
  const childVector = FbField.createChildrenVector(b, kids);
  FbField.startField(b);
  FbField.addName(b, nameOffset);
  FbField.addNullable(b, nullable);
  FbField.addTypeType(b, type);
  FbField.addType(b, typeOffset);
  FbField.addChildren(b, childVector);
  return FbField.endField(b);
}

const int32 = (b: Builder) => FbInt.createInt(b, 32, true);

function schemaMessage(large: boolean): Uint8Array {
  const b = new Builder(512);
  const fields = [
    field(b, 'id', false, Type.Int, int32),
    field(
      b,
      'lv',
      true,
      large ? Type.LargeListView : Type.ListView,
      (bb) =>
        large
          ? (LargeListView.startLargeListView(bb), LargeListView.endLargeListView(bb))
          : (ListView.startListView(bb), ListView.endListView(bb)),
      [(bb) => field(bb, 'item', true, Type.Int, int32)],
    ),
    field(b, 'ree', true, Type.RunEndEncoded, (bb) => (RunEndEncoded.startRunEndEncoded(bb), RunEndEncoded.endRunEndEncoded(bb)), [
      (bb) => field(bb, 'run_ends', false, Type.Int, int32),
      (bb) => field(bb, 'values', true, Type.Utf8, (bbb) => (FbUtf8.startUtf8(bbb), FbUtf8.endUtf8(bbb))),
    ]),
  ];
  const vector = FbSchema.createFieldsVector(b, fields);
  FbSchema.startSchema(b);
  FbSchema.addFields(b, vector);
  const schema = FbSchema.endSchema(b);
  FbMessage.startMessage(b);
  FbMessage.addVersion(b, MetadataVersion.V5);
  FbMessage.addHeaderType(b, MessageHeader.Schema);
  FbMessage.addHeader(b, schema);
  FbMessage.addBodyLength(b, BigInt(0));
  b.finish(FbMessage.endMessage(b));
  return b.asUint8Array();
}

function frame(metadata: Uint8Array, body: Uint8Array): Uint8Array {
  const padded = (metadata.length + 7) & ~7;
  const head = new Uint8Array(8 + padded);
  new DataView(head.buffer).setInt32(0, -1, true);
  new DataView(head.buffer).setInt32(4, padded, true);
  head.set(metadata, 8);
  return concatBytes([head, body]);
}

const i32 = (values: number[]) => new Uint8Array(Int32Array.from(values).buffer);
const i64 = (values: number[]) => new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer);

/** The stream (see the module comment); `damage` changes the body's buffers before they are framed. */
export function encodedStream(options: { large?: boolean; damage?: (buffers: Uint8Array[]) => void } = {}): Uint8Array {
  const large = options.large ?? false;
  const index = large ? i64 : i32;
  const buffers: Uint8Array[] = [
    // id: validity, values
    new Uint8Array(0),
    i32([1, 2, 3, 4]),
    // lv: validity (rows 0, 2, 3), offsets, sizes; its child: validity, values
    Uint8Array.of(0b1101),
    index([0, 0, 2, 1]),
    index([2, 0, 0, 2]),
    new Uint8Array(0),
    i32([10, 11, 12]),
    // ree: no buffers; run ends: validity, values; values: validity (a, b), offsets, data
    new Uint8Array(0),
    i32([2, 3, 4]),
    Uint8Array.of(0b011),
    i32([0, 1, 2, 2]),
    new TextEncoder().encode('ab'),
  ];
  options.damage?.(buffers);
  const regions: BufferRegion[] = [];
  const parts: Uint8Array[] = [];
  let at = 0;
  for (const buffer of buffers) {
    regions.push(new BufferRegion(at, buffer.length));
    const padded = (buffer.length + 7) & ~7;
    const part = new Uint8Array(padded);
    part.set(buffer);
    parts.push(part);
    at += padded;
  }
  const nodes = [
    new FieldNode(4, 0),
    new FieldNode(4, 1),
    new FieldNode(3, 0),
    new FieldNode(4, 0),
    new FieldNode(3, 0),
    new FieldNode(3, 1),
  ];
  const batch = Message.encode(Message.from(new RecordBatch(4, nodes, regions, null), at));
  return concatBytes([frame(schemaMessage(large), new Uint8Array(0)), frame(batch, concatBytes(parts))]);
}
