/**
 * A decoded footer checked for consistency before anything reads the file by it: the schema is one
 * tree that uses every element, no deeper than `MAX_SCHEMA_DEPTH`; every leaf has a physical type
 * (and a fixed-length one a length); and every row group has one column chunk per leaf, in schema
 * order, of the leaf's path and type, a flat column's chunk holding one value per row. hyparquet
 * trusts all of this (a chunk is found by its path's first name, a value count taken as given);
 * Arrow C++ refuses such a footer as malformed.
 */
import type { FileMetaData, SchemaElement } from 'hyparquet';

/** Nesting deeper than this is refused (Arrow C++ and arrow-rs stop in the same region). */
export const MAX_SCHEMA_DEPTH = 64;

/** What is wrong, and with which column (a top-level name) when it is one column's. */
export class FooterInconsistent extends Error {
  constructor(
    message: string,
    readonly column?: string,
  ) {
    super(message);
    this.name = 'FooterInconsistent';
  }
}

/** The physical types each legacy converted type may annotate (parquet.thrift's rules). */
const CONVERTED_ON: Partial<Record<string, readonly string[]>> = {
  UTF8: ['BYTE_ARRAY'],
  ENUM: ['BYTE_ARRAY'],
  JSON: ['BYTE_ARRAY'],
  BSON: ['BYTE_ARRAY'],
  DATE: ['INT32'],
  TIME_MILLIS: ['INT32'],
  TIME_MICROS: ['INT64'],
  TIMESTAMP_MILLIS: ['INT64'],
  TIMESTAMP_MICROS: ['INT64'],
  INT_8: ['INT32'],
  INT_16: ['INT32'],
  INT_32: ['INT32'],
  INT_64: ['INT64'],
  UINT_8: ['INT32'],
  UINT_16: ['INT32'],
  UINT_32: ['INT32'],
  UINT_64: ['INT64'],
  DECIMAL: ['INT32', 'INT64', 'FIXED_LEN_BYTE_ARRAY', 'BYTE_ARRAY'],
  INTERVAL: ['FIXED_LEN_BYTE_ARRAY'],
};

/** The logical types whose legacy converted type is fixed (a footer with both must say the same, as DuckDB and arrow-rs insist). */
const LOGICAL_CONVERTED: Partial<Record<string, readonly string[]>> = {
  STRING: ['UTF8'],
  ENUM: ['ENUM'],
  JSON: ['JSON'],
  BSON: ['BSON'],
  DATE: ['DATE'],
  DECIMAL: ['DECIMAL'],
  LIST: ['LIST'],
  MAP: ['MAP', 'MAP_KEY_VALUE'],
};

/** A logical type whose legacy converted type is fixed, and a converted type other than that one. */
function logicalContradiction(element: SchemaElement, converted: string): string | undefined {
  const logical = element.logical_type?.type;
  const wanted = logical === undefined ? undefined : LOGICAL_CONVERTED[logical];
  return wanted && !wanted.includes(converted) ? `the logical type ${logical} but the converted type ${converted}` : undefined;
}

/** The converted types a group may carry (every other one annotates a physical type). */
const GROUP_CONVERTED: readonly string[] = ['LIST', 'MAP', 'MAP_KEY_VALUE'];

/**
 * What is inconsistent in a group's annotations, if anything: a converted type of a leaf, or one
 * that contradicts its logical type. Readers disagree on such a group (arrow-rs takes the converted
 * type, a UINT_8 group for a struct; hyparquet the logical one): it is a damaged footer.
 */
function groupMismatch(element: SchemaElement): string | undefined {
  const converted = element.converted_type;
  if (converted === undefined) return undefined;
  if (!GROUP_CONVERTED.includes(converted)) return `the converted type ${converted}, which annotates no group`;
  const contradiction = logicalContradiction(element, converted);
  if (contradiction) return contradiction;
  return undefined;
}

/** What is inconsistent between a leaf's physical, converted and logical types, if anything. */
function convertedMismatch(element: SchemaElement): string | undefined {
  const converted = element.converted_type;
  if (converted === undefined) return undefined;
  const on = CONVERTED_ON[converted];
  if (on && !on.includes(element.type!)) return `the converted type ${converted}, which only annotates ${on.join(', ')}`;
  const contradiction = logicalContradiction(element, converted);
  if (contradiction) return contradiction;
  const decimal = element.logical_type?.type === 'DECIMAL' ? element.logical_type : undefined;
  // Both forms of a decimal say its precision and scale: readers take one or the other (arrow-rs refuses a file where they differ).
  if (
    decimal &&
    converted === 'DECIMAL' &&
    ((element.scale !== undefined && element.scale !== decimal.scale) ||
      (element.precision !== undefined && element.precision !== decimal.precision))
  )
    return (
      `the logical type DECIMAL(${decimal.precision},${decimal.scale}) but the converted type ` +
      `DECIMAL(${element.precision ?? '?'},${element.scale ?? '?'})`
    );
  return undefined;
}

interface Leaf {
  readonly path: readonly string[];
  readonly element: SchemaElement;
  /** No REPEATED element on its path: one value (or NULL) per row. */
  readonly flat: boolean;
}

/** The schema's leaves in order, checking the tree's shape without recursion (a damaged count could nest it arbitrarily deep). */
function leavesOf(schema: readonly SchemaElement[]): Leaf[] {
  if (schema.length === 0) throw new FooterInconsistent('the schema has no root element');
  const leaves: Leaf[] = [];
  // Each open group: how many children it still expects, its path, and whether it repeats.
  const stack: { left: number; path: string[]; flat: boolean }[] = [];
  const rootChildren = schema[0]!.num_children ?? 0;
  if (!Number.isInteger(rootChildren) || rootChildren < 0)
    throw new FooterInconsistent(`the schema's root claims ${rootChildren} children`);
  stack.push({ left: rootChildren, path: [], flat: true });
  let i = 1;
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.left === 0) {
      stack.pop();
      continue;
    }
    const element = schema[i];
    if (element === undefined)
      throw new FooterInconsistent(`the schema ends after ${schema.length} elements, inside a group that expects ${top.left} more`);
    top.left--;
    i++;
    const path = [...top.path, element.name];
    const flat = top.flat && element.repetition_type !== 'REPEATED';
    const children = element.num_children ?? 0;
    if (!Number.isInteger(children) || children < 0)
      throw new FooterInconsistent(`schema element "${path.join('.')}" claims ${children} children`, path[0]);
    if (children > 0) {
      const group = groupMismatch(element);
      if (group) throw new FooterInconsistent(`column "${path.join('.')}" is a group with ${group}`, path[0]);
      if (stack.length >= MAX_SCHEMA_DEPTH)
        throw new FooterInconsistent(`column "${path[0]}" is nested more than ${MAX_SCHEMA_DEPTH} levels deep`, path[0]);
      stack.push({ left: children, path, flat });
      continue;
    }
    if (element.type === undefined) throw new FooterInconsistent(`column "${path.join('.')}" has no physical type`, path[0]);
    if (element.type === 'FIXED_LEN_BYTE_ARRAY' && !((element.type_length ?? 0) > 0)) {
      throw new FooterInconsistent(
        `column "${path.join('.')}" is FIXED_LEN_BYTE_ARRAY of length ${element.type_length ?? 'none'}`,
        path[0],
      );
    }
    const mismatch = convertedMismatch(element);
    if (mismatch) throw new FooterInconsistent(`column "${path.join('.')}" is ${element.type} with ${mismatch}`, path[0]);
    leaves.push({ path, element, flat });
  }
  if (i !== schema.length) throw new FooterInconsistent(`the schema's tree holds ${i} of its ${schema.length} elements`);
  return leaves;
}

/** Checks the footer's structure (see the module comment); returns the rows its row groups hold. */
export function checkStructure(metadata: FileMetaData): bigint {
  const leaves = leavesOf(metadata.schema);
  let rows = 0n;
  for (const [g, group] of metadata.row_groups.entries()) {
    if (group.num_rows < 0n) throw new FooterInconsistent(`row group ${g} counts ${group.num_rows} rows`);
    rows += group.num_rows;
    if (group.columns.length !== leaves.length)
      throw new FooterInconsistent(`row group ${g} has ${group.columns.length} column chunks for the schema's ${leaves.length} columns`);
    for (const [c, chunk] of group.columns.entries()) {
      const leaf = leaves[c]!;
      const name = leaf.path.join('.');
      const meta = chunk.meta_data;
      if (!meta) continue;
      if (meta.path_in_schema.join('\u0000') !== leaf.path.join('\u0000')) {
        throw new FooterInconsistent(
          `column chunk ${c} of row group ${g} is for "${meta.path_in_schema.join('.')}" where the schema has "${name}"`,
          leaf.path[0],
        );
      }
      if (meta.type !== leaf.element.type)
        throw new FooterInconsistent(
          `column "${name}" of row group ${g} is ${meta.type ?? 'of no type'} where the schema says ${leaf.element.type}`,
          leaf.path[0],
        );
      if (meta.num_values < 0n)
        throw new FooterInconsistent(`column "${name}" of row group ${g} counts ${meta.num_values} values`, leaf.path[0]);
      if (leaf.flat && meta.num_values !== group.num_rows) {
        throw new FooterInconsistent(
          `column "${name}" of row group ${g} holds ${meta.num_values} values for the group's ${group.num_rows} rows`,
          leaf.path[0],
        );
      }
    }
  }
  return rows;
}
