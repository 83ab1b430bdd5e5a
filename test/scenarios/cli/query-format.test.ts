/**
 * `hyperwatch query` prints dates and times as the database writes them, on hyperd and on
 * PostgreSQL, in the table and in `--json` alike: a DATE without a time, a TIMESTAMP without a
 * zone it does not have, a TIMESTAMPTZ with its offset, fractions of a second to the microsecond,
 * values around midnight and BC dates (where a JavaScript Date printed 2018-01-28T00:00:00.000Z,
 * shifted TIMESTAMPs into UTC and made BC dates Invalid Date).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { suiteResource, useTempDir } from '../../helpers/env.ts';
import { startPostgres } from '../../helpers/postgres.ts';
import { cli } from '../../helpers/proc.ts';

const SELECT = `SELECT DATE '2018-01-28' AS d, DATE '0044-03-15 BC' AS bc, TIME '10:15:00' AS t, TIME '23:59:59.999999' AS late,
  TIMESTAMP '2018-01-29 00:00:00' AS midnight, TIMESTAMP '2018-01-28 23:59:59.123456' AS frac,
  TIMESTAMPTZ '2018-01-28 23:30:00-05' AS tz, CAST(NULL AS DATE) AS none`;

/** What both databases write; TIMESTAMPTZ apart (in the session's time zone, with its offset). */
const EXPECTED = {
  d: '2018-01-28',
  bc: '0044-03-15 BC',
  t: '10:15:00',
  late: '23:59:59.999999',
  midnight: '2018-01-29 00:00:00',
  frac: '2018-01-28 23:59:59.123456',
  none: null,
};

function check(json: string, table: string, tz: RegExp): void {
  const [row] = JSON.parse(json) as Record<string, unknown>[];
  const { tz: zoned, ...rest } = row!;
  assert.deepEqual(rest, EXPECTED);
  assert.match(String(zoned), tz);
  // The table prints the same strings, each value as it is.
  const lines = table.trim().split('\n');
  assert.deepEqual(
    lines[0]!.split('|').map((c) => c.trim()),
    ['d', 'bc', 't', 'late', 'midnight', 'frac', 'tz', 'none'],
  );
  assert.deepEqual(
    lines[2]!.split('|').map((c) => c.trim()),
    [...Object.values(EXPECTED).slice(0, 6), String(zoned), ''].map(String),
  );
  assert.equal(lines[3], '(1 row)');
}

describe('query prints dates and times as the database has them', () => {
  const tmp = useTempDir('hyperwatch-query-format-');
  const pg = suiteResource(
    () => startPostgres(),
    (s) => s.stop(),
    'PostgreSQL',
  );

  it('on Hyper', async () => {
    const database = tmp.path('dates.hyper');
    const json = await cli(['query', '--database', database, '--json', SELECT]).done;
    assert.equal(json.code, 0, json.stderr);
    const table = await cli(['query', '--database', database, SELECT]).done;
    assert.equal(table.code, 0, table.stderr);
    // hyperd's sessions run in UTC.
    check(json.stdout, table.stdout, /^2018-01-29 04:30:00\+00$/);
  });

  it('on PostgreSQL', async () => {
    const url = pg().url;
    const json = await cli(['query', '--adapter', 'postgres', '--url', url, '--json', SELECT]).done;
    assert.equal(json.code, 0, json.stderr);
    const table = await cli(['query', '--adapter', 'postgres', '--url', url, SELECT]).done;
    assert.equal(table.code, 0, table.stderr);
    // The same instant in the server's time zone, with its offset.
    const zone = await cli([
      'query',
      '--adapter',
      'postgres',
      '--url',
      url,
      '--json',
      `SELECT (TIMESTAMPTZ '2018-01-28 23:30:00-05')::text AS tz`,
    ]).done;
    const text = (JSON.parse(zone.stdout) as { tz: string }[])[0]!.tz;
    assert.match(text, /^2018-01-2\d \d\d:\d\d:00[+-]\d\d(:\d\d)?$/);
    check(json.stdout, table.stdout, new RegExp(`^${text.replace(/[+.]/g, '\\$&')}$`));
  });
});
