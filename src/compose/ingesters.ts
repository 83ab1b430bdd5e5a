/**
 * The ingester plugins a watcher uses: the built-ins (`builtinIngesters`), the user's own over
 * them, and the layers over the text formats (character sets, compression). Also the watcher's
 * CSV settings turned into the CSV plugin's dialect, and their checks for the option table. Part
 * of the composition root (src/compose.ts): the one place that knows which plugins exist.
 */
import { arrowIngester } from '../../plugins/arrow/index.ts';
import { compressedIngester } from '../../plugins/compressed/index.ts';
import { createCsvIngester, type CsvDialect, csvIngester, dialectProblems } from '../../plugins/csv/index.ts';
import { encodedIngester, isUtf8, utf16MarkedIngester } from '../../plugins/encoding/index.ts';
import { createJsonIngester, type JsonDialect, jsonIngester } from '../../plugins/json/index.ts';
import { parquetIngester } from '../../plugins/parquet/index.ts';
import { PluginRegistry } from '../plugins.ts';
import type { CsvOptions } from '../options.ts';
import type { IngesterPlugin } from '../types.ts';
import { CSV_FILE_SETTINGS } from '../types/csv-dialect.ts';

export { delimiterProblem as csvDelimiterProblem, sniffCsv, sniffedFlags } from '../../plugins/csv/index.ts';
export { encodingProblem } from '../../plugins/encoding/index.ts';

/** The CSV settings of a watcher's options (`CsvOptions` and `csvDelimiter`), as the CSV plugin's dialect. */
export function csvDialectOf(options: CsvOptions & { readonly csvDelimiter?: string }): CsvDialect {
  const dialect: Record<string, unknown> = {};
  if (options.csvDelimiter !== undefined) dialect.delimiter = options.csvDelimiter;
  for (const key of CSV_FILE_SETTINGS) if (options[key] !== undefined) dialect[key] = options[key];
  return dialect as CsvDialect;
}

/** The settings that mean something in JSON (NULL markers, how dates are written in strings), as the JSON plugin's dialect. */
export function jsonDialectOf(options: CsvOptions): JsonDialect {
  const dialect: { -readonly [K in keyof JsonDialect]: JsonDialect[K] } = {};
  if (options.nullValues !== undefined) dialect.nullValues = options.nullValues;
  if (options.dateStyle !== undefined) dialect.dateStyle = options.dateStyle;
  if (options.dateFormat !== undefined) dialect.dateFormat = options.dateFormat;
  if (options.timestampFormat !== undefined) dialect.timestampFormat = options.timestampFormat;
  return dialect;
}

/**
 * What is wrong with a watcher's CSV settings, each under the option's own name (`dateStyle`, `csvDelimiter`);
 * `alone`: each setting by itself, not what is wrong with them together (see `dialectProblems`).
 */
export function csvOptionProblems(
  options: CsvOptions & { readonly csvDelimiter?: string },
  alone = false,
): { readonly option: string; readonly problem: string }[] {
  return dialectProblems(csvDialectOf(options), alone).map((p) => ({
    option: p.field === 'delimiter' ? 'csvDelimiter' : p.field,
    problem: p.problem,
  }));
}

/** The ingesters every watcher has unless `WatchOptions.plugins` replaces them. */
export const builtinIngesters: readonly IngesterPlugin[] = [csvIngester, jsonIngester, parquetIngester, arrowIngester];

/**
 * The text formats: read compressed too (`.csv.gz`, `.jsonl.zst`, ...) and decoded from `encoding`,
 * by whichever plugin reads them plain.
 */
export const COMPRESSIBLE_EXTENSIONS = ['.csv', '.tsv', '.json', '.jsonl', '.ndjson'] as const;

/** How a watcher's plugins read text files (see `WatchOptions`). */
export interface TextSettings {
  readonly compression: boolean;
  readonly maxDecompressedBytes: number;
  /** How `.csv` and `.tsv` files are written (delimiter, dates...); empty: the defaults. */
  readonly csv?: CsvDialect;
  /** How JSON strings are read (NULL markers, dates); empty: the defaults. */
  readonly json?: JsonDialect;
  /** The character set of text files; undefined or UTF-8: read as they are. */
  readonly encoding?: string;
}

/**
 * The plugins a watcher uses: the built-ins, then `extra`, which replace them for the extensions
 * they list; the text formats (`COMPRESSIBLE_EXTENSIONS`, whichever plugin reads them) decoded
 * from `encoding` when one is set, and read compressed too (`.csv.gz`) unless `compression` is off.
 */
export function watcherPlugins(extra: readonly IngesterPlugin[], text: TextSettings): PluginRegistry {
  const customCsv = text.csv !== undefined && Object.keys(text.csv).length > 0;
  const customJson = text.json !== undefined && Object.keys(text.json).length > 0;
  const builtins = builtinIngesters.map((p) => {
    if (p === csvIngester && customCsv) return createCsvIngester(text.csv);
    if (p === jsonIngester && customJson) return createJsonIngester(text.json);
    return p;
  });
  // Checks that no two extras claim one extension; then builtins, extras and the variants below
  // in one list, where a later plugin replaces an earlier one for the extensions it lists.
  let registry = new PluginRegistry(builtins, extra);
  const layers: IngesterPlugin[] = [...builtins, ...extra];
  // In another character set when one is set; else UTF-8, or UTF-16 when a file's byte order mark says so.
  const utf8 = text.encoding === undefined || isUtf8(text.encoding);
  layers.push(
    ...textPlugins(registry).map(([plugin, extensions]) =>
      utf8 ? utf16MarkedIngester(plugin, extensions) : encodedIngester(plugin, { encoding: text.encoding!, extensions }),
    ),
  );
  registry = new PluginRegistry(layers);
  if (!text.compression) return registry;
  const compressed = textPlugins(registry).map(([plugin, extensions]) =>
    compressedIngester(plugin, { maxDecompressedBytes: text.maxDecompressedBytes, extensions }),
  );
  return new PluginRegistry([...layers, ...compressed]);
}

/** The plugin that reads each text extension in `registry`, with the text extensions it reads. */
function textPlugins(registry: PluginRegistry): [IngesterPlugin, string[]][] {
  const byPlugin = new Map<IngesterPlugin, string[]>();
  for (const ext of COMPRESSIBLE_EXTENSIONS) {
    const match = registry.match(`x${ext}`);
    if (match?.extension === ext) byPlugin.set(match.plugin, [...(byPlugin.get(match.plugin) ?? []), ext]);
  }
  return [...byPlugin];
}
