/**
 * The documents written from the option table: the README's options table (between two marker
 * comments) and the watcher settings of the serve config's JSON Schema. `npm run options` writes
 * them (scripts/options.ts); test/src/options/options.test.ts fails when either is not what the table gives.
 */
import { watcherSchemaProperties } from './serve.ts';
import type { JsonSchema } from './spec.ts';
import { API_ONLY, OPTION_ENTRIES, type OptionEntry } from './table.ts';

export const README_START = '<!-- options:start (written by `npm run options` from src/options/table.ts; edit there) -->';
export const README_END = '<!-- options:end -->';

function code(text: string): string {
  return `\`${text}\``;
}

function defaultCell({ spec }: OptionEntry): string {
  if (spec.defaultText !== undefined) return spec.defaultText;
  const value: unknown = spec.default;
  if (value === undefined) return '—';
  if (typeof value === 'string') return code(`'${value}'`);
  if (typeof value === 'boolean') return code(String(value));
  return String(value);
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** The README's options table, with the markers around it. */
export function readmeOptionsTable(): string {
  const rows = OPTION_ENTRIES.map((entry) => {
    const { name, spec } = entry;
    const flag = spec.flag ? code(`--${spec.flag.name}`) : '—';
    return `| ${code(name)}${spec.api === false ? ' †' : ''} | ${cell(defaultCell(entry))} | ${cell(flag)} | ${cell(spec.doc)} |`;
  });
  const apiOnly = API_ONLY.map(code);
  return [
    README_START,
    '| option | default | `hyperwatch watch` | meaning |',
    '|---|---|---|---|',
    ...rows,
    '',
    "A serve config's watcher takes each of them under the same name, besides `dir` and `table`, " +
      `except ${apiOnly.slice(0, -1).join(', ')} and ${apiOnly.at(-1)}`,
    '(objects of a program); there, as for `--fs`, `fs` is a name. † Not a `WatchOptions` field: the API takes an adapter as `db`',
    '(`createHyperAdapter({ endpointReadsFiles, releaseIdleMs })`, `createPostgresAdapter({ url })`, see [Adapters](#adapters)).',
    README_END,
  ].join('\n');
}

/** `readme` with its options table as the table gives it; throws when the markers are missing. */
export function withOptionsTable(readme: string): string {
  const start = readme.indexOf(README_START);
  const end = readme.indexOf(README_END);
  if (start < 0 || end < start) throw new Error(`README.md lacks the markers ${README_START} ... ${README_END}`);
  return readme.slice(0, start) + readmeOptionsTable() + readme.slice(end + README_END.length);
}

/** `schema` with its watcher's settings as the table gives them (`dir` and `table` kept, first). */
export function withWatcherSettings(schema: JsonSchema): JsonSchema {
  const definitions = schema.definitions as { watcher: { properties: Record<string, JsonSchema> } };
  const { dir, table } = definitions.watcher.properties;
  const watcher = { ...definitions.watcher, properties: { dir, table, ...watcherSchemaProperties() } };
  return { ...schema, definitions: { ...definitions, watcher } };
}

const WIDTH = 140;

/** JSON as the schema file is laid out: two spaces, and an object or list of plain values on one line where it fits. */
export function formatJson(value: unknown, indent = '', key = ''): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const inline = JSON.stringify(value, null, 1).replace(/\n\s*/g, ' ').replace(/\[ /g, '[').replace(/ \]/g, ']');
  const flat = Object.values(value).every(
    (v) => typeof v !== 'object' || v === null || (Array.isArray(v) && v.every((x) => typeof x !== 'object')),
  );
  if (flat && indent.length + key.length + inline.length + 1 <= WIDTH) return inline;
  const inner = `${indent}  `;
  if (Array.isArray(value)) return `[\n${value.map((v) => inner + formatJson(v, inner)).join(',\n')}\n${indent}]`;
  const lines = Object.entries(value as object).map(
    ([k, v]) => `${inner}${JSON.stringify(k)}: ${formatJson(v, inner, `${JSON.stringify(k)}: `)}`,
  );
  return `{\n${lines.join(',\n')}\n${indent}}`;
}
