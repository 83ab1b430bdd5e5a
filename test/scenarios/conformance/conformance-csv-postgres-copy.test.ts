/**
 * CSV conformance, PostgreSQL's own `COPY ... TO STDOUT` as the producer (a database dump): the
 * text format (tab-separated, `\N` for NULL, no header) and the CSV format (a header, a NULL
 * marker, another delimiter, every value quoted), with the session's DateStyle writing dates ISO,
 * `SQL, DMY` (01/02/2018), `SQL, MDY` (02/01/2018) and `German` (01.02.2018). Each file dropped
 * into a watcher with the settings a user would give for it, on hyperd and on PostgreSQL. The
 * machinery: helpers/conformance-csv.ts.
 *
 * The text format is not CSV: it writes a backslash, a tab or a line break inside a value as
 * `\\`, `\t`, `\n`, and a quote as itself. The watcher reads CSV, so the text-format cases hold
 * values without these; dumps with such values are to be written with `FORMAT csv`.
 */
import postgres from 'postgres';
import { quoteLiteral } from '../../../src/columns/sql.ts';
import { type AmbiguousCase, onEveryTarget, type ProducedCase, type Row } from '../../helpers/conformance-csv.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';

const { pg, pgFixture } = await postgresForFile();

type Source = readonly [number, string | null, string | null, string | null, string | null];
/** id, an amount (NUMERIC(12,2)), a date, a timestamp and a text, as both databases print them. */
const PLAIN: readonly Source[] = [
  [1, '1234.50', '2018-02-01', '2018-11-12 10:30:00', 'north'],
  [2, null, null, null, null],
  [3, '-0.25', '2018-12-31', '2018-01-02 23:59:59', 'south east'],
  [4, '0.00', '2018-03-04', '2018-03-04 00:00:00', 'NULL'],
  [5, '9999999999.99', '2019-07-08', '2019-07-08 08:09:10', 'x;y'],
];
/** What only the CSV format writes faithfully: the delimiter, quotes, a line break, a backslash in a value. */
const AWKWARD: readonly Source[] = [
  ...PLAIN,
  [6, '1.00', '2020-02-29', '2020-02-29 12:00:00', 'a,b "c"\nd'],
  [7, '2.00', '2020-03-01', '2020-03-01 00:00:01', '\\N'],
];

const dump = await (async () => {
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  await sql.unsafe('CREATE TABLE conformance_src (id INTEGER, amount NUMERIC(12,2), d DATE, ts TIMESTAMP, s TEXT)');
  const literal = (v: string | null) => (v === null ? 'NULL' : quoteLiteral(v));
  await sql.unsafe(
    `INSERT INTO conformance_src VALUES ${AWKWARD.map((r) => `(${r.map((v) => literal(v === null ? null : String(v))).join(', ')})`)}`,
  );
  return {
    /** What `COPY (query) TO STDOUT options` writes with the session's DateStyle `dateStyle`. */
    async copy(query: string, options: string, dateStyle: string): Promise<Uint8Array> {
      await sql.unsafe(`SET DateStyle = ${quoteLiteral(dateStyle)}`);
      const chunks: Buffer[] = [];
      for await (const chunk of await sql.unsafe(`COPY (${query}) TO STDOUT ${options}`).readable()) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    },
    close: () => sql.end(),
  };
})();

const plain = 'SELECT * FROM conformance_src WHERE id <= 5 ORDER BY id';
const all = 'SELECT * FROM conformance_src ORDER BY id';
const parts = (query: string, options: string, dateStyle: string) =>
  Promise.all([0, 1, 2].map((k) => dump.copy(`SELECT * FROM (${query}) q WHERE id % 3 = ${k}`, options, dateStyle)));
const rows = (source: readonly Source[]): Row[] => source.map(([id, ...rest]) => [String(id), ...rest]);
const names = ['id', 'amount', 'd', 'ts', 's'];
const select = 'id, CAST(amount AS TEXT), CAST(d AS TEXT), CAST(ts AS TEXT), s';
const existing = 'id BIGINT, amount NUMERIC(12,2), d DATE, ts TIMESTAMP, s TEXT';
/**
 * A new table's amounts are doubles, spelled here with the two decimals they had (NUMERIC(18,2):
 * hyperd's cast of the double 9999999999.99 to NUMERIC(12,2) overflows).
 */
const selectNew = 'id, CAST(CAST(amount AS NUMERIC(18,2)) AS TEXT), CAST(d AS TEXT), CAST(ts AS TEXT), s';
const csvHeader = "(FORMAT csv, HEADER, NULL 'NULL')";
const csvSemicolon = "(FORMAT csv, HEADER, DELIMITER ';', FORCE_QUOTE *)";

const cases: ProducedCase[] = [
  {
    name: 'COPY TO text format (tab, \\N, no header), DateStyle ISO, into a new table',
    extension: 'tsv',
    file: await dump.copy(plain, '', 'ISO, MDY'),
    parts: await parts(plain, '', 'ISO, MDY'),
    dialect: { nullValues: ['\\N'], header: false, columnNames: names },
    types: ['bigint', 'double precision', 'date', 'timestamp', 'text'],
    select: selectNew,
    rows: rows(PLAIN),
  },
  {
    name: "COPY TO text format, DateStyle 'SQL, DMY' (31/12/2018), into an existing table with dateStyle DMY",
    extension: 'csv',
    file: await dump.copy(plain, '', 'SQL, DMY'),
    parts: await parts(plain, '', 'SQL, DMY'),
    dialect: { csvDelimiter: '\t', nullValues: ['\\N'], header: false, columnNames: names, dateStyle: 'DMY' },
    existing,
    select,
    rows: rows(PLAIN),
  },
  {
    name: "COPY TO CSV format with a header and NULL 'NULL', DateStyle German (31.12.2018), into a new table with dateStyle DMY",
    extension: 'csv',
    file: await dump.copy(all, csvHeader, 'German, DMY'),
    parts: await parts(all, csvHeader, 'German, DMY'),
    dialect: { nullValues: ['NULL'], dateStyle: 'DMY' },
    types: ['bigint', 'double precision', 'date', 'timestamp', 'text'],
    select: selectNew,
    rows: rows(AWKWARD),
  },
  {
    name: "COPY TO CSV format, DELIMITER ';', FORCE_QUOTE *, DateStyle 'SQL, MDY' (12/31/2018), into an existing table with dateStyle MDY",
    extension: 'csv',
    file: await dump.copy(all, csvSemicolon, 'SQL, MDY'),
    dialect: { csvDelimiter: ';', dateStyle: 'MDY' },
    existing,
    select,
    rows: rows(AWKWARD),
  },
];

// Only days up to the 12th: nothing in either file decides the order.
const undecided = 'SELECT id, d FROM conformance_src WHERE id IN (1, 4) ORDER BY id';
const ambiguous: AmbiguousCase[] = [
  {
    name: "COPY TO text format, DateStyle 'SQL, DMY', no dateStyle, into an existing DATE column",
    extension: 'tsv',
    file: await dump.copy(undecided, '', 'SQL, DMY'),
    dialect: { nullValues: ['\\N'], header: false, columnNames: ['id', 'd'] },
    existing: 'id BIGINT, d DATE',
    // 31/12/2018 reads only day first.
    beside: { file: await dump.copy('SELECT id, d FROM conformance_src WHERE id = 3', '', 'SQL, DMY'), rows: 1 },
    line: 1,
    column: 'd',
  },
  {
    name: "COPY TO CSV format, DateStyle 'SQL, MDY', no dateStyle, into a new table",
    extension: 'csv',
    file: await dump.copy(undecided, '(FORMAT csv, HEADER)', 'SQL, MDY'),
    dialect: {},
    line: 2,
    column: 'd',
  },
];
await dump.close();

onEveryTarget('CSV files written by PostgreSQL COPY TO', 'conf_pgcopy_', pgFixture, { cases, ambiguous });
