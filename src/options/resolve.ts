/**
 * `WatchOptions` as the watcher uses them: checked (a bad one throws WatchConfigError naming it
 * and what it takes), then each unset one at its default and each number in its range, from the
 * option table.
 */
import { type BadRowLimit, type OnBadRows, parseMaxBadRows } from '../columns/bad-rows.ts';
import { parseDuration } from '../util/duration.ts';
import { type ApplyOrder, type DuplicateKeys, type LoadMode, modeKeyProblem, parseKey } from './load-modes.ts';
import { silentLogger } from '../log.ts';
import type { Logger, SchemaEvolution, SourceColumns } from '../types.ts';
import { WatchConfigError } from './error.ts';
import { OPTION_ENTRIES, OPTIONS } from './table.ts';
import { DEFAULT_RETRY_DELAY_MS } from './table/running.ts';
import { csvTogetherProblem } from './table/csv-dialect.ts';
import type { OnSuccess, ReadyWhen, WatchOptions } from './watch-options.ts';

export interface ResolvedOptions {
  readonly maxConcurrent: number;
  readonly logger: Logger;
  readonly createTable: boolean;
  readonly rescanIntervalMs: number;
  readonly readyWhen: ReadyWhen;
  readonly marker: string;
  readonly stableMs: number;
  /** Empty: every file. */
  readonly include: readonly string[];
  readonly exclude: readonly string[];
  readonly recursive: boolean;
  readonly partitionColumns: boolean;
  readonly orphanGraceMs: number;
  readonly stopTimeoutMs: number;
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  readonly queueLimit: number;
  readonly checkpointDelayMs: number;
  readonly checkpointEvery: number;
  readonly batchFiles: number;
  readonly skipDuplicateContent: boolean;
  readonly schemaEvolution: SchemaEvolution;
  readonly mode: LoadMode;
  /** The key's columns (empty for the modes without one). */
  readonly key: readonly string[];
  readonly duplicateKeys: DuplicateKeys;
  readonly order: ApplyOrder;
  readonly sourceColumns: SourceColumns;
  readonly columnTypes: Readonly<Record<string, string>>;
  readonly allText: boolean;
  readonly onBadRows: OnBadRows;
  readonly maxBadRows: BadRowLimit;
  readonly onSuccess: OnSuccess;
  /** As given (absolute, or relative to the watched directory); undefined for the default. */
  readonly archiveDir: string | undefined;
  readonly archiveByDate: boolean;
  readonly compression: boolean;
  readonly maxDecompressedBytes: number;
  readonly leaseMs: number;
  /** `ledgerRetention` in milliseconds; undefined: kept for ever. */
  readonly ledgerRetentionMs: number | undefined;
}

/** Throws WatchConfigError for the first setting given that its check refuses, then for settings that do not go together. */
export function checkOptions(options: WatchOptions): void {
  for (const { name, spec } of OPTION_ENTRIES) {
    const value = (options as Record<string, unknown>)[name];
    const problem = value === undefined ? undefined : spec.check?.(value);
    if (problem !== undefined) throw new WatchConfigError(problem);
  }
  const together = csvTogetherProblem(options);
  if (together) throw new WatchConfigError(`${together.option} ${together.problem}`);
  const marker = markerProblem(options);
  if (marker) throw new WatchConfigError(marker);
  // Not implied: turning it on would start taking the files of every subfolder, which the user did not ask for.
  // A marker folder is read whole anyway: its key=value folders are partitions without recursive.
  if (options.partitionColumns === true && options.recursive !== true && options.readyWhen !== 'marker')
    throw new WatchConfigError(
      'partitionColumns needs recursive: true (partition folders are subfolders, which are read only with recursive); ' +
        'give both (--recursive --partition-columns)',
    );
  const combined = modeKeyProblem(options.mode, options.key);
  if (combined) throw new WatchConfigError(`${combined.problem}. ${combined.fix}`);
}

/**
 * `readyWhen: 'marker'` lands a folder's files in one transaction, as they are: settings that
 * apply file by file, or to loose files of the watched directory, cannot be kept for a folder.
 */
function markerProblem(options: WatchOptions): string | undefined {
  if (options.readyWhen !== 'marker') {
    return options.marker === undefined ? undefined : "marker goes with readyWhen: 'marker' (--ready marker --marker _SUCCESS)";
  }
  const refused: [boolean, string][] = [
    [options.recursive === true, 'recursive (a marker folder is always read whole, with its subfolders; drop recursive)'],
    [(options.mode ?? 'append') !== 'append', `mode: '${options.mode}' (a folder lands in append mode only; drop mode)`],
    [options.order === 'name', "order: 'name' (folders are taken as their markers appear; drop order)"],
    [options.onBadRows === 'skip', "onBadRows: 'skip' (a folder lands whole or not at all; drop onBadRows)"],
    [(options.include?.length ?? 0) > 0 || (options.exclude?.length ?? 0) > 0, 'include / exclude (a folder lands whole; drop them)'],
  ];
  const found = refused.find(([bad]) => bad);
  return found ? `readyWhen: 'marker' cannot go with ${found[1]}` : undefined;
}

/**
 * Other modes than append, and `order: 'name'`, apply one transaction at a time: two at once
 * could commit files out of their order. A group keeps its files' order inside its transaction
 * (group.ts), except with `order: 'name'`, whose gate against other processes' earlier files
 * (name-order.ts) is passed file by file: there each file goes alone.
 */
function inOrder(options: WatchOptions): boolean {
  return (options.mode ?? 'append') !== 'append' || options.order === 'name';
}

/** 0, missing or not a number → the default; below 1 → 1; above the limit → the limit. */
export function clampMaxConcurrent(value: number | undefined): number {
  if (value === undefined || !Number.isFinite(value) || value === 0) return OPTIONS.maxConcurrent.default;
  return Math.min(OPTIONS.maxConcurrent.range.max, Math.max(OPTIONS.maxConcurrent.range.min, Math.floor(value)));
}

type Ranged = {
  [K in keyof typeof OPTIONS]: (typeof OPTIONS)[K] extends { readonly range: object; readonly default: number } ? K : never;
}[keyof typeof OPTIONS];

/** A number setting, unset → its default, below its range's minimum → the minimum. */
function inRange(options: WatchOptions, name: Ranged & keyof WatchOptions, whole = false): number {
  const spec = OPTIONS[name];
  const value = (options[name] as number | undefined) ?? spec.default;
  return Math.max(spec.range.min, whole ? Math.floor(value) : value);
}

/** Checks `options` (throwing WatchConfigError) and fills in the defaults. */
export function resolveOptions(options: WatchOptions): ResolvedOptions {
  checkOptions(options);
  const maxBadRows = parseMaxBadRows(options.maxBadRows);
  return {
    maxConcurrent: inOrder(options) ? 1 : clampMaxConcurrent(options.maxConcurrent),
    logger: options.logger ?? silentLogger,
    createTable: options.createTable ?? OPTIONS.createTable.default,
    rescanIntervalMs: inRange(options, 'rescanIntervalMs'),
    readyWhen: options.readyWhen ?? OPTIONS.readyWhen.default,
    marker: options.marker ?? OPTIONS.marker.default,
    stableMs: inRange(options, 'stableMs'),
    include: options.include ?? [],
    exclude: options.exclude ?? [],
    recursive: options.recursive ?? OPTIONS.recursive.default,
    partitionColumns: options.partitionColumns ?? OPTIONS.partitionColumns.default,
    orphanGraceMs: inRange(options, 'orphanGraceMs'),
    stopTimeoutMs: inRange(options, 'stopTimeoutMs'),
    retryInitialMs: Math.max(1, options.retryDelayMs?.initial ?? DEFAULT_RETRY_DELAY_MS.initial),
    retryMaxMs: Math.max(1, options.retryDelayMs?.max ?? DEFAULT_RETRY_DELAY_MS.max),
    queueLimit: inRange(options, 'queueLimit'),
    checkpointDelayMs: inRange(options, 'checkpointDelayMs'),
    checkpointEvery: inRange(options, 'checkpointEvery'),
    batchFiles: options.order === 'name' ? 1 : inRange(options, 'batchFiles', true),
    skipDuplicateContent: options.skipDuplicateContent ?? OPTIONS.skipDuplicateContent.default,
    schemaEvolution: options.schemaEvolution ?? OPTIONS.schemaEvolution.default,
    mode: options.mode ?? OPTIONS.mode.default,
    key: keyOf(options.key),
    duplicateKeys: options.duplicateKeys ?? OPTIONS.duplicateKeys.default,
    order: options.order ?? OPTIONS.order.default,
    sourceColumns: options.sourceColumns ?? {},
    columnTypes: options.columnTypes ?? {},
    allText: options.allText ?? OPTIONS.allText.default,
    onBadRows: options.onBadRows ?? OPTIONS.onBadRows.default,
    maxBadRows: 'limit' in maxBadRows ? maxBadRows.limit : undefined,
    onSuccess: options.onSuccess ?? OPTIONS.onSuccess.default,
    archiveDir: options.archiveDir,
    archiveByDate: options.archiveByDate ?? OPTIONS.archiveByDate.default,
    compression: options.compression ?? OPTIONS.compression.default,
    maxDecompressedBytes: inRange(options, 'maxDecompressedBytes'),
    leaseMs: inRange(options, 'leaseMs', true),
    ledgerRetentionMs: options.ledgerRetention === undefined ? undefined : parseDuration(options.ledgerRetention),
  };
}

function keyOf(key: WatchOptions['key']): readonly string[] {
  if (key === undefined) return [];
  const parsed = parseKey(key);
  return 'key' in parsed ? parsed.key : [];
}
