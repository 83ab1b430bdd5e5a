/**
 * The same reading of dates as date-read.ts, in SQL, for a database that reads the file itself
 * (hyperd's `external()`): the date column is read as text and made ISO by the statement. It only
 * takes the forms whose reading is plain in both (ISO; day and month with a four-digit year in the
 * order decided; year first with another separator), with every part in range. Any other value
 * makes the statement fail with `BAIL_MARKER` in its error, and the file is read again through
 * date-read.ts, which reads every form and names what it cannot read. So both ways land the same
 * values, or the second says why not.
 */
import { quoteLiteral } from '../../src/columns/sql.ts';
import type { DateRule } from './date-read.ts';

/** In the error of a statement that met a value only the streamed way reads. */
export const BAIL_MARKER = '!hyperwatch-stream ';

const DAY = '(0?[1-9]|[12][0-9]|3[01])';
const MONTH = '(0?[1-9]|1[0-2])';
const SEP = '[-/. ]';
const END = '([^0-9]|$)';
const ISO = `^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}${END}`;
const YEAR_FIRST = `^[0-9]{4}${SEP}${MONTH}${SEP}${DAY}${END}`;
const DAY_FIRST = `^${DAY}${SEP}${MONTH}${SEP}[0-9]{4}${END}`;
const MONTH_FIRST = `^${MONTH}${SEP}${DAY}${SEP}[0-9]{4}${END}`;
const THREE = `^([0-9]{1,4})${SEP}([0-9]{1,2})${SEP}([0-9]{1,4})`;

/**
 * The SQL that reads text column `column` (quoted) into `sqlType` as `readDate` does under `rule`,
 * or undefined when only the streamed way can (a format).
 */
export function dateSql(column: string, sqlType: string, rule: DateRule): string | undefined {
  if (rule.format) return undefined;
  const cast = (text: string) => `CAST(${text} AS ${sqlType})`;
  const reorder = (replacement: string) => cast(`regexp_replace(${column}, ${quoteLiteral(THREE)}, ${quoteLiteral(replacement)})`);
  const branches = [
    `WHEN ${column} ~ ${quoteLiteral(ISO)} THEN ${cast(column)}`,
    `WHEN ${column} ~ ${quoteLiteral(YEAR_FIRST)} THEN ${reorder('\\1-\\2-\\3')}`,
  ];
  const order = rule.style === 'DMY' || rule.style === 'MDY' ? rule.style : rule.style === undefined ? rule.order : undefined;
  if (order === 'DMY') branches.push(`WHEN ${column} ~ ${quoteLiteral(DAY_FIRST)} THEN ${reorder('\\3-\\2-\\1')}`);
  if (order === 'MDY') branches.push(`WHEN ${column} ~ ${quoteLiteral(MONTH_FIRST)} THEN ${reorder('\\3-\\1-\\2')}`);
  return `CASE WHEN ${column} IS NULL THEN NULL ${branches.join(' ')} ELSE ${cast(`${quoteLiteral(BAIL_MARKER)} || ${column}`)} END`;
}

/** The database refused a value only the streamed way reads (see `BAIL_MARKER`). */
export function isBail(error: unknown): boolean {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' && message.includes(BAIL_MARKER.trim());
}
