/**
 * No date read by a guess on hyperd, both ways a CSV file reaches it: read by hyperd itself from
 * the claimed path (`COPY ... FROM 'path'`, or `INSERT BULK ... FROM external()` with its dates
 * made ISO by the statement), and streamed through `COPY ... FROM STDIN` (as from an endpoint that
 * cannot read the watcher's files), with the same files and the same values landing. Also: the
 * statement's reading of dates (date-sql.ts) against the watcher's own (date-read.ts), value for
 * value. The cases: helpers/csv-dates-suite.ts; on PostgreSQL: csv-dates-postgres.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type DateRule, isDateProblem, readDate } from '../../../plugins/shared/date-read.ts';
import { dateSql } from '../../../plugins/shared/date-sql.ts';
import { quoteLiteral } from '../../../src/columns/sql.ts';
import { csvDatesPastHeadCases } from '../../helpers/csv-dates-head-suite.ts';
import { csvDateCases } from '../../helpers/csv-dates-suite.ts';
import { hyperFixture } from '../../helpers/env.ts';
import { streamedHyperFixture } from '../../helpers/streamed-only.ts';
import { useWatchBench } from '../../helpers/watch-bench.ts';

describe('dates on hyperd reading the files itself', () => {
  const t = useWatchBench(() => hyperFixture(), 'dates_read_');
  csvDateCases(t);
  csvDatesPastHeadCases(t);

  it("the statement's reading of dates is the watcher's, or it gives the value up to the watcher", async () => {
    const values = [
      '2018-02-01',
      '2018-2-1 10:30',
      '2018/02/01',
      '2018.12.31 23:59:59',
      '01/02/2018',
      '1.2.2018 10:30',
      '13/02/2018',
      '02/13/2018',
      '31/02/2018',
      '01 02 2018',
      ' 01/02/2018',
      '1/2/18',
      'Feb 1 2018',
      'infinity',
      '',
    ];
    const rules: DateRule[] = [
      { withTime: true },
      { withTime: true, style: 'DMY' },
      { withTime: true, style: 'MDY' },
      { withTime: true, style: 'YMD' },
      { withTime: true, order: 'DMY' },
    ];
    let read = 0;
    for (const rule of rules) {
      for (const value of values) {
        const ours = value === '' ? null : readDate(value, rule);
        const sql = dateSql(`CAST(${value === '' ? 'NULL' : quoteLiteral(value)} AS TEXT)`, 'TIMESTAMP', rule)!;
        const theirs = await t.pool.query<{ d: string | null }>(`SELECT CAST(${sql} AS TEXT) AS d`).then(
          (r) => r[0]!.d,
          (e: Error) => (e.message.includes('!hyperwatch-stream') ? 'gave up' : `error: ${e.message}`),
        );
        if (theirs === 'gave up') continue;
        read++;
        if (ours === null) {
          assert.equal(theirs, null);
          continue;
        }
        if (isDateProblem(ours)) {
          assert.match(
            theirs ?? '',
            /^error/,
            `${JSON.stringify(value)} under ${JSON.stringify(rule)}: the watcher refuses it (${ours.code}), the statement read ${theirs}`,
          );
          continue;
        }
        const expected = await t.pool.query<{ d: string }>(`SELECT CAST(CAST(${quoteLiteral(ours)} AS TIMESTAMP) AS TEXT) AS d`);
        assert.equal(theirs, expected[0]!.d, `${JSON.stringify(value)} under ${JSON.stringify(rule)}`);
      }
    }
    assert.ok(read >= 30, `the statement read ${read} of them itself`);
  });
});

describe('dates on hyperd with the files streamed', () => {
  const t = useWatchBench(streamedHyperFixture, 'dates_stream_');
  csvDateCases(t);
  csvDatesPastHeadCases(t);
});
