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
import { columnList } from '../../src/columns/schema.ts';
import { sourceSelect, sourceValues, withSourceFields } from '../../src/columns/source-columns.ts';
import { qualifiedName } from '../../src/columns/sql.ts';
import type { ClaimedFile, DbConnection, IngestContext, TableName } from '../../src/types.ts';
import { copyOptions, externalSource, inFileLines, plain, type ReadPlan, serverSelect, streamedBytes, streamInstead } from './read-plan.ts';
import { fieldText, LineMap } from './splice.ts';

/** Loads `file` into the plan's columns of `table` (in file order), with the source columns filled. */
export async function loadWithSource(
  conn: DbConnection,
  file: ClaimedFile,
  table: TableName,
  plan: ReadPlan,
  serverReads: boolean,
  ctx: IngestContext,
): Promise<number> {
  const values = sourceValues(file, ctx);
  const target = `${qualifiedName(table)} (${columnList([...plan.columns, ...values])})`;
  const select = serverReads ? serverSelect(plan) : undefined;
  if (select) {
    const sql =
      `INSERT BULK INTO ${target} SELECT ${[...select.map((s) => s.expr), ...sourceSelect(values, ctx.sqlType)].join(', ')} ` +
      `FROM ${externalSource(file.stagedPath, select, plan)}`;
    const guarded = select.some((s, i) => s.type !== plan.columns[i]!.sqlType);
    return conn.execute(sql).catch((error: unknown) => Promise.reject(streamInstead(error, file, guarded, ctx)));
  }
  const statement = `COPY ${target} FROM STDIN WITH ${copyOptions(plan.text)}`;
  // Bytes that go as they are get the values from withSourceFields (which knows the default
  // quoting); any other file gets them from the streamed reader, after each record.
  if (plain(plan) && plan.text.quote === '"' && plan.text.escape === '"')
    return conn.copyFrom(statement, withSourceFields(file.stream(), values, plan.delimiter));
  const lines = new LineMap();
  const suffix = new TextEncoder().encode(
    values.map((v) => `${plan.delimiter}${fieldText(v.text ?? undefined, plan.delimiter, plan.text.quote, plan.text.escape)}`).join(''),
  );
  return conn
    .copyFrom(statement, streamedBytes(file, plan, lines, suffix))
    .catch((error: unknown) => Promise.reject(inFileLines(error, lines)));
}
