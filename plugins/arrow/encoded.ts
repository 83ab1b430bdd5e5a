/**
 * ListView, LargeListView and RunEndEncoded columns, which apache-arrow (21) cannot decode, carried
 * through its reader in a form it can and then turned back into what they mean:
 * - in transport (the schema and batches apache-arrow's reader gets), a ListView<T> is a
 *   Struct<offsets, sizes, values: T> and a RunEndEncoded<R, V> a Struct<run_ends: R, values: V>,
 *   their children of other lengths than the struct's (the buffers are the file's own, only the
 *   message metadata is rewritten: `transportLayout`);
 * - logically (the schema the table is planned from, and the batches loaded), a ListView<T> is a
 *   List<T> (LargeList for LargeListView) and a RunEndEncoded<R, V> is V, each row expanded
 *   (expand.ts).
 * Utf8View and BinaryView inside them become Utf8 and Binary (gather.ts copies values, not views).
 */
import { Binary, DataType, Field, Int16, Int32, Int64, LargeList, List, Schema, Struct, Utf8 } from 'apache-arrow';
import { Field as FbField } from 'apache-arrow/fb/field';
import { Int as FbInt } from 'apache-arrow/fb/int';
import type { Schema as FbSchema } from 'apache-arrow/fb/schema';
import { Type } from 'apache-arrow/fb/type';
import { IpcProblem } from './problem.ts';

const decodeField = (Field as unknown as { decode(field: FbField, dictionaries: Map<number, DataType>): Field }).decode;

const ENCODED = new Set<number>([Type.ListView, Type.LargeListView, Type.RunEndEncoded]);

function holdsEncoded(field: FbField): boolean {
  if (ENCODED.has(field.typeType())) return true;
  for (let k = 0; k < field.childrenLength(); k++) if (holdsEncoded(field.children(k)!)) return true;
  return false;
}

/** Whether a schema has a column of these kinds anywhere (then its batches go through transport). */
export function schemaHoldsEncoded(schema: FbSchema): boolean {
  for (let k = 0; k < schema.fieldsLength(); k++) if (holdsEncoded(schema.fields(k)!)) return true;
  return false;
}

/** A view type as the plain type its values are copied into. */
function plain(type: DataType): DataType {
  if (DataType.isUtf8View(type)) return new Utf8();
  if (DataType.isBinaryView(type)) return new Binary();
  return type;
}

/** How a transport column becomes its logical one (expand.ts). */
export type Expansion =
  | { readonly kind: 'same' }
  | { readonly kind: 'list-view'; readonly large: boolean; readonly child: Expansion }
  | { readonly kind: 'run-end'; readonly values: Expansion }
  | { readonly kind: 'nested'; readonly children: readonly Expansion[] };

interface Both {
  readonly transport: Field;
  readonly logical: Field;
  readonly expansion: Expansion;
}

function runEndType(field: FbField, name: string): DataType {
  const int = field.typeType() === Type.Int ? (field.type(new FbInt()) as FbInt | null) : null;
  const bits = int?.bitWidth();
  if (!int || !int.isSigned() || (bits !== 16 && bits !== 32 && bits !== 64))
    throw new IpcProblem(
      'ARROW_CORRUPT',
      `column "${name}" is run-end encoded with run ends that are not 16, 32 or 64-bit signed integers`,
      name,
    );
  return bits === 16 ? new Int16() : bits === 32 ? new Int32() : new Int64();
}

function both(field: FbField, column: string, dictionaries: Map<number, DataType>, inside: boolean): Both {
  const name = field.name() ?? '';
  if (!holdsEncoded(field)) {
    const decoded = decodeField(field, dictionaries);
    const logical = inside ? new Field(decoded.name, plainDeep(decoded.type), decoded.nullable) : decoded;
    return { transport: decoded, logical, expansion: { kind: 'same' } };
  }
  if (field.dictionary())
    throw new IpcProblem(
      'ARROW_UNSUPPORTED_TYPE',
      `column "${column}" is dictionary-encoded over list-view or run-end encoded values, which this reader does not decode`,
      column,
    );
  const children = Array.from({ length: field.childrenLength() }, (_, k) => both(field.children(k)!, column, dictionaries, true));
  const type = field.typeType();
  if (type === Type.ListView || type === Type.LargeListView) {
    const wide = type === Type.LargeListView;
    const child = children[0]!;
    const index = () => (wide ? new Int64() : new Int32());
    const transport = new Struct([new Field('offsets', index(), false), new Field('sizes', index(), false), child.transport]);
    const logical = wide ? new LargeList(child.logical) : new List(child.logical);
    return {
      transport: new Field(name, transport, field.nullable()),
      logical: new Field(name, logical, field.nullable()),
      expansion: { kind: 'list-view', large: wide, child: child.expansion },
    };
  }
  if (type === Type.RunEndEncoded) {
    const runEnds = new Field('run_ends', runEndType(field.children(0)!, column), false);
    const values = children[1]!;
    return {
      transport: new Field(name, new Struct([runEnds, values.transport]), true),
      logical: new Field(name, values.logical.type, true),
      expansion: { kind: 'run-end', values: values.expansion },
    };
  }
  // A list, struct or map holding such a column somewhere inside.
  const decoded = decodeField(field, new Map());
  const rebuilt = (pick: (b: Both) => Field) => cloneWithChildren(decoded.type, children.map(pick));
  return {
    transport: new Field(
      name,
      rebuilt((b) => b.transport),
      field.nullable(),
    ),
    logical: new Field(
      name,
      rebuilt((b) => b.logical),
      field.nullable(),
    ),
    expansion: { kind: 'nested', children: children.map((b) => b.expansion) },
  };
}

/** The views inside a type as plain types (values are copied into plain buffers there). */
function plainDeep(type: DataType): DataType {
  if (!type.children || type.children.length === 0) return plain(type);
  return cloneWithChildren(
    type,
    type.children.map((c: Field) => new Field(c.name, plainDeep(c.type), c.nullable)),
  );
}

function cloneWithChildren(type: DataType, children: Field[]): DataType {
  if (DataType.isList(type)) return new List(children[0]!);
  if (DataType.isLargeList(type)) return new LargeList(children[0]!);
  if (DataType.isStruct(type)) return new Struct(children);
  const clone = Object.create(Object.getPrototypeOf(type) as object) as DataType;
  Object.assign(clone, type, { children });
  return clone;
}

/** The transport and logical schemas of a schema holding such columns (see the module comment). */
export function encodedSchemas(schema: FbSchema): { transport: Schema; logical: Schema; expansions: Expansion[] } {
  const dictionaries = new Map<number, DataType>();
  const fields = Array.from({ length: schema.fieldsLength() }, (_, k) => {
    const field = schema.fields(k)!;
    return both(field, field.name() ?? '', dictionaries, false);
  });
  return {
    transport: new Schema(fields.map((f) => f.transport)),
    logical: new Schema(fields.map((f) => f.logical)),
    expansions: fields.map((f) => f.expansion),
  };
}
