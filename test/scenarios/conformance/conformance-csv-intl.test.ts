/**
 * CSV conformance, spreadsheets in five locales as the producer: numbers and dates written at test
 * time by Node's `Intl.NumberFormat` and `Intl.DateTimeFormat` for de-DE (`-1.234.567,50`,
 * `03.02.2018, 14:05`), fr-FR (`-1 234 567,50` with U+202F between the groups, `03/02/2018
 * 14:05`), en-US (`-1,234,567.50`, `02/03/2018, 02:05 PM`), en-GB (`-1,234,567.50`, `03/02/2018,
 * 14:05`) and sv-SE (`−1 234 567,50` with U+2212 before and U+00A0 between the groups, ISO
 * dates), each file dropped into a watcher with the settings a user of that locale would give, on
 * hyperd and on PostgreSQL. The machinery: helpers/conformance-csv.ts.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type AmbiguousCase, type Dialect, onEveryTarget, type ProducedCase, type Row } from '../../helpers/conformance-csv.ts';
import { once, report } from '../../helpers/csv-dates-suite.ts';
import { drop } from '../../helpers/drop.ts';
import { count } from '../../helpers/env.ts';
import type { WatchBench } from '../../helpers/watch-bench.ts';
import { postgresForFile } from '../../helpers/postgres-file.ts';

interface Line {
  readonly id: number;
  readonly amount: number | null;
  readonly qty: number | null;
  /** The instant, in UTC; its date is the day, its minutes the time of the timestamp column. */
  readonly at: Date | null;
  /** A weight in kilograms, written into the text column in the locale's way (it stays text). */
  readonly kg: number;
}

const at = (y: number, m: number, d: number, h: number, min: number) => new Date(Date.UTC(y, m - 1, d, h, min));
const LINES: readonly Line[] = [
  { id: 1, amount: -1234567.5, qty: 1234567, at: at(2018, 2, 3, 14, 5), kg: 1.5 },
  { id: 2, amount: 0.25, qty: 0, at: at(2018, 12, 31, 23, 59), kg: 1000 },
  { id: 3, amount: 12, qty: 1000, at: at(2019, 1, 12, 0, 0), kg: 0.125 },
  { id: 4, amount: null, qty: null, at: null, kg: 2 },
  { id: 5, amount: 999.99, qty: 42, at: at(2020, 2, 29, 12, 30), kg: 12345.5 },
  { id: 6, amount: 1000, qty: 100000, at: at(2018, 11, 12, 9, 1), kg: 3 },
];
/** Only days up to the 12th: nothing in them decides the order of day and month. */
const UNDECIDED: readonly Line[] = LINES.filter((l) => l.at !== null && l.at.getUTCDate() <= 12);

interface Locale {
  readonly tag: string;
  readonly delimiter: string;
  /** What a user of the locale gives: separators and how dates and timestamps are written. */
  readonly dialect: Dialect;
  /** Dates and timestamps as Intl's `dateStyle: 'short'` writes them (`2/3/2018`, `2/3/18, 2:05 PM`), not padded. */
  readonly short?: boolean;
}

const LOCALES: Record<'de' | 'fr' | 'us' | 'usShort' | 'gb' | 'se', Locale> = {
  de: {
    tag: 'de-DE',
    delimiter: ';',
    dialect: { csvDelimiter: ';', decimalSeparator: ',', thousandsSeparator: '.', dateStyle: 'DMY', timestampFormat: '%d.%m.%Y, %H:%M' },
  },
  // Intl writes U+202F (narrow no-break space) between fr-FR's groups of digits: given as it is.
  fr: {
    tag: 'fr-FR',
    delimiter: ';',
    dialect: { csvDelimiter: ';', decimalSeparator: ',', thousandsSeparator: '\u202f', dateStyle: 'DMY' },
  },
  // ',' thousands: the separators are checked against csvDelimiter (',' unset) when the watcher
  // starts, so a user of .tsv files gives the tab as the delimiter too (README, Decimal and thousands separators).
  us: {
    tag: 'en-US',
    delimiter: '\t',
    dialect: { csvDelimiter: '\t', thousandsSeparator: ',', dateStyle: 'MDY', timestampFormat: '%m/%d/%Y, %I:%M %p' },
  },
  usShort: {
    tag: 'en-US',
    delimiter: '\t',
    dialect: { csvDelimiter: '\t', thousandsSeparator: ',', dateStyle: 'MDY', timestampFormat: '%m/%d/%y, %I:%M %p' },
    short: true,
  },
  gb: {
    tag: 'en-GB',
    delimiter: '\t',
    dialect: { csvDelimiter: '\t', thousandsSeparator: ',', dateStyle: 'DMY', timestampFormat: '%d/%m/%Y, %H:%M' },
  },
  // Swedish: U+00A0 between the groups, U+2212 (MINUS SIGN) before a negative, ISO dates.
  se: { tag: 'sv-SE', delimiter: ';', dialect: { csvDelimiter: ';', decimalSeparator: ',', thousandsSeparator: '\u00a0' } },
};

/** A spreadsheet's export of `lines` in the locale: a header, then one line per row. */
function sheet(locale: Locale, lines: readonly Line[]): string {
  const money = new Intl.NumberFormat(locale.tag, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const whole = new Intl.NumberFormat(locale.tag, { maximumFractionDigits: 0 });
  const weight = new Intl.NumberFormat(locale.tag, { maximumFractionDigits: 3 });
  const day = locale.short
    ? new Intl.DateTimeFormat(locale.tag, { timeZone: 'UTC' })
    : new Intl.DateTimeFormat(locale.tag, { day: '2-digit', month: '2-digit', year: 'numeric', timeZone: 'UTC' });
  const time = locale.short
    ? new Intl.DateTimeFormat(locale.tag, { dateStyle: 'short', timeStyle: 'short', timeZone: 'UTC' })
    : new Intl.DateTimeFormat(locale.tag, {
        day: '2-digit',
        month: '2-digit',
        year: 'numeric',
        hour: '2-digit',
        minute: '2-digit',
        timeZone: 'UTC',
      });
  const fields = (l: Line) => [
    String(l.id),
    l.amount === null ? '' : money.format(l.amount),
    l.qty === null ? '' : whole.format(l.qty),
    l.at === null ? '' : day.format(l.at),
    l.at === null ? '' : time.format(l.at),
    `${weight.format(l.kg)} kg`,
  ];
  const header = ['id', 'amount', 'qty', 'day', 'ts', 'note'].join(locale.delimiter);
  return `${header}\r\n${lines.map((l) => `${fields(l).join(locale.delimiter)}\r\n`).join('')}`;
}

/** The rows as three small exports, as a spreadsheet saved once a day would write them. */
const parts = (locale: Locale) =>
  [0, 1, 2].map((k) =>
    sheet(
      locale,
      LINES.filter((l) => l.id % 3 === k),
    ),
  );

/** What the producer meant, spelled as both databases print it; amounts with two decimals. */
function meant(locale: Locale, lines: readonly Line[]): Row[] {
  const weight = new Intl.NumberFormat(locale.tag, { maximumFractionDigits: 3 });
  return lines.map((l) => {
    const iso = l.at?.toISOString();
    return [
      String(l.id),
      l.amount === null ? null : l.amount.toFixed(2),
      l.qty === null ? null : String(l.qty),
      iso === undefined ? null : iso.slice(0, 10),
      iso === undefined ? null : `${iso.slice(0, 10)} ${iso.slice(11, 16)}:00`,
      `${weight.format(l.kg)} kg`,
    ];
  });
}

const existing = 'id BIGINT, amount NUMERIC(14,2), qty INTEGER, day DATE, ts TIMESTAMP, note TEXT';
const select = 'id, CAST(amount AS TEXT), qty, CAST(day AS TEXT), CAST(ts AS TEXT), note';
/** A new table's amounts are doubles: spelled with the two decimals they were written with. */
const selectNew = 'id, CAST(CAST(amount AS NUMERIC(14,2)) AS TEXT), qty, CAST(day AS TEXT), CAST(ts AS TEXT), note';
const newTypes = ['bigint', 'double precision', 'bigint', 'date', 'timestamp', 'text'];

const cases: ProducedCase[] = [
  {
    name: "de-DE: ';', decimal comma, '.' thousands, 03.02.2018 and '03.02.2018, 14:05', into an existing NUMERIC table",
    extension: 'csv',
    file: sheet(LOCALES.de, LINES),
    parts: parts(LOCALES.de),
    dialect: LOCALES.de.dialect,
    existing,
    select,
    rows: meant(LOCALES.de, LINES),
  },
  {
    name: "fr-FR: ';', decimal comma, U+202F thousands, 03/02/2018 14:05 with dateStyle DMY, into a new table",
    extension: 'csv',
    file: sheet(LOCALES.fr, LINES),
    parts: parts(LOCALES.fr),
    dialect: LOCALES.fr.dialect,
    types: newTypes,
    select: selectNew,
    rows: meant(LOCALES.fr, LINES),
  },
  {
    name: "en-US: tab, ',' thousands, 02/03/2018 and '02/03/2018, 02:05 PM', into a new table",
    extension: 'tsv',
    file: sheet(LOCALES.us, LINES),
    parts: parts(LOCALES.us),
    dialect: LOCALES.us.dialect,
    types: newTypes,
    select: selectNew,
    rows: meant(LOCALES.us, LINES),
  },
  {
    name: "en-US short dates, not padded: 2/3/2018 and '2/3/18, 2:05 PM' (a two-digit year in the format), into a new table",
    extension: 'tsv',
    file: sheet(LOCALES.usShort, LINES),
    parts: parts(LOCALES.usShort),
    dialect: LOCALES.usShort.dialect,
    types: newTypes,
    select: selectNew,
    rows: meant(LOCALES.usShort, LINES),
  },
  {
    name: "en-GB: tab, ',' thousands, 03/02/2018 and '03/02/2018, 14:05', into an existing NUMERIC table",
    extension: 'tsv',
    file: sheet(LOCALES.gb, LINES),
    dialect: LOCALES.gb.dialect,
    existing,
    select,
    rows: meant(LOCALES.gb, LINES),
  },
  {
    name: 'en-GB without dateStyle: the file decides the order (31/12/2018 reads only day first), into a new table',
    extension: 'tsv',
    file: sheet(LOCALES.gb, LINES),
    dialect: { ...LOCALES.gb.dialect, dateStyle: undefined },
    types: newTypes,
    select: selectNew,
    rows: meant(LOCALES.gb, LINES),
  },
  {
    name: "sv-SE: ';', decimal comma, U+00A0 thousands, U+2212 minus, ISO dates, into a new table",
    extension: 'csv',
    file: sheet(LOCALES.se, LINES),
    parts: parts(LOCALES.se),
    dialect: LOCALES.se.dialect,
    types: newTypes,
    select: selectNew,
    rows: meant(LOCALES.se, LINES),
  },
];

const ambiguous: AmbiguousCase[] = [
  {
    name: 'fr-FR, days up to the 12th, no dateStyle, into a new table',
    extension: 'csv',
    file: sheet(LOCALES.fr, UNDECIDED),
    dialect: { ...LOCALES.fr.dialect, dateStyle: undefined },
    line: 2,
    column: 'day',
  },
  {
    name: 'en-US, days up to the 12th, no dateStyle (only the timestamp column has a format), into an existing table',
    extension: 'tsv',
    file: sheet(LOCALES.us, UNDECIDED),
    dialect: { ...LOCALES.us.dialect, dateStyle: undefined },
    existing,
    // 12/31/2018 reads only month first.
    beside: {
      file: sheet(
        LOCALES.us,
        LINES.filter((l) => l.id === 2),
      ),
      rows: 1,
    },
    line: 2,
    column: 'day',
  },
];

const { pgFixture } = await postgresForFile();

/** The space a user types for fr-FR's groups is not the U+202F Intl writes: the file fails, and the message tells them apart. */
function plainSpaceCase(t: WatchBench): void {
  it('fr-FR read with a plain space as thousands separator fails as NUMBER_FORMAT naming U+202F, nothing lands', async () => {
    const { dir, table, opts } = await t.inbox();
    await t.pool.query(`CREATE TABLE ${table} (${existing})`);
    await drop(dir, 'fr.csv', sheet(LOCALES.fr, LINES));
    const stats = await once(t, dir, table, { ...opts, ...LOCALES.fr.dialect, thousandsSeparator: ' ' });
    assert.equal(stats.filesFailed, 1);
    const error = await report(dir, 'fr.csv');
    assert.equal(error.code, 'NUMBER_FORMAT');
    assert.equal(error.line, 2);
    assert.equal(error.column, 'amount');
    assert.match(error.message, /\(it holds U\+202F; the thousands separator given is U\+0020\)/);
    assert.equal(await count(t.pool, table), 0);
  });
}

onEveryTarget('CSV files as spreadsheets in five locales write them (Intl)', 'conf_intl_', pgFixture, {
  cases,
  ambiguous,
  more: plainSpaceCase,
});
