/**
 * Column types the user gives (`columnTypes`, `allText`) in place of the inferred ones, when a
 * table is created from a file and when a column is added to one: a zip code `00501` inferred as
 * a number loses its zeros, so the user says `zip=TEXT`. Any type the database has may be given;
 * it is written into the DDL as given, after a check that it is a type's spelling and nothing
 * more, and the database is asked at start whether it has it.
 */
import { parseSqlType } from './sql-types.ts';
import type { ColumnSpec, DbPool, LogicalType, SchemaPolicy } from '../types.ts';

/**
 * A type's spelling: words, a modifier of one or two numbers, array brackets (`TEXT`,
 * `NUMERIC(10,2)`, `character varying(5)`, `timestamp with time zone`, `int[]`, `s.mood`).
 * Nothing a statement could be hidden in (quotes, semicolons, comments).
 */
const WORDS = '[A-Za-z_][A-Za-z0-9_]*(?:[ .][A-Za-z_][A-Za-z0-9_]*)*';
const MODIFIER = String.raw`(?: ?\( ?\d+ ?(?:, ?\d+ ?)?\))?`;
const TYPE_SPELLING = new RegExp(String.raw`^${WORDS}${MODIFIER}(?: ?[A-Za-z ]+)?(?:\[\d*\])*$`);

/** Why `type` cannot be a column type given for `column`, or undefined. */
export function columnTypeProblem(column: string, type: unknown): string | undefined {
  if (column.trim() === '') return 'names an empty column';
  if (typeof type !== 'string' || !TYPE_SPELLING.test(type.trim()))
    return (
      `gives column "${column}" the type ${JSON.stringify(type)}, ` +
      'which is not the name of an SQL type (e.g. TEXT, NUMERIC(10,2), DATE)'
    );
  return undefined;
}

/** `zip=TEXT` → `['zip', 'TEXT']`, split at the last `=` (a column's name may hold one), or the problem. */
export function parseColumnType(text: string): [string, string] | { problem: string } {
  const at = text.lastIndexOf('=');
  if (at <= 0 || at === text.length - 1) return { problem: `expects <column>=<type>, e.g. zip=TEXT, got ${JSON.stringify(text)}` };
  return [text.slice(0, at), text.slice(at + 1).trim()];
}

/** The logical type closest to an SQL type given: what the plugins read values for; TEXT when none is. */
function logicalOf(sql: string): LogicalType {
  const t = parseSqlType(sql);
  switch (t.family) {
    case 'numeric':
      return { kind: 'decimal', precision: t.precision ?? 38, scale: t.scale };
    case 'boolean':
    case 'smallint':
    case 'integer':
    case 'bigint':
    case 'real':
    case 'double':
    case 'json':
    case 'bytes':
    case 'date':
    case 'interval':
    case 'time':
    case 'timestamp':
    case 'timestamptz':
      return { kind: t.family };
    default:
      return { kind: 'text' };
  }
}

/** The type given for column `name`: by its exact name, else case-insensitively when one matches. */
function givenFor(name: string, columnTypes: Readonly<Record<string, string>>): string | undefined {
  if (Object.hasOwn(columnTypes, name)) return columnTypes[name];
  const folded = Object.keys(columnTypes).filter((k) => k.toLowerCase() === name.toLowerCase());
  return folded.length === 1 ? columnTypes[folded[0]!] : undefined;
}

/**
 * `specs` (inferred for a new table or for columns to add) with the types the user gave: a
 * column of `columnTypes` gets its type as written (`sql`), every other one TEXT under `allText`.
 */
export function givenTypes(specs: readonly ColumnSpec[], policy: SchemaPolicy): ColumnSpec[] {
  const { columnTypes = {}, allText = false } = policy;
  return specs.map((spec) => {
    const sql = givenFor(spec.name, columnTypes);
    if (sql !== undefined) return { name: spec.name, type: logicalOf(sql), sql };
    return allText ? { name: spec.name, type: { kind: 'text' } } : spec;
  });
}

/** Whether the policy changes any inferred type. */
export function typesGiven(policy: SchemaPolicy): boolean {
  return policy.allText === true || Object.keys(policy.columnTypes ?? {}).length > 0;
}

/**
 * Asks the database whether it has each type given (a cast of NULL to it), before any file
 * counts on it: the first it refuses, with its column and the database's words, else undefined.
 */
export async function refusedColumnType(
  pool: DbPool,
  columnTypes: Readonly<Record<string, string>>,
): Promise<{ column: string; type: string; reason: string } | undefined> {
  for (const [column, type] of Object.entries(columnTypes)) {
    try {
      await pool.query(`SELECT CAST(NULL AS ${type}) AS probe`);
    } catch (error) {
      return { column, type, reason: error instanceof Error ? error.message : String(error) };
    }
  }
  return undefined;
}
