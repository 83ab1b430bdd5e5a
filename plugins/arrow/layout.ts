/**
 * A record batch's (or dictionary batch's) metadata checked against the schema's layout, before
 * its body is read: the counts of nodes and buffers, every buffer inside the body, every length
 * and null count in range, and each buffer at least as long as its node's length needs. What can
 * only be checked in the body's bytes (offsets, indices, views) is checked in body.ts.
 */
import { BodyCompressionMethod } from 'apache-arrow/fb/body-compression-method';
import { RecordBatch as FbRecordBatch } from 'apache-arrow/fb/record-batch';
import { checkedSize, corrupt, IpcProblem } from './problem.ts';
import type { Shape } from './shape.ts';

/** Rows in one batch, and elements in one node: what a JS typed array can index. */
export const MAX_LENGTH = 0x7fffffff;
/** One body, or one decompressed buffer: what one allocation here may take. */
export const MAX_BODY = 0x7fffffff;

export type Codec = 'lz4' | 'zstd';

export interface Region {
  readonly offset: number;
  readonly length: number;
}

export interface BatchHeader {
  readonly length: number;
  readonly nodes: readonly { readonly length: number; readonly nullCount: number }[];
  readonly buffers: readonly Region[];
  readonly codec: Codec | null;
  readonly variadicCounts: readonly number[];
}

/** What a buffer holds, for its size check, byte swapping and value checks. */
export type Role =
  | 'validity'
  | 'bits'
  | 'values'
  | 'offsets32'
  | 'offsets64'
  | 'sizes'
  | 'view-offsets'
  | 'bytes'
  | 'views'
  | 'variadic'
  | 'type-ids';

export interface BufferPlan {
  readonly index: number;
  readonly role: Role;
  /** The least number of bytes the node's length needs (checked on the uncompressed buffer). */
  readonly minBytes: number;
  /**
   * The most a compressed buffer may announce: what the node's length can use (twice over, for
   * writers that keep a larger buffer), so that a small file cannot make the reader allocate
   * gigabytes for a few rows. Data bytes (strings, binaries) have no such bound but the batch's.
   */
  readonly maxBytes: number;
  /** Whose buffer it is, for messages: `column "x"`, and the column's name. */
  readonly owner: string;
  readonly column: string;
  /** A value's parts to swap in a big-endian file (see `Shape.swap`). */
  readonly swap: readonly number[];
}

export interface NodePlan {
  readonly shape: Shape;
  readonly length: number;
  readonly nullCount: number;
  readonly buffers: readonly BufferPlan[];
  readonly children: readonly NodePlan[];
}

/** Reads the record batch header of a message, checking every count against the body and metadata sizes. */
export function readBatchHeader(batch: FbRecordBatch, bodyLength: number, metadataLength: number): BatchHeader {
  const length = checkedSize(batch.length(), MAX_LENGTH, 'the record batch length');
  // A FieldNode and a Buffer are 16-byte structs inside the metadata: more cannot be there.
  const nodeCount = batch.nodesLength();
  const bufferCount = batch.buffersLength();
  if (nodeCount * 16 > metadataLength || bufferCount * 16 > metadataLength) {
    throw corrupt(
      `a record batch lists ${nodeCount} nodes and ${bufferCount} buffers, more than its ${metadataLength} bytes of metadata hold`,
    );
  }
  const nodes = [];
  for (let i = 0; i < nodeCount; i++) {
    const node = batch.nodes(i);
    if (!node) throw corrupt(`record batch node ${i} is missing`);
    const nodeLength = checkedSize(node.length(), MAX_LENGTH, `the length of record batch node ${i}`);
    const nullCount = checkedSize(node.nullCount(), nodeLength, `the null count of record batch node ${i} (length ${nodeLength})`);
    nodes.push({ length: nodeLength, nullCount });
  }
  const buffers = [];
  for (let i = 0; i < bufferCount; i++) {
    const buffer = batch.buffers(i);
    if (!buffer) throw corrupt(`record batch buffer ${i} is missing`);
    const offset = checkedSize(buffer.offset(), bodyLength, `the offset of buffer ${i}`);
    const bytes = checkedSize(
      buffer.length(),
      bodyLength - offset,
      `the length of buffer ${i} (at offset ${offset} of a ${bodyLength}-byte body)`,
    );
    buffers.push({ offset, length: bytes });
  }
  const variadicCounts = [];
  for (let i = 0; i < batch.variadicBufferCountsLength(); i++) {
    variadicCounts.push(checkedSize(batch.variadicBufferCounts(i) ?? -1n, bufferCount, `variadic buffer count ${i}`));
  }
  const compression = batch.compression();
  let codec: Codec | null = null;
  if (compression) {
    const type = compression.codec();
    if (compression.method() !== BodyCompressionMethod.BUFFER) {
      throw new IpcProblem('ARROW_UNSUPPORTED', `a record batch uses body compression method ${compression.method()}, not per buffer`);
    }
    if (type === 0) codec = 'lz4';
    else if (type === 1) codec = 'zstd';
    else throw new IpcProblem('ARROW_UNSUPPORTED', `a record batch is compressed with codec ${type}, which is neither LZ4_FRAME nor ZSTD`);
  }
  return { length, nodes, buffers, codec, variadicCounts };
}

interface Cursor {
  node: number;
  buffer: number;
  view: number;
}

/**
 * Pairs the header's nodes and buffers with the fields, in the order the format lays them out
 * (depth first), checking the counts match and lengths are consistent.
 * `unionValidity`: metadata before V5 gives unions a validity buffer.
 */
export function planBatch(fields: readonly Shape[], header: BatchHeader, unionValidity: boolean): NodePlan[] {
  const cursor: Cursor = { node: 0, buffer: 0, view: 0 };
  const plans = fields.map((shape) => planNode(shape, header, cursor, unionValidity));
  for (const plan of plans) {
    if (plan.length !== header.length)
      throw corrupt(`column "${plan.shape.column}" has ${plan.length} rows in a record batch of ${header.length}`, plan.shape.column);
  }
  if (cursor.node !== header.nodes.length)
    throw corrupt(`a record batch has ${header.nodes.length} nodes where the schema needs ${cursor.node}`);
  if (cursor.buffer !== header.buffers.length)
    throw corrupt(`a record batch has ${header.buffers.length} buffers where the schema needs ${cursor.buffer}`);
  return plans;
}

const bitmapBytes = (length: number): number => Math.ceil(length / 8);

/** `column "x"`, or `column "x" (at x.item)` inside a nested column. */
export function where(shape: Shape): string {
  return shape.path === shape.column ? `column "${shape.column}"` : `column "${shape.column}" (at ${shape.path})`;
}

function planNode(shape: Shape, header: BatchHeader, cursor: Cursor, unionValidity: boolean): NodePlan {
  const node = header.nodes[cursor.node++];
  if (!node) throw corrupt(`a record batch has too few nodes for ${where(shape)}`, shape.column);
  const { length, nullCount } = node;
  const buffers: BufferPlan[] = [];
  const take = (role: Role, minBytes: number, swap: readonly number[] = []): void => {
    const usable = role === 'validity' ? bitmapBytes(length) : minBytes;
    const maxBytes = role === 'bytes' || role === 'variadic' ? MAX_BODY : Math.min(MAX_BODY, 2 * usable + 4096);
    const index = cursor.buffer++;
    const region = header.buffers[index];
    if (!region) throw corrupt(`a record batch has too few buffers for ${where(shape)}`, shape.column);
    // A compressed buffer's size is checked once it is decompressed.
    if (header.codec === null && region.length < minBytes) {
      throw corrupt(
        `${where(shape)}: buffer ${index} (${role}) has ${region.length} bytes; ${length} rows need at least ${minBytes}`,
        shape.column,
      );
    }
    buffers.push({ index, role, minBytes, maxBytes, owner: where(shape), column: shape.column, swap });
  };
  const validity = (): void => take('validity', nullCount > 0 ? bitmapBytes(length) : 0);
  const offsets = (wide: boolean): void =>
    take(wide ? 'offsets64' : 'offsets32', length > 0 ? (length + 1) * (wide ? 8 : 4) : 0, [wide ? 8 : 4]);
  const values = (width: number): number => {
    const bytes = length * width;
    if (bytes > MAX_BODY)
      throw new IpcProblem('ARROW_BATCH_TOO_LARGE', `column "${shape.column}" needs ${bytes} bytes in one record batch`, shape.column);
    return bytes;
  };
  switch (shape.layout) {
    case 'null':
      break;
    case 'bool':
      validity();
      take('bits', bitmapBytes(length));
      break;
    case 'fixed':
    case 'indices':
      validity();
      take('values', values(shape.width), shape.swap);
      break;
    case 'var32':
    case 'var64':
      validity();
      offsets(shape.layout === 'var64');
      take('bytes', 0);
      break;
    case 'view': {
      validity();
      take('views', values(16));
      const count = header.variadicCounts[cursor.view++];
      if (count === undefined) throw corrupt(`a record batch gives no variadic buffer count for column "${shape.column}"`, shape.column);
      for (let k = 0; k < count; k++) take('variadic', 0);
      break;
    }
    case 'list32':
    case 'list64':
      validity();
      offsets(shape.layout === 'list64');
      break;
    case 'list-view32':
    case 'list-view64':
      validity();
      take('view-offsets', values(shape.width), shape.swap);
      take('sizes', values(shape.width), shape.swap);
      break;
    case 'run-end':
      // No buffers, no NULLs of its own: its values say which rows are NULL.
      if (nullCount !== 0) throw corrupt(`${where(shape)} is run-end encoded but declares ${nullCount} NULLs of its own`, shape.column);
      break;
    case 'fixed-list':
    case 'struct':
      validity();
      break;
    case 'sparse-union':
    case 'dense-union':
      if (unionValidity) validity();
      take('type-ids', length);
      if (shape.layout === 'dense-union') take('offsets32', length * 4, [4]);
      break;
  }
  const children = shape.children.map((child) => planNode(child, header, cursor, unionValidity));
  if (shape.layout === 'run-end') {
    const [runEnds, values] = children as [NodePlan, NodePlan];
    if (runEnds.length !== values.length)
      throw corrupt(`${where(shape)} has ${runEnds.length} run ends for ${values.length} values`, shape.column);
    if (runEnds.nullCount !== 0) throw corrupt(`${where(shape)} has NULL run ends`, shape.column);
    if (runEnds.length > length || (length > 0 && runEnds.length === 0))
      throw corrupt(`${where(shape)} has ${runEnds.length} runs for ${length} rows`, shape.column);
  }
  for (const child of children) {
    const needed =
      shape.layout === 'fixed-list' ? length * shape.listSize : shape.layout === 'struct' || shape.layout === 'sparse-union' ? length : 0;
    if (child.length < needed)
      throw corrupt(`${where(child.shape)} has ${child.length} values where its parent's ${length} rows need ${needed}`, shape.column);
  }
  return { shape, length, nullCount, buffers, children };
}
