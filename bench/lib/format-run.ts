/**
 * The format set as workloads of `npm run bench`: `files-own` (the bench's own CSV, and the
 * Parquet, Arrow IPC stream and Arrow IPC file made from its rows) and `files-other` (the files of
 * bench/lib/other-writers.ts), narrowed by `--formats`, `--modes` and `--tables`.
 */
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { TABLE_COLUMNS } from './data.ts';
import {
  FILE_FORMATS,
  type FileFormat,
  type FormatCase,
  runFormatSet,
  type SetContext,
  type SetFile,
  TABLE_STATES,
  type TableState,
  WATCH_MODES,
  type WatchMode,
} from './format-set.ts';
import { now } from './measure.ts';
import { writeOtherFiles } from './other-writers.ts';

export interface FormatFilters {
  readonly own: boolean;
  readonly other: boolean;
  readonly formats: readonly FileFormat[];
  readonly modes: readonly WatchMode[];
  readonly tables: readonly TableState[];
}

function pick<T extends string>(value: string | undefined, known: readonly T[], flag: string): readonly T[] {
  if (value === undefined) return known;
  const chosen = value.split(',') as T[];
  for (const v of chosen) if (!known.includes(v)) throw new Error(`unknown ${flag} value ${v}; known: ${known.join(', ')}`);
  return chosen;
}

/** `--formats`, `--modes`, `--tables` (comma-separated; default: all, and `quick` only the fresh table). */
export function formatFilters(
  own: boolean,
  other: boolean,
  args: { formats?: string; modes?: string; tables?: string },
  quick: boolean,
): FormatFilters {
  const tables = pick(args.tables, TABLE_STATES, '--tables');
  return {
    own,
    other,
    formats: pick(args.formats, FILE_FORMATS, '--formats'),
    modes: pick(args.modes, WATCH_MODES, '--modes'),
    tables: quick && args.tables === undefined ? ['fresh'] : tables,
  };
}

/** The bench's own files: its CSV and what hyperd (and apache-arrow) made of the same rows. */
export async function ownFiles(
  paths: { csv: string; parquet: string; arrowFile: string; arrowStream: string },
  rows: number,
): Promise<SetFile[]> {
  const files = [
    { key: 'csv-own', format: 'csv', writer: "the bench's generator", path: paths.csv, ext: '.csv' },
    { key: 'parquet-own', format: 'parquet', writer: 'hyperd COPY TO (FORMAT parquet)', path: paths.parquet, ext: '.parquet' },
    {
      key: 'arrow-file-own',
      format: 'arrow-file',
      writer: "apache-arrow tableToIPC 'file' of hyperd's stream",
      path: paths.arrowFile,
      ext: '.arrow',
    },
    {
      key: 'arrow-stream-own',
      format: 'arrow-stream',
      writer: 'hyperd COPY TO (FORMAT arrowstream)',
      path: paths.arrowStream,
      ext: '.arrows',
    },
  ] as const;
  return Promise.all(
    files.map(async (f) => ({ ...f, set: 'own' as const, rows, bytes: (await stat(f.path)).size, columns: TABLE_COLUMNS })),
  );
}

/** Writes the other writers' files (when asked for), then runs every chosen case. */
export async function runFormatWorkloads(
  ctx: SetContext,
  filters: FormatFilters,
  own: () => Promise<SetFile[]>,
  rows: number,
  datasets: Record<string, { rows: number; bytes: number }>,
): Promise<FormatCase[]> {
  const files: SetFile[] = [];
  if (filters.own) files.push(...(await own()));
  if (filters.other) {
    const t = now();
    const dir = join(ctx.work, 'other-writers');
    await mkdir(dir, { recursive: true });
    const other = await writeOtherFiles(dir, rows, ctx.server, ctx.database);
    ctx.log(
      `wrote the other writers' files in ${((now() - t) / 1000).toFixed(1)} ` +
        `s: ${other.map((f) => `${f.key} ${(f.bytes / 1e6).toFixed(1)} MB`).join(', ')}`,
    );
    files.push(...other);
  }
  const chosen = files.filter((f) => filters.formats.includes(f.format));
  for (const f of chosen) datasets[f.key] = { rows: f.rows, bytes: f.bytes };
  return runFormatSet(ctx, chosen, filters.modes, filters.tables);
}
