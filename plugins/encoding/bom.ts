/**
 * UTF-16 text files recognised by their byte order mark, with no `encoding` set. Spreadsheets
 * save "Unicode text" (Excel: tab-separated) as UTF-16 with a mark; read as UTF-8 its every other
 * byte is a NUL, which hyperd's COPY answers by closing the connection. The mark is the file's own
 * declaration, so such a file is decoded from UTF-16, as an explicit `encoding: 'utf-16'` would;
 * every other file goes to its plugin untouched (the database may still read it from its path).
 */
import { ResultAsync } from 'neverthrow';
import { fromDbError, groupFailure, IngestFailure } from '../../src/errors.ts';
import { defineIngester } from '../../src/plugins.ts';
import type { AppendResult, ClaimedFile, DbConnection, IngestContext, IngesterPlugin, TableName } from '../../src/types.ts';
import { encodedIngester } from './encoded.ts';
import { notTextProblem, SNIFF_BYTES } from './not-text.ts';

/** `FF FE` (little-endian) or `FE FF` (big-endian) at the start. */
function hasUtf16Mark(head: Uint8Array): boolean {
  return head.length >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff));
}

/**
 * Whether the file starts with a UTF-16 mark; fails (an `IngestFailure`) when its start shows it
 * is not text at all (see not-text.ts), e.g. UTF-16 without a mark, whose byte order would be a guess.
 */
async function markedUtf16(file: ClaimedFile): Promise<boolean> {
  if (file.size < 2) return false;
  const head = await file.read(0, Math.min(SNIFF_BYTES, file.size));
  if (hasUtf16Mark(head)) return true;
  const problem = notTextProblem(file.name, head, false);
  if (problem) throw new IngestFailure(problem);
  return false;
}

/**
 * `inner` for the text extensions it reads (`extensions`), with files that start with a UTF-16
 * byte order mark decoded from UTF-16 first. A group holding such a file is loaded one file after
 * another in its transaction; a group without one goes to `inner` as it is.
 */
export function utf16MarkedIngester(inner: IngesterPlugin, extensions: readonly string[]): IngesterPlugin {
  const decoded = encodedIngester(inner, { encoding: 'utf-16', extensions });
  const one = (conn: DbConnection, file: ClaimedFile, table: TableName, ctx: IngestContext) =>
    ResultAsync.fromPromise(markedUtf16(file), (error) => fromDbError(error, file.name)).andThen((marked) =>
      (marked ? decoded : inner).append(conn, file, table, ctx),
    );
  const many = inner.appendMany?.bind(inner);
  return defineIngester({
    name: inner.name,
    extensions,
    append: one,
    ...(many && {
      appendMany(conn: DbConnection, files: readonly ClaimedFile[], table: TableName, ctx: IngestContext) {
        const marked = files.map((file, index) =>
          markedUtf16(file).catch((error: unknown) => Promise.reject(new IngestFailure(fromDbError(error, file.name), index))),
        );
        return ResultAsync.fromPromise(Promise.all(marked), groupFailure).andThen((marks) => {
          if (!marks.includes(true)) return many(conn, files, table, ctx);
          // Each file by the reader its mark, already read, chose.
          return ResultAsync.fromPromise(
            oneByOne(files, (file, index) => (marks[index] ? decoded : inner).append(conn, file, table, ctx)),
            groupFailure,
          );
        });
      },
    }),
  });
}

async function oneByOne(
  files: readonly ClaimedFile[],
  append: (file: ClaimedFile, index: number) => ReturnType<IngesterPlugin['append']>,
): Promise<AppendResult[]> {
  const results: AppendResult[] = [];
  for (const [index, file] of files.entries()) {
    const result = await append(file, index);
    if (result.isErr()) throw new IngestFailure(result.error, index);
    results.push(result.value);
  }
  return results;
}
