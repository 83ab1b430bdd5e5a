/**
 * A complete third-party ingester: pipe-separated values (`.psv`), header line first.
 * New tables get TEXT columns; existing tables are matched by column name.
 */
import { ResultAsync } from 'neverthrow';
import { columnList, createTable, defineIngester, fromDbError, ingestError, IngestFailure, isIngestFailure, matchColumns, qualifiedName } from 'hyperwatch';

export const psvIngester = defineIngester({
  name: 'psv',
  extensions: ['.psv'],
  append(conn, file, table, ctx) {
    const run = async () => {
      const head = new TextDecoder().decode(await file.read(0, 64 * 1024));
      const newline = head.indexOf('\n');
      if (newline <= 0) {
        throw new IngestFailure(
          ingestError('data', 'PSV_NO_HEADER', `${file.name} has no header line`, 'Start the file with a line naming the columns, e.g. id|name.', { file: file.name, line: 1 }),
        );
      }
      const names = head.slice(0, newline).replace(/\r$/, '').split('|');
      const existing = await conn.describeTable(table);
      if (existing) {
        const matched = matchColumns(names, existing, file.name, table);
        if (matched.isErr()) throw new IngestFailure(matched.error);
      } else {
        await createTable(conn, table, names.map((name) => ({ name, type: { kind: 'text' } })), ctx.sqlType);
      }
      const copy = `COPY ${qualifiedName(table)} (${columnList(names.map((name) => ({ name })))}) FROM STDIN WITH (FORMAT csv, HEADER true, DELIMITER '|')`;
      return { rows: await conn.copyFrom(copy, file.stream()) };
    };
    return ResultAsync.fromPromise(run(), (error) => (isIngestFailure(error) ? error.error : fromDbError(error, file.name)));
  },
});
