/**
 * CSV with source columns (the file's name, claim id, commit time on every row). Where the server
 * reads the file itself, `INSERT BULK INTO ... SELECT <columns>, <constants> FROM external(path,
 * ...)`: the same parser as `COPY FROM 'path'` (the same error text, line and column), and the
 * same bulk load. hyperd runs a plain `INSERT ... SELECT` from `external()` on one thread and
 * writes the rows out only at commit; `INSERT BULK` parses and writes them on every core as the
 * statement runs, like `COPY` (BENCHMARKS.md, "Bulk CSV with a source column"). Like `COPY`, its
 * rows are in the table once the transaction commits, and gone if it rolls back. A column DEFAULT
 * cannot carry the name: hyperd's `COPY` with a column list leaves the other columns NULL, and
 * setting a DEFAULT is DDL, which Hyper commits outside the transaction. Elsewhere the streamed
 * text gets the values appended to each record on its way to `COPY ... FROM STDIN`.
 */
import { columnList } from '../../src/schema.ts';
import { sourceSelect, sourceValues, withSourceFields } from '../../src/source-columns.ts';
import { qualifiedName, quoteIdent, quoteLiteral } from '../../src/sql.ts';
import type { ClaimedFile, DbConnection, IngestContext, TableName } from '../../src/types.ts';

/** Loads `file` into `columns` of `table` (in file order), with the source columns filled. */
export async function loadWithSource(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  columns: readonly { name: string; sqlType: string }[],
  delimiter: string,
  ctx: IngestContext,
): Promise<number> {
  const values = sourceValues(file, ctx);
  const target = `${qualifiedName(table)} (${columnList([...columns, ...values])})`;
  if (ctx.capabilities.readsLocalFiles) {
    const descriptor = columns.map((c) => `${quoteIdent(c.name)} ${c.sqlType}`).join(', ');
    const source = `external(${quoteLiteral(file.stagedPath)}, COLUMNS => DESCRIPTOR(${descriptor}), FORMAT => 'csv', HEADER => true, DELIMITER => ${quoteLiteral(delimiter)})`;
    return conn.execute(`INSERT BULK INTO ${target} SELECT ${[columnList(columns), ...sourceSelect(values, ctx.sqlType)].join(', ')} FROM ${source}`);
  }
  const options = `(FORMAT csv, HEADER true, DELIMITER ${quoteLiteral(delimiter)})`;
  return conn.copyFrom(`COPY ${target} FROM STDIN WITH ${options}`, withSourceFields(file.stream(), values, delimiter));
}
