/**
 * CSV conformance, hand-written report files as the producer: a title and notes before the header
 * (skipLines), comment lines between the rows and a comment trailer (commentPrefix), a byte order
 * mark and CRLF line ends, blank lines at the end, single-quoted values with a backslash escape,
 * no header (columnNames), zip codes kept as text (columnTypes, allText). Each dropped into a
 * watcher with the settings a user would give, on hyperd and on PostgreSQL. There is no setting
 * for a trailer that is not a comment line: with `onBadRows: 'skip'` it is a bad row, set aside
 * in `failed/<name>.rejected.csv` (the last test). The machinery: helpers/conformance-csv.ts.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { it } from 'node:test';
import { type AmbiguousCase, onEveryTarget, type ProducedCase, type Row } from '../../helpers/conformance-csv.ts';
import { once } from '../../helpers/csv-dates-suite.ts';
import { rowsOf } from '../../helpers/csv-dialect-suite.ts';
import { drop } from '../../helpers/drop.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';
import type { WatchBench } from '../../helpers/watch-bench.ts';

interface Booking {
  readonly id: number;
  /** As written in the report, and as it should land. */
  readonly amount: readonly [string, string | null];
  readonly day: readonly [string, string | null];
  readonly text: string;
}

const BOOKINGS: readonly Booking[] = [
  { id: 1, amount: ['1.234,50', '1234.50'], day: ['31.01.2018', '2018-01-31'], text: 'Miete Januar' },
  { id: 2, amount: ['-12,00', '-12.00'], day: ['02.01.2018', '2018-01-02'], text: 'Gebühr; Konto' },
  { id: 3, amount: ['', null], day: ['', null], text: 'storniert' },
  { id: 4, amount: ['0,99', '0.99'], day: ['12.01.2018', '2018-01-12'], text: '"Zitat" im Text' },
  { id: 5, amount: ['1.000.000,00', '1000000.00'], day: ['29.02.2020', '2020-02-29'], text: 'Bonus' },
];

/** A bank's statement: BOM, CRLF, three lines of preamble, comments between rows, a comment trailer, blank lines after it. */
function statement(bookings: readonly Booking[]): string {
  const quoted = (s: string) => (/[;"]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
  const lines = [
    'Kontoauszug Girokonto',
    'Konto: DE00 1234 5678; Zeitraum: 01.01.2018 - 31.01.2018',
    'Erstellt am 01.02.2018',
    'id;betrag;tag;text',
    ...bookings.flatMap((b, i) => [...(i === 1 ? ['# Seite 2'] : []), `${b.id};${b.amount[0]};${b.day[0]};${quoted(b.text)}`]),
    `# Ende des Auszugs: ${bookings.length} Buchungen`,
    '',
    '',
  ];
  return `\ufeff${lines.join('\r\n')}`;
}

const meant = (bookings: readonly Booking[]): Row[] => bookings.map((b) => [String(b.id), b.amount[1], b.day[1], b.text]);
const german = { csvDelimiter: ';', decimalSeparator: ',', thousandsSeparator: '.', dateStyle: 'DMY' } as const;

/** A system's export without a header line, after two lines of its own, in single quotes with backslash escapes. */
const exported = [
  "EXPORT v2 'orders'",
  'rows follow, no header',
  "1001,'Smith, J.','it\\'s fine',2018-05-06",
  "1002,'O\\'Brien','two\nlines',2018-05-07",
];

const cases: ProducedCase[] = [
  {
    name: 'a bank statement (BOM, CRLF, 3 preamble lines, comments, a comment trailer, blank lines at the end), into an existing table',
    extension: 'csv',
    file: statement(BOOKINGS),
    parts: [BOOKINGS.slice(0, 2), BOOKINGS.slice(2, 4), BOOKINGS.slice(4)].map(statement),
    dialect: { ...german, skipLines: 3, commentPrefix: '#' },
    existing: 'id BIGINT, betrag NUMERIC(12,2), tag DATE, text TEXT',
    select: 'id, CAST(betrag AS TEXT), CAST(tag AS TEXT), text',
    rows: meant(BOOKINGS),
  },
  {
    name: 'the same statement into a new table: the preamble and the comments are no part of the inferred types',
    extension: 'csv',
    file: statement(BOOKINGS),
    dialect: { ...german, skipLines: 3, commentPrefix: '#' },
    types: ['bigint', 'double precision', 'date', 'text'],
    select: 'id, CAST(CAST(betrag AS NUMERIC(12,2)) AS TEXT), CAST(tag AS TEXT), text',
    rows: meant(BOOKINGS),
  },
  {
    name: "an export with 2 lines of its own, no header (columnNames), quote \"'\" and escape '\\', a line break in a value",
    extension: 'csv',
    file: exported.join('\n'),
    parts: [exported.slice(0, 3).join('\n'), [...exported.slice(0, 2), exported[3]].join('\n')],
    dialect: { skipLines: 2, header: false, columnNames: ['order_id', 'customer', 'note', 'placed'], quote: "'", escape: '\\' },
    types: ['bigint', 'text', 'text', 'date'],
    select: 'order_id, customer, note, CAST(placed AS TEXT)',
    rows: [
      ['1001', 'Smith, J.', "it's fine", '2018-05-06'],
      ['1002', "O'Brien", 'two\nlines', '2018-05-07'],
    ],
  },
  {
    name: "a report with '--' comments: a row starting with a minus sign is a row; zip codes kept by columnTypes",
    extension: 'csv',
    file:
      '-- customers by zip\n-- generated by hand\nzip,delta,city\n-- first the east\n' +
      '00501,-5,Holtsville\n02134,--,Boston\n-- then the west\n90210,3,Beverly Hills\n',
    dialect: { commentPrefix: '--', columnTypes: { zip: 'TEXT' }, nullValues: ['--'] },
    types: ['text', 'bigint', 'text'],
    select: 'zip, delta, city',
    rows: [
      ['00501', '-5', 'Holtsville'],
      ['02134', null, 'Boston'],
      ['90210', '3', 'Beverly Hills'],
    ],
  },
  {
    name: 'a report read with allText: every column of the new table is text, values as written',
    extension: 'csv',
    file: 'Report: stock\n\nsku,qty,checked\n007,1.0,01/02/2018\n010,,13/02/2018\n',
    dialect: { skipLines: 2, allText: true },
    types: ['text', 'text', 'text'],
    select: 'sku, qty, checked',
    rows: [
      ['007', '1.0', '01/02/2018'],
      ['010', null, '13/02/2018'],
    ],
  },
];

const ambiguous: AmbiguousCase[] = [
  {
    name: 'a statement whose dates all read both ways (no dateStyle): the line named is the file’s own, preamble and comments counted',
    extension: 'csv',
    file: statement(
      BOOKINGS.filter((b) => b.id === 2 || b.id === 4).map((b) => ({ ...b, day: [b.day[0].replaceAll('.', '/'), b.day[1]] })),
    ),
    dialect: { csvDelimiter: ';', decimalSeparator: ',', thousandsSeparator: '.', skipLines: 3, commentPrefix: '#' },
    existing: 'id BIGINT, betrag NUMERIC(12,2), tag DATE, text TEXT',
    // 31/01/2018 reads only day first.
    beside: {
      file: statement(BOOKINGS.filter((b) => b.id === 1).map((b) => ({ ...b, day: [b.day[0].replaceAll('.', '/'), b.day[1]] }))),
      rows: 1,
    },
    line: 5,
    column: 'tag',
  },
];

const { pgFixture } = await postgresForFile();

function trailerCase(t: WatchBench): void {
  it('a trailer that is no comment line (Summe;...) is a bad row with onBadRows skip: set aside, the rows land', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (id BIGINT, betrag NUMERIC(12,2), tag DATE, text TEXT)`);
    const file = `${statement(BOOKINGS.slice(0, 2)).trimEnd()}\r\nSumme;1.222,50;;\r\n`;
    await drop(dir, 'trailer.csv', file);
    const stats = await once(t, dir, table, { ...opts, ...german, skipLines: 3, commentPrefix: '#', onBadRows: 'skip' });
    assert.equal(stats.filesIngested, 1, JSON.stringify(stats.lastError));
    assert.equal(stats.rowsRejected, 1);
    assert.deepEqual(
      await rowsOf(t, `SELECT id, CAST(betrag AS TEXT), CAST(tag AS TEXT), text FROM ${table} ORDER BY id`),
      meant(BOOKINGS.slice(0, 2)),
    );
    assert.match(await readFile(join(dir, 'failed', 'trailer.csv.rejected.csv'), 'utf8'), /^9,.*"Summe;1\.222,50;;"$/m);
  });
}

onEveryTarget('hand-written report files', 'conf_report_', pgFixture, { cases, ambiguous, more: trailerCase });
