/**
 * The values in a message body that point elsewhere, checked: offsets rise and stay inside their
 * data, dictionary indices stay inside their dictionary, views stay inside their data buffers,
 * list views inside their child, run ends rise, union type ids are the union's own, and each
 * validity bitmap counts the NULLs its node declares. apache-arrow reads none of this itself; a
 * bad offset there would read other rows' bytes, or allocate without bound. `valueBuffers` names
 * the buffers these checks read, so a caller can read just those (see `checkMessages`).
 */
import { type BufferPlan, type NodePlan, where } from './layout.ts';
import { corrupt } from './problem.ts';

/** The current length of each dictionary, by id (deltas included). */
export type DictionarySizes = ReadonlyMap<bigint, number>;

/** Set bits of each byte value. */
const BITS = Uint8Array.from({ length: 256 }, (_, b) => {
  let n = 0;
  for (let v = b; v; v >>= 1) n += v & 1;
  return n;
});

/** The rows among the first `length` whose validity bit is 0 (the bitmap is long enough: see `planBatch`). */
function countNulls(bitmap: Uint8Array, length: number): number {
  const whole = length >> 3;
  let set = 0;
  for (let i = 0; i < whole; i++) set += BITS[bitmap[i]!]!;
  const rest = length & 7;
  if (rest > 0) set += BITS[bitmap[whole]! & ((1 << rest) - 1)]!;
  return length - set;
}

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function isValid(validity: Uint8Array | undefined, nullCount: number, row: number): boolean {
  return nullCount === 0 || validity === undefined || validity.length === 0 || ((validity[row >> 3]! >> (row & 7)) & 1) === 1;
}

/** Offsets of `length` rows start at ≥ 0, never fall, and end at most at `limit`. */
function checkOffsets(bytes: Uint8Array, wide: boolean, length: number, limit: number, plan: NodePlan, what: string): void {
  if (length === 0) return;
  const v = view(bytes);
  const at = (i: number): number => (wide ? Number(v.getBigInt64(i * 8, true)) : v.getInt32(i * 4, true));
  let previous = at(0);
  if (previous < 0) throw corrupt(`${where(plan.shape)} has a negative first offset (${previous})`, plan.shape.column);
  for (let i = 1; i <= length; i++) {
    const next = at(i);
    if (next < previous)
      throw corrupt(`${where(plan.shape)} has offsets that go down at row ${i - 1} (${previous} → ${next})`, plan.shape.column);
    previous = next;
  }
  if (previous > limit)
    throw corrupt(`${where(plan.shape)} has offsets up to ${previous}, past the end of its ${limit} ${what}`, plan.shape.column);
}

/**
 * The buffers whose bytes the value checks read (`checkValues`), by index: validity bitmaps,
 * offsets, dictionary indices, views, union type ids and offsets. Of the data behind offsets
 * and views only the length counts, which the header gives. Every other buffer (fixed-width
 * values, booleans, validity of other columns) is a run of values of its type whatever its bytes
 * are, inside a region the header checks already bounded (layout.ts): nothing in it can point
 * elsewhere, so there is nothing to check in it.
 */
export function valueBuffers(plans: readonly NodePlan[], out: number[] = []): number[] {
  for (const plan of plans) {
    const take = (...roles: BufferPlan['role'][]): void => {
      for (const b of plan.buffers) if (roles.includes(b.role)) out.push(b.index);
    };
    // Every validity bitmap: its count of NULLs must be the node's.
    take('validity');
    switch (plan.shape.layout) {
      case 'var32':
      case 'var64':
      case 'list32':
      case 'list64':
        take('offsets32', 'offsets64');
        break;
      case 'indices':
        take('values');
        break;
      case 'view':
        take('views');
        break;
      case 'sparse-union':
      case 'dense-union':
        take('type-ids', 'offsets32');
        break;
      case 'list-view32':
      case 'list-view64':
        take('view-offsets', 'sizes');
        break;
      case 'run-end':
        // The run ends' values (a fixed-width child, otherwise not read).
        for (const b of plan.children[0]!.buffers) if (b.role === 'values') out.push(b.index);
        break;
      default:
        break;
    }
    valueBuffers(plan.children, out);
  }
  return out;
}

/**
 * Checks the values that point elsewhere. `bytesOf` is asked only for the buffers `valueBuffers`
 * lists; `lengthOf` gives any buffer's length.
 */
export function checkValues(
  plan: NodePlan,
  bytesOf: (index: number) => Uint8Array,
  lengthOf: (index: number) => number,
  sizes: DictionarySizes,
): void {
  const { shape, length, nullCount } = plan;
  const find = (role: BufferPlan['role'], nth = 0): BufferPlan | undefined => plan.buffers.filter((b) => b.role === role)[nth];
  const roleBytes = (role: BufferPlan['role'], nth = 0): Uint8Array | undefined => {
    const found = find(role, nth);
    return found && bytesOf(found.index);
  };
  const column = shape.column;
  const bitmap = find('validity');
  // A bitmap shorter than its rows can only come with no NULLs declared (`planBatch`): readers ignore it then.
  if (bitmap !== undefined && lengthOf(bitmap.index) > 0 && lengthOf(bitmap.index) >= (length + 7) >> 3) {
    const nulls = countNulls(bytesOf(bitmap.index), length);
    if (nulls !== nullCount)
      throw corrupt(`${where(shape)} declares ${nullCount} NULLs in a record batch where its validity bitmap has ${nulls}`, column);
  }
  switch (shape.layout) {
    case 'var32':
    case 'var64':
      checkOffsets(
        roleBytes(shape.layout === 'var64' ? 'offsets64' : 'offsets32')!,
        shape.layout === 'var64',
        length,
        lengthOf(find('bytes')!.index),
        plan,
        'bytes of data',
      );
      break;
    case 'list32':
    case 'list64':
      checkOffsets(
        roleBytes(shape.layout === 'list64' ? 'offsets64' : 'offsets32')!,
        shape.layout === 'list64',
        length,
        plan.children[0]!.length,
        plan,
        'child values',
      );
      break;
    case 'indices': {
      const validity = roleBytes('validity');
      const size = sizes.get(shape.dictionaryId!);
      if (size === undefined) {
        if (length > nullCount)
          throw corrupt(`column "${column}" uses dictionary ${shape.dictionaryId} before any dictionary batch of that id`, column);
        break;
      }
      const v = view(roleBytes('values')!);
      const w = shape.width;
      for (let row = 0; row < length; row++) {
        if (!isValid(validity, nullCount, row)) continue;
        const index =
          w === 1
            ? shape.signed
              ? v.getInt8(row)
              : v.getUint8(row)
            : w === 2
              ? shape.signed
                ? v.getInt16(row * 2, true)
                : v.getUint16(row * 2, true)
              : w === 4
                ? shape.signed
                  ? v.getInt32(row * 4, true)
                  : v.getUint32(row * 4, true)
                : Number(v.getBigInt64(row * 8, true));
        if (index < 0 || index >= size)
          throw corrupt(`column "${column}" has dictionary index ${index} at row ${row}, outside its dictionary of ${size} values`, column);
      }
      break;
    }
    case 'view': {
      const validity = roleBytes('validity');
      const views = view(roleBytes('views')!);
      const data = plan.buffers.filter((b) => b.role === 'variadic').map((b) => lengthOf(b.index));
      for (let row = 0; row < length; row++) {
        if (!isValid(validity, nullCount, row)) continue;
        const size = views.getInt32(row * 16, true);
        if (size < 0) throw corrupt(`column "${column}" has a negative value length at row ${row}`, column);
        if (size <= 12) continue;
        const buffer = views.getInt32(row * 16 + 8, true);
        const offset = views.getInt32(row * 16 + 12, true);
        if (buffer < 0 || buffer >= data.length || offset < 0 || offset + size > data[buffer]!) {
          throw corrupt(
            `column "${column}" has a view at row ${row} (buffer ${buffer}, offset ${offset}, ${size} bytes) outside its data buffers`,
            column,
          );
        }
      }
      break;
    }
    case 'list-view32':
    case 'list-view64': {
      const validity = roleBytes('validity');
      const offsets = view(roleBytes('view-offsets')!);
      const sizes = view(roleBytes('sizes')!);
      const wide = shape.layout === 'list-view64';
      const at = (v: DataView, i: number): number => (wide ? Number(v.getBigInt64(i * 8, true)) : v.getInt32(i * 4, true));
      const limit = plan.children[0]!.length;
      for (let row = 0; row < length; row++) {
        if (!isValid(validity, nullCount, row)) continue;
        const offset = at(offsets, row);
        const size = at(sizes, row);
        if (offset < 0 || size < 0 || offset + size > limit)
          throw corrupt(
            `${where(shape)} has a list view at row ${row} (offset ${offset}, size ${size}) outside its ${limit} child values`,
            column,
          );
      }
      break;
    }
    case 'run-end': {
      const runEnds = plan.children[0]!;
      const bytes = bytesOf(runEnds.buffers.find((b) => b.role === 'values')!.index);
      const v = view(bytes);
      const w = runEnds.shape.width;
      let previous = 0;
      for (let k = 0; k < runEnds.length; k++) {
        const end = w === 2 ? v.getInt16(k * 2, true) : w === 4 ? v.getInt32(k * 4, true) : Number(v.getBigInt64(k * 8, true));
        if (end <= previous) throw corrupt(`${where(shape)} has run ends that do not rise at run ${k} (${previous} → ${end})`, column);
        previous = end;
      }
      if (length > 0 && previous < length) throw corrupt(`${where(shape)} has runs ending at row ${previous} for ${length} rows`, column);
      break;
    }
    case 'sparse-union':
    case 'dense-union': {
      const ids = roleBytes('type-ids')!;
      const offsets = shape.layout === 'dense-union' ? view(roleBytes('offsets32')!) : undefined;
      for (let row = 0; row < length; row++) {
        const child = shape.typeIds.indexOf((ids[row]! << 24) >> 24);
        if (child < 0)
          throw corrupt(`column "${column}" has union type id ${ids[row]} at row ${row}, which the union does not declare`, column);
        const at = offsets ? offsets.getInt32(row * 4, true) : row;
        if (at < 0 || at >= plan.children[child]!.length)
          throw corrupt(`column "${column}" has a union offset ${at} at row ${row} outside its child`, column);
      }
      break;
    }
    default:
      break;
  }
  for (const child of plan.children) checkValues(child, bytesOf, lengthOf, sizes);
}
