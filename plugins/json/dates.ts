/**
 * Date strings in JSON read without a guess, as CSV fields are (plugins/shared/date-columns.ts):
 * each date column of the COPY gets its rule from the settings and the strings the sample holds
 * for it, before the COPY starts (a sample that cannot be read without a guess fails the file
 * there, before a row lands), and every string in it is then handed to the database as ISO.
 */
import type { ClaimedFile } from '../../src/types.ts';
import { type DateKind, decidedRule } from '../shared/date-columns.ts';
import type { DateRule } from '../shared/date-read.ts';
import { type JsonReading, unmarked } from './dialect.ts';
import type { KeyMap } from './key-map.ts';
import type { Sample } from './sample.ts';

/**
 * The date rule of each COPY column (`kinds[i]`: the kind of date column `i` holds, if any), from
 * the sample's strings for it; throws the file's failure as `decidedRule` does.
 */
export function jsonDateRules(
  columns: readonly { readonly name: string }[],
  kinds: readonly (DateKind | undefined)[],
  keys: KeyMap,
  sample: Sample,
  reading: JsonReading,
  file: ClaimedFile,
): (DateRule | undefined)[] {
  if (!kinds.some((k) => k !== undefined)) return kinds.map(() => undefined);
  const values = columns.map((): string[] => []);
  const lines = columns.map((): number[] => []);
  for (const record of sample.records) {
    for (const key in record.value) {
      const index = keys.lookup(key);
      if (index < 0 || kinds[index] === undefined) continue;
      const value = unmarked(record.value[key], reading.nulls);
      if (typeof value !== 'string') continue;
      values[index]!.push(value);
      lines[index]!.push(record.line);
    }
  }
  return kinds.map((kind, i) =>
    kind === undefined ? undefined : decidedRule(kind, reading.dates, values[i]!, lines[i]!, file, columns[i]!.name),
  );
}
