/**
 * CSV conformance, DuckDB as the producer: files written at test time by DuckDB's `COPY ... TO`
 * with its DELIMITER, NULL, DATEFORMAT, TIMESTAMPFORMAT, HEADER and COMPRESSION options, each
 * dropped into a watcher with the settings a user would give for them, on hyperd and on
 * PostgreSQL. The machinery: helpers/conformance-csv.ts.
 */
import { rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { quoteLiteral } from '../../../src/columns/sql.ts';
import { type AmbiguousCase, onEveryTarget, type ProducedCase, type Row } from '../../helpers/conformance-csv.ts';
import { tempDir } from '../../helpers/env.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';

/** What the producer holds: id, an amount, a date, a timestamp (whole minutes) and a text, as each database prints them. */
const SOURCE: readonly [number, string | null, string | null, string | null, string | null][] = [
  [1, '1234.5', '2018-02-01', '2018-11-12 10:30:00', 'a;b'],
  [2, null, null, null, null],
  [3, '-0.25', '2018-12-31', '2018-01-02 23:59:00', 'say "hi"'],
  [4, '0', '2018-03-04', '2018-03-04 00:00:00', 'NA'],
  [5, '1e+20', '2019-07-08', '2019-07-08 08:09:00', 'two\nlines'],
  [6, '12345678.5', '2020-02-29', '2020-02-29 12:00:00', '\\N'],
];

/** Texts for another quote and escape, and timestamps with fractions of a second. */
const QUOTED: readonly [number, string | null, string | null][] = [
  [1, 'it\'s, "q"', '2018-11-12 10:30:00.123456'],
  [2, 'back\\slash', '2018-01-02 23:59:59.5'],
  [3, null, null],
  [4, "'quoted'\nover two lines", '2018-12-31 00:00:00'],
];

const sqlValue = (v: string | null, type: string) => (v === null ? `CAST(NULL AS ${type})` : `CAST(${quoteLiteral(v)} AS ${type})`);

const duck = await (async () => {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const values = SOURCE.map(
    ([id, a, d, ts, s]) =>
      `(${id}, ${sqlValue(a, 'DOUBLE')}, ${sqlValue(d, 'DATE')}, ${sqlValue(ts, 'TIMESTAMP')}, ${sqlValue(s, 'VARCHAR')})`,
  );
  await conn.run(`CREATE TABLE src AS SELECT * FROM (VALUES ${values.join(', ')}) v(id, amount, d, ts, s)`);
  const quoted = QUOTED.map(([id, s, ts]) => `(${id}, ${sqlValue(s, 'VARCHAR')}, ${sqlValue(ts, 'TIMESTAMP')})`);
  await conn.run(`CREATE TABLE quoted AS SELECT * FROM (VALUES ${quoted.join(', ')}) v(id, s, ts)`);
  const dir = await tempDir('hyperwatch-duckdb-csv-');
  let n = 0;
  return {
    /** DuckDB's file of `query` written with `options` (the COPY option list), and its own gzip-compressed one. */
    async copy(query: string, options: string): Promise<{ file: Uint8Array; gzipped: Uint8Array }> {
      const path = join(dir, `f${++n}.csv`);
      await conn.run(`COPY (${query}) TO ${quoteLiteral(path)} (${options})`);
      await conn.run(`COPY (${query}) TO ${quoteLiteral(`${path}.gz`)} (${options}, COMPRESSION gzip)`);
      return { file: await readFile(path), gzipped: await readFile(`${path}.gz`) };
    },
    close() {
      conn.closeSync();
      instance.closeSync();
      rmSync(dir, { recursive: true, force: true });
    },
  };
})();

const all = 'SELECT * FROM src ORDER BY id';
/** The rows as three small files, each written by DuckDB as the whole one is. */
const parts = async (options: string) =>
  Promise.all([0, 1, 2].map(async (k) => (await duck.copy(`SELECT * FROM src WHERE id % 3 = ${k} ORDER BY id`, options)).file));

const semicolon = "DELIMITER ';', NULL 'NA', DATEFORMAT '%d/%m/%Y', TIMESTAMPFORMAT '%d/%m/%Y %H:%M:%S', HEADER false";
const tab = "DELIMITER '\t', NULL '\\N', DATEFORMAT '%m/%d/%Y', TIMESTAMPFORMAT '%m/%d/%Y %H:%M', HEADER true";
const pipe = "DELIMITER '|', NULL 'NULL', DATEFORMAT '%d.%m.%Y', TIMESTAMPFORMAT '%d.%m.%Y %H.%M'";
const quotedOptions = "QUOTE '''', ESCAPE '\\', TIMESTAMPFORMAT '%d/%m/%Y %H:%M:%S.%f'";
const compact = "DATEFORMAT '%Y%m%d', TIMESTAMPFORMAT '%Y%m%d %H%M%S'";

/** Doubles spelled as each database spells them differ (1e+20, 100000000000000000000): compared as NUMERIC. */
const DOUBLE_AS_TEXT = 'CAST(CAST(amount AS NUMERIC(24,2)) AS TEXT)';
const asNumeric = (rows: typeof SOURCE): Row[] =>
  rows.map(([id, a, ...rest]) => [String(id), a === null ? null : Number(a).toFixed(2), ...rest]);

const cases: ProducedCase[] = [
  {
    name: "DuckDB DELIMITER ';', NULL 'NA', day-first dates, HEADER false, into a new table",
    extension: 'csv',
    ...(await duck.copy(all, semicolon)),
    parts: await parts(semicolon),
    dialect: { csvDelimiter: ';', nullValues: ['NA'], dateStyle: 'DMY', header: false, columnNames: ['id', 'amount', 'd', 'ts', 's'] },
    types: ['bigint', 'double precision', 'date', 'timestamp', 'text'],
    select: `id, ${DOUBLE_AS_TEXT}, CAST(d AS TEXT), CAST(ts AS TEXT), s`,
    rows: asNumeric(SOURCE),
  },
  {
    name: "DuckDB DELIMITER '\\t', NULL '\\N', month-first dates, a header, into an existing DOUBLE, DATE, TIMESTAMP table",
    extension: 'tsv',
    ...(await duck.copy(all, tab)),
    parts: await parts(tab),
    dialect: { nullValues: ['\\N'], dateStyle: 'MDY' },
    existing: 'id BIGINT, amount DOUBLE PRECISION, d DATE, ts TIMESTAMP, s TEXT',
    select: `id, ${DOUBLE_AS_TEXT}, CAST(d AS TEXT), CAST(ts AS TEXT), s`,
    rows: asNumeric(SOURCE),
  },
  {
    name:
      "DuckDB DELIMITER '|', NULL 'NULL', DATEFORMAT '%d.%m.%Y', TIMESTAMPFORMAT '%d.%m.%Y %H.%M' " +
      'given as dateFormat and timestampFormat',
    extension: 'csv',
    ...(await duck.copy(all, pipe)),
    dialect: { csvDelimiter: '|', nullValues: ['NULL'], dateFormat: '%d.%m.%Y', timestampFormat: '%d.%m.%Y %H.%M' },
    types: ['bigint', 'double precision', 'date', 'timestamp', 'text'],
    select: `id, ${DOUBLE_AS_TEXT}, CAST(d AS TEXT), CAST(ts AS TEXT), s`,
    rows: asNumeric(SOURCE),
  },
  {
    name: "DuckDB DATEFORMAT '%Y%m%d' into an existing DATE, TIMESTAMP table, with dateFormat and timestampFormat",
    extension: 'csv',
    ...(await duck.copy(all, compact)),
    parts: await parts(compact),
    dialect: { dateFormat: '%Y%m%d', timestampFormat: '%Y%m%d %H%M%S' },
    existing: 'id BIGINT, amount DOUBLE PRECISION, d DATE, ts TIMESTAMP, s TEXT',
    select: `id, ${DOUBLE_AS_TEXT}, CAST(d AS TEXT), CAST(ts AS TEXT), s`,
    rows: asNumeric(SOURCE),
  },
  {
    name: "DuckDB QUOTE '''', ESCAPE '\\', TIMESTAMPFORMAT '%d/%m/%Y %H:%M:%S.%f' into an existing table",
    extension: 'csv',
    ...(await duck.copy('SELECT * FROM quoted ORDER BY id', quotedOptions)),
    parts: await Promise.all(
      [0, 1].map(async (k) => (await duck.copy(`SELECT * FROM quoted WHERE id % 2 = ${k} ORDER BY id`, quotedOptions)).file),
    ),
    dialect: { quote: "'", escape: '\\', timestampFormat: '%d/%m/%Y %H:%M:%S.%f' },
    existing: 'id BIGINT, s TEXT, ts TIMESTAMP',
    select: 'id, s, CAST(ts AS TEXT)',
    rows: QUOTED.map(([id, ...rest]) => [String(id), ...rest]),
  },
];

// Only days up to the 12th: nothing in either file decides the order.
const ambiguous: AmbiguousCase[] = [
  {
    name: "DuckDB DATEFORMAT '%d/%m/%Y' with no dateStyle, into a new table",
    extension: 'csv',
    file: (
      await duck.copy(
        "SELECT id, d FROM (VALUES (1, DATE '2018-02-01'), (2, DATE '2018-11-12'), (3, DATE '2018-03-04')) v(id, d)",
        "DATEFORMAT '%d/%m/%Y'",
      )
    ).file,
    dialect: {},
    line: 2,
    column: 'd',
  },
  {
    name: "DuckDB DATEFORMAT '%m/%d/%Y' with no dateStyle, into an existing DATE column",
    extension: 'csv',
    file: (await duck.copy('SELECT id, d FROM src WHERE id IN (1, 4) ORDER BY id', "DATEFORMAT '%m/%d/%Y'")).file,
    dialect: {},
    existing: 'id BIGINT, d DATE',
    // 12/31/2018 reads only month first.
    beside: { file: (await duck.copy('SELECT id, d FROM src WHERE id = 3', "DATEFORMAT '%m/%d/%Y'")).file, rows: 1 },
    line: 2,
    column: 'd',
  },
];
duck.close();

const { pgFixture } = await postgresForFile();

onEveryTarget('CSV files written by DuckDB', 'conf_duck_', pgFixture, { cases, ambiguous });
