/**
 * Dates read without a guess (plugins/shared/date-read.ts, date-format.ts): which values read how
 * under each setting, what the file's values decide, and which ones fail and why. Pure logic; the
 * same readings on hyperd and PostgreSQL are in csv-dates-*.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileDateFormat, type DateFormat } from '../../../plugins/shared/date-format.ts';
import { type DateProblem, type DateRule, decideOrder, isDateProblem, readDate } from '../../../plugins/shared/date-read.ts';

const DATE: DateRule = { withTime: false };
const TS: DateRule = { withTime: true };

function read(value: string, rule: DateRule): string {
  const r = readDate(value, rule);
  assert.ok(!isDateProblem(r), `${value}: ${JSON.stringify(r)}`);
  return r;
}

function problem(value: string, rule: DateRule): DateProblem {
  const r = readDate(value, rule);
  assert.ok(isDateProblem(r), `${value} read as ${String(r)}`);
  return r;
}

function format(text: string): DateFormat {
  const f = compileDateFormat(text);
  assert.ok(typeof f !== 'string', `${text}: ${String(f)}`);
  return f;
}

describe('dates read without a guess', () => {
  it('ISO dates read as written under every setting; year first and month names are made ISO', () => {
    for (const rule of [DATE, { ...DATE, style: 'DMY' as const }, { ...DATE, style: 'MDY' as const }, { ...DATE, order: 'DMY' as const }]) {
      assert.equal(read('2018-02-01', rule), '2018-02-01');
      assert.equal(read(' 2018-2-1 ', rule), '2018-2-1');
      assert.equal(read('2018/02/01', rule), '2018-02-01');
      assert.equal(read('2018.2.1', rule), '2018-02-01');
      assert.equal(read('1 Feb 2018', rule), '2018-02-01');
      assert.equal(read('Feb 1, 2018', rule), '2018-02-01');
      assert.equal(read('Thu, 01 February 2018', rule), '2018-02-01');
      assert.equal(read('01-Feb-2018', rule), '2018-02-01');
      assert.equal(read('infinity', rule), 'infinity');
    }
    assert.equal(read('2018-02-01T10:30:00+01:00', TS), '2018-02-01T10:30:00+01:00');
    assert.equal(read('2018/02/01 10:30', TS), '2018-02-01 10:30');
  });

  it('day and month first: by the style, by the order the file decided, or by the value itself; else DATE_AMBIGUOUS', () => {
    assert.equal(read('01/02/2018', { ...DATE, style: 'DMY' }), '2018-02-01');
    assert.equal(read('01/02/2018', { ...DATE, style: 'MDY' }), '2018-01-02');
    assert.equal(read('1.2.2018', { ...DATE, order: 'DMY' }), '2018-02-01');
    assert.equal(read('01 02 2018', { ...DATE, order: 'MDY' }), '2018-01-02');
    assert.equal(read('13/02/2018', DATE), '2018-02-13');
    assert.equal(read('02/13/2018', DATE), '2018-02-13');
    // Both readings are the same date.
    assert.equal(read('05/05/2018', DATE), '2018-05-05');
    assert.equal(read('01/02/2018 10:30', { ...TS, style: 'DMY' }), '2018-02-01 10:30');
    const ambiguous = problem('01/02/2018', DATE);
    assert.equal(ambiguous.code, 'DATE_AMBIGUOUS');
    assert.equal(ambiguous.fileLevel, true);
    assert.match(ambiguous.reason, /"01\/02\/2018" reads as 1 February \(day first\) or 2 January \(month first\) 2018/);
  });

  it('values against the order: DATE_ORDER when the file decided it (fails the file), DATE_STYLE when the setting said it (a \
bad value)', () => {
    const order = problem('02/13/2018', { ...DATE, order: 'DMY' });
    assert.equal(order.code, 'DATE_ORDER');
    assert.equal(order.fileLevel, true);
    assert.match(order.reason, /reads only month first, but the file's first rows read day first/);
    const style = problem('02/13/2018', { ...DATE, style: 'DMY' });
    assert.equal(style.code, 'DATE_STYLE');
    assert.equal(style.fileLevel, false);
    assert.equal(problem('01/02/2018', { ...DATE, style: 'YMD' }).code, 'DATE_STYLE');
    assert.equal(problem('31/02/2018', { ...DATE, style: 'DMY' }).code, 'DATE_INVALID');
    assert.equal(problem('13/13/2018', DATE).code, 'DATE_INVALID');
    assert.equal(problem('2018/02/30', DATE).code, 'DATE_INVALID');
  });

  it("two-digit years need a style (the databases' century rule); forms this does not know are refused, not guessed", () => {
    const short = problem('01/02/18', DATE);
    assert.equal(short.code, 'DATE_AMBIGUOUS');
    assert.match(short.reason, /two-digit year/);
    assert.equal(problem('01/02/18', { ...DATE, order: 'DMY' }).code, 'DATE_AMBIGUOUS');
    assert.equal(read('01/02/18', { ...DATE, style: 'DMY' }), '2018-02-01');
    assert.equal(read('1/2/69', { ...DATE, style: 'MDY' }), '2069-01-02');
    assert.equal(read('1/2/70', { ...DATE, style: 'MDY' }), '1970-01-02');
    assert.equal(read('18-02-01', { ...DATE, style: 'YMD' }), '2018-02-01');
    for (const value of ['20180201', '2/1', '1517443200', '01/02/20180'])
      assert.equal(problem(value, { ...DATE, style: 'DMY' }).code, 'DATE_UNREADABLE', value);
  });

  it("formats: the whole value in the format (ISO still reads), parts in range; a date format before a timestamp column's time", () => {
    const german = { ...DATE, format: format('%d.%m.%Y') };
    assert.equal(read('01.02.2018', german), '2018-02-01');
    assert.equal(read('1.2.2018', german), '2018-02-01');
    assert.equal(read('2018-02-01', german), '2018-02-01');
    assert.equal(problem('01/02/2018', german).code, 'DATE_FORMAT');
    assert.match(problem('31.02.2018', german).reason, /has day 31, which Feb 2018 does not have/);
    assert.equal(read('20180201', { ...DATE, format: format('%Y%m%d') }), '2018-02-01');
    assert.equal(read('01-FEB-18', { ...DATE, format: format('%d-%b-%y') }), '2018-02-01');
    const us = { ...TS, format: format('%m/%d/%Y %I:%M %p') };
    assert.equal(read('02/01/2018 03:04 PM', us), '2018-02-01 15:04:00');
    assert.equal(read('02/01/2018 12:04 AM', us), '2018-02-01 00:04:00');
    const zoned = { ...TS, format: format('%d/%m/%Y %H:%M:%S.%f%z') };
    assert.equal(read('01/02/2018 10:30:05.25+0100', zoned), '2018-02-01 10:30:05.25+01:00');
    assert.equal(read('01.02.2018 10:30', { ...TS, format: format('%d.%m.%Y') }), '2018-02-01 10:30');
    assert.equal(problem('01.02.2018 10:30', german).code, 'DATE_FORMAT');
    for (const [bad, why] of [
      ['%d.%m', /no year/],
      ['%Y-%d', /no month/],
      ['%Y-%m-%d %Q', /%Q/],
      ['%Y-%m-%d %I:%M', /%I without %p/],
      ['', /empty/],
    ] as const) {
      const compiled = compileDateFormat(bad);
      assert.ok(typeof compiled === 'string' && why.test(compiled), `${bad}: ${String(compiled)}`);
    }
  });

  it("a column's values decide the order: day first, month first, contradicting, or undecided", () => {
    assert.deepEqual(decideOrder(['01/02/2018', '13/02/2018', '2018-02-01', '']), { order: 'DMY' });
    assert.deepEqual(decideOrder(['01/02/2018', '02/13/2018']), { order: 'MDY' });
    assert.deepEqual(decideOrder(['13/02/2018', '02/13/2018']), { contradiction: ['13/02/2018', '02/13/2018'] });
    assert.deepEqual(decideOrder(['01/02/2018', '03/04/2018']), { undecided: '01/02/2018' });
    assert.deepEqual(decideOrder(['2018-01-02', '05/05/2018']), {});
    assert.deepEqual(decideOrder(['1/2/18']), { shortYear: '1/2/18' });
  });
});
