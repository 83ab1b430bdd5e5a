/**
 * The one CSV text form per type that the json, parquet and arrow ingesters write: the exact text
 * (pure logic), then the same fields loaded by a real hyperd's COPY and read back as the values
 * they stand for.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  csvField,
  formatDecimal,
  formatFloat,
  formatTimeOfDay,
  formatTimestamp,
  hexBytes,
  quoteCsv,
} from '../../../plugins/shared/csv-text.ts';
import { formatDate } from '../../../plugins/shared/dates.ts';
import { useHyperFixture } from '../../helpers/env.ts';

const MICROS_PER_DAY = 86_400_000_000n;

describe('CSV text for COPY', () => {
  it('quotes only what CSV needs, and tells NULL from the empty string', () => {
    assert.equal(quoteCsv('plain'), 'plain');
    assert.equal(quoteCsv(''), '""');
    assert.equal(quoteCsv('\\.'), '"\\."');
    assert.equal(quoteCsv('a,b'), '"a,b"');
    assert.equal(quoteCsv('say "hi"'), '"say ""hi"""');
    assert.equal(quoteCsv('two\nlines'), '"two\nlines"');
    assert.equal(quoteCsv('cr\r'), '"cr\r"');
    assert.equal(csvField(null), '');
    assert.equal(csvField(undefined), '');
    assert.equal(csvField(''), '""');
  });

  it('writes bytes as bytea hex', () => {
    assert.equal(hexBytes(new Uint8Array([0xde, 0xad, 0x00, 0x0f])), '\\xdead000f');
    assert.equal(hexBytes(new Uint8Array()), '\\x');
  });

  it('writes a fraction of a second only when there is one', () => {
    assert.equal(formatTimeOfDay(0), '00:00:00');
    assert.equal(formatTimeOfDay(((13 * 60 + 4) * 60 + 5) * 1_000_000 + 7), '13:04:05.000007');
    assert.equal(formatTimeOfDay(86_399_999_999), '23:59:59.999999');
  });

  it('writes timestamps before 1970 and before year 1, with and without a zone', () => {
    assert.equal(formatTimestamp(0n, false), '1970-01-01 00:00:00');
    assert.equal(formatTimestamp(-1n, true), '1969-12-31 23:59:59.999999+00');
    assert.equal(formatTimestamp(1_700_000_000_123_456n, false), '2023-11-14 22:13:20.123456');
    // 0001-01-01 is day -719162; the day before is 1 BC (there is no year 0).
    assert.equal(formatTimestamp(-719_162n * MICROS_PER_DAY, false), '0001-01-01 00:00:00');
    assert.equal(formatTimestamp(-719_163n * MICROS_PER_DAY + 1n, true), '0001-12-31 00:00:00.000001+00 BC');
  });

  it('writes decimals exactly from their unscaled integer', () => {
    assert.equal(formatDecimal(-5n, 2), '-0.05');
    assert.equal(formatDecimal(12345n, 0), '12345');
    assert.equal(formatDecimal(12n, -3), '12000');
    assert.equal(formatDecimal(10n ** 40n + 1n, 10), '1000000000000000000000000000000.0000000001');
  });

  it('spells the special floats as SQL does', () => {
    assert.deepEqual([NaN, Infinity, -Infinity, -0.5, 1e300].map(formatFloat), ['NaN', 'Infinity', '-Infinity', '-0.5', '1e+300']);
  });

  describe('read back by a real hyperd', () => {
    const fx = useHyperFixture();

    it('loads every form as the value it stands for', async () => {
      const micros = -719_163n * MICROS_PER_DAY + 3_723_000_004n; // 1 BC, 01:02:03.000004
      const fields = [
        csvField('a,"b"\nc'),
        csvField(''),
        csvField(null),
        hexBytes(new Uint8Array([1, 255])),
        formatDate(-1),
        formatTimeOfDay(45_296_000_001),
        formatTimestamp(micros, false),
        formatTimestamp(-1n, true),
        formatDecimal(-123456789011234567n, 7),
        formatFloat(-Infinity),
      ];
      await fx.pool.query(
        'CREATE TABLE csv_text (t TEXT, e TEXT, n TEXT, b BYTEA, d DATE, tm TIME, ts TIMESTAMP, tz TIMESTAMPTZ, num ' +
          'NUMERIC(18,7), f DOUBLE PRECISION)',
      );
      const rows = await fx.pool.transaction((conn) =>
        conn.copyFrom(
          'COPY csv_text FROM STDIN WITH (FORMAT csv)',
          (async function* () {
            yield `${fields.join(',')}\n`;
          })(),
        ),
      );
      assert.equal(rows, 1);
      const [row] = await fx.pool.query(
        `SELECT t, e, n IS NULL AS n_null, b::text AS b, d::text AS d, tm::text AS tm, ts::text AS ts,
                (tz AT TIME ZONE 'UTC')::text AS tz, num::text AS num, f::text AS f FROM csv_text`,
      );
      assert.deepEqual(
        { ...row },
        {
          t: 'a,"b"\nc',
          e: '',
          n_null: true,
          b: '\\x01ff',
          d: '1969-12-31',
          tm: '12:34:56.000001',
          ts: '0001-12-31 01:02:03.000004 BC',
          tz: '1969-12-31 23:59:59.999999',
          num: '-12345678901.1234567',
          f: '-Infinity',
        },
      );
    });
  });
});
