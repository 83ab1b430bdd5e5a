/**
 * One message body made safe to decode: its buffers decompressed (each to exactly its announced
 * size), byte-swapped to little-endian when the file is big-endian, and then the values that point
 * elsewhere checked (value-checks.ts).
 */
import { decompress } from './codecs.ts';
import { type BatchHeader, type BufferPlan, MAX_BODY, type NodePlan, type Region } from './layout.ts';
import { checkedSize, corrupt, IpcProblem } from './problem.ts';
import { checkValues, type DictionarySizes } from './value-checks.ts';

export interface SafeBody {
  readonly body: Uint8Array;
  /** Where each buffer now is, when decompression moved them (else the header's own). */
  readonly regions: readonly Region[] | null;
}

const align8 = (n: number): number => (n + 7) & ~7;

/** Flattens the plans' buffers in body order. */
function buffersOf(plans: readonly NodePlan[], out: BufferPlan[] = []): BufferPlan[] {
  for (const plan of plans) {
    out.push(...plan.buffers);
    buffersOf(plan.children, out);
  }
  return out;
}

/** Reverses each `width`-byte part of every value in place. */
function swapParts(bytes: Uint8Array, parts: readonly number[]): void {
  const stride = parts.reduce((a, b) => a + b, 0);
  if (stride <= 1) return;
  const end = bytes.length - (bytes.length % stride);
  for (let at = 0; at < end; at += stride) {
    let p = at;
    for (const width of parts) {
      for (let a = p, b = p + width - 1; a < b; a++, b--) {
        const t = bytes[a]!;
        bytes[a] = bytes[b]!;
        bytes[b] = t;
      }
      p += width;
    }
  }
}

/** Swaps the 16-byte views of a BinaryView/Utf8View buffer: length; then inline bytes, or prefix, buffer index, offset. */
function swapViews(bytes: Uint8Array): void {
  for (let at = 0; at + 16 <= bytes.length; at += 16) {
    swapParts(bytes.subarray(at, at + 4), [4]);
    const length = new DataView(bytes.buffer, bytes.byteOffset + at, 4).getInt32(0, true);
    if (length > 12) swapParts(bytes.subarray(at + 8, at + 16), [4, 4]);
  }
}

/** Decompresses (when compressed), swaps (when big-endian) and checks one body against its plans. */
export function safeBody(
  header: BatchHeader,
  plans: readonly NodePlan[],
  raw: Uint8Array,
  bigEndian: boolean,
  sizes: DictionarySizes,
): SafeBody {
  const buffers = buffersOf(plans);
  let body = raw;
  let regions: Region[] | null = null;
  if (header.codec !== null) {
    const parts: Uint8Array[] = [];
    let total = 0;
    for (const plan of buffers) {
      const part = decompressed(header, plan, raw);
      parts[plan.index] = part;
      total = align8(total) + part.length;
      if (total > MAX_BODY) throw new IpcProblem('ARROW_BATCH_TOO_LARGE', `a record batch decompresses to more than ${MAX_BODY} bytes`);
    }
    body = new Uint8Array(align8(total));
    regions = [];
    let at = 0;
    for (let index = 0; index < header.buffers.length; index++) {
      const part = parts[index] ?? new Uint8Array(0);
      body.set(part, at);
      regions.push({ offset: at, length: part.length });
      at = align8(at + part.length);
    }
  } else if (bigEndian) {
    body = raw.slice();
  }
  const where: readonly Region[] = regions ?? header.buffers;
  const bytesOf = (index: number): Uint8Array => {
    const region = where[index]!;
    return body.subarray(region.offset, region.offset + region.length);
  };
  if (bigEndian) {
    for (const plan of buffers) {
      if (plan.role === 'views') swapViews(bytesOf(plan.index));
      else if (plan.swap.length > 0) swapParts(bytesOf(plan.index), plan.swap);
    }
  }
  const lengthOf = (index: number): number => where[index]!.length;
  for (const plan of plans) checkValues(plan, bytesOf, lengthOf, sizes);
  return { body, regions };
}

function decompressed(header: BatchHeader, plan: BufferPlan, raw: Uint8Array): Uint8Array {
  const region = header.buffers[plan.index]!;
  const what = `${plan.owner}: buffer ${plan.index} (${plan.role})`;
  if (region.length === 0) {
    if (plan.minBytes > 0) throw corrupt(`${what} is empty; its rows need ${plan.minBytes} bytes`, plan.column);
    return new Uint8Array(0);
  }
  if (region.length < 8)
    throw corrupt(`${what} is compressed but ${region.length} bytes long, shorter than its 8-byte length prefix`, plan.column);
  const bytes = raw.subarray(region.offset, region.offset + region.length);
  const announced = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigInt64(0, true);
  const data = bytes.subarray(8);
  // -1: this buffer was left uncompressed (it would not have become smaller).
  const size =
    announced === -1n ? -1 : checkedSize(announced, plan.maxBytes, `${what}: the uncompressed length its prefix announces`, plan.column);
  let out: Uint8Array;
  try {
    out = size === -1 ? data : decompress(header.codec!, data, size, what);
  } catch (error) {
    throw error instanceof IpcProblem ? new IpcProblem(error.code, error.message, plan.column) : error;
  }
  if (out.length < plan.minBytes)
    throw corrupt(`${what} holds ${out.length} bytes uncompressed; its rows need ${plan.minBytes}`, plan.column);
  return out;
}
