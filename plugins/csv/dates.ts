/**
 * How a CSV file's date columns are read (plugins/shared/date-columns.ts), decided once per file
 * from the settings and the head of the file: for the columns of an existing table that hold
 * dates, and for the columns of a new table, which are dates only when their values say so
 * without a guess. A head whose values cannot be read without a guess fails the file here, before
 * anything loads (and before a table is made from it).
 */
import type { ClaimedFile } from '../../src/types.ts';
import { type DateSettings, dateKind, decidedRule } from '../shared/date-columns.ts';
import type { DateRule } from '../shared/date-read.ts';
import { columnValues, type Head } from './head.ts';

export {
  baseDateRules,
  type DateKind,
  dateFailure,
  dateKind,
  inferDatedType as inferCsvType,
} from '../shared/date-columns.ts';

/**
 * The date rule of each column (undefined for a column that holds no date), in file order; throws
 * the file's failure when the head holds a value that cannot be read without a guess.
 */
export function dateRules(
  columns: readonly { readonly name: string; readonly sqlType: string }[],
  head: Head,
  settings: DateSettings,
  file: ClaimedFile,
): (DateRule | undefined)[] {
  return columns.map((column, index) => {
    const kind = dateKind(column.sqlType);
    return kind ? decidedRule(kind, settings, columnValues(head, index), head.lines, file, column.name) : undefined;
  });
}
