/**
 * The watcher's settings, for the modules that take them: the types, the checks and defaults.
 * Each setting is declared once, in the option table (options/table.ts and options/table/).
 */
export { WatchConfigError } from './options/error.ts';
export { checkOptions, clampMaxConcurrent, type ResolvedOptions, resolveOptions } from './options/resolve.ts';
export { DEFAULT_MARKER } from './options/table/intake.ts';
export { DEFAULT_MAX_DECOMPRESSED_BYTES } from './options/table/text.ts';
export {
  type CsvOptions,
  DATE_STYLES,
  type DatabaseSettings,
  type DateStyle,
  ON_SUCCESS,
  type OnSuccess,
  type ReadyWhen,
  type WatchOptions,
} from './options/watch-options.ts';
