/**
 * The Arrow schema an Arrow writer keeps in the footer (`ARROW:schema`) against the Parquet
 * schema beside it. Arrow readers (arrow-rs, Arrow C++) read the columns through it, and refuse
 * the file when the two disagree on how the columns nest (a struct where the Arrow schema has a
 * list, another number of fields in a struct or at the root) or on a field's name. This reader
 * reads by the Parquet schema alone, so such a footer would land where they refuse it; a writer never makes one, a
 * damaged footer does. Leaf types are not compared: the readers take the Parquet type there
 * when the Arrow one does not fit it. A repeated field without a LIST or MAP annotation (the
 * legacy forms) is not compared either: its Arrow shape depends on rules readers apply differently.
 */
import type { SchemaTree } from 'hyparquet';
import type { Field } from 'apache-arrow/fb/field';
import { Schema } from 'apache-arrow/fb/schema';
import { Type } from 'apache-arrow/fb/type';
import { Message as FbMessage } from 'apache-arrow/fb/message';
import { ByteBuffer } from 'flatbuffers';

type Shape = 'struct' | 'list' | 'map' | 'leaf';

function arrowShape(field: Field): Shape {
  switch (field.typeType()) {
    case Type.Struct_:
      return 'struct';
    case Type.List:
    case Type.LargeList:
    case Type.FixedSizeList:
    case Type.ListView:
    case Type.LargeListView:
      return 'list';
    case Type.Map:
      return 'map';
    default:
      return 'leaf';
  }
}

/** The Parquet node's shape as Arrow readers map it, or undefined where they may differ (legacy repeated fields). */
function parquetShape(node: SchemaTree): Shape | undefined {
  const { element } = node;
  const annotation = element.logical_type?.type ?? element.converted_type;
  if (annotation === 'LIST') return 'list';
  if (annotation === 'MAP' || annotation === 'MAP_KEY_VALUE') return 'map';
  if (element.repetition_type === 'REPEATED') return undefined;
  return node.children.length > 0 || element.num_children !== undefined ? 'struct' : 'leaf';
}

function fieldsOf(count: number, at: (i: number) => Field | null): Field[] {
  const out: Field[] = [];
  for (let i = 0; i < count; i++) {
    const f = at(i);
    if (f) out.push(f);
  }
  return out;
}

/** Where the struct `path` of Parquet `children` and Arrow `fields` disagree, in words. */
function structMismatch(path: string, children: readonly SchemaTree[], fields: readonly Field[]): string | undefined {
  if (children.length !== fields.length)
    return `${path} has ${children.length} fields in the Parquet schema and ${fields.length} in the Arrow schema`;
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    const field = fields[i]!;
    const name = `${path === 'the root' ? '' : `${path}.`}${child.element.name}`;
    // Arrow readers match the two schemas field by field, by name too.
    if (field.name() !== child.element.name)
      return `column "${name}" is named "${field.name() ?? ''}" in the Arrow schema (field ${i + 1} of ${path})`;
    const want = parquetShape(child);
    if (want === undefined || want === 'leaf') continue;
    const got = arrowShape(field);
    if (got !== want) return `column "${name}" is a ${want} in the Parquet schema and a ${got} in the Arrow schema`;
    if (want === 'struct') {
      const inner = structMismatch(
        `column "${name}"`,
        child.children,
        fieldsOf(field.childrenLength(), (j) => field.children(j)),
      );
      if (inner) return inner;
    }
  }
  return undefined;
}

/**
 * How the Arrow schema message `message` (verified already, without its length prefix) and the
 * Parquet schema `root` disagree on the columns' nesting, or undefined when they agree.
 */
export function arrowHintMismatch(message: Uint8Array, root: SchemaTree): string | undefined {
  const schema = FbMessage.getRootAsMessage(new ByteBuffer(message)).header(new Schema()) as Schema | null;
  if (!schema) return 'it holds no schema';
  return structMismatch(
    'the root',
    root.children,
    fieldsOf(schema.fieldsLength(), (i) => schema.fields(i)),
  );
}
