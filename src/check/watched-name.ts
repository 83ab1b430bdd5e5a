/**
 * Where a checked file sits in the watched directory: its name there (`date=2026-12-01/region=eu/
 * part-0.parquet`), which gives its partition columns (`partitionColumns`) and its `file` source
 * column. `checkFile` copies the file to that path in its scratch inbox, so the watcher itself
 * reads the folders, as it would in the user's directory.
 */
import { basename, isAbsolute, relative, resolve, sep } from 'node:path';
import { isPartitionFolder } from '../columns/partition-columns.ts';
import { WatchConfigError } from '../options.ts';

export interface WatchedName {
  /** The file's path below the watched directory, `/`-separated. */
  readonly name: string;
  /** With `readyWhen: 'marker'`: the unit folder, the first folder of `name`. */
  readonly unit?: string;
}

/**
 * `dir` given: the file's path below it (every folder between counts, as for the watcher). Else
 * the watched directory is taken to be the folder above the `key=value` folders the file is in
 * (`orders/date=2026-12-01/region=eu/part-0.parquet`: `orders`) and, with `marker`, above the
 * unit folder that holds those (`exports/job-7/date=.../part-0.parquet`: `exports`).
 */
export function watchedName(path: string, dir: string | undefined, marker: boolean): WatchedName {
  const segments = dir === undefined ? ownSegments(path, marker) : segmentsBelow(path, dir);
  if (marker && segments.length < 2)
    throw new WatchConfigError(
      `${JSON.stringify(path)} would sit directly in the watched directory${dir === undefined ? '' : ` ${JSON.stringify(dir)}`}, ` +
        "where readyWhen: 'marker' leaves files alone (it takes folders that hold their marker); " +
        'give the folder above the job folder as dir (--dir), or check the file without --ready marker',
    );
  return { name: segments.join('/'), ...(marker ? { unit: segments[0]! } : {}) };
}

function segmentsBelow(path: string, dir: string): string[] {
  const rel = relative(resolve(dir), resolve(path));
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw new WatchConfigError(
      `${JSON.stringify(path)} is not inside the watched directory ${JSON.stringify(dir)} (dir, --dir): ` +
        'give the folder the file was dropped into, or one above it',
    );
  return rel.split(sep);
}

function ownSegments(path: string, marker: boolean): string[] {
  const folders = resolve(path).split(sep).slice(1, -1);
  let from = folders.length;
  while (from > 0 && isPartitionFolder(folders[from - 1]!)) from--;
  if (marker && from > 0) from--;
  return [...folders.slice(from), basename(path)];
}
