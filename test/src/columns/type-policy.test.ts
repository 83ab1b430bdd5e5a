/**
 * The one type policy (`typeFit`): for each file type, the table column types it goes into as the
 * same type, widened, converted, and refused. Pure logic; the ingesters' use of it on a real
 * database is in test/src/columns/type-policy-formats.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseSqlType } from '../../../src/columns/sql-types.ts';
import { fitsColumn, TYPE_FIT, typeFit, type TypeFit } from '../../../src/columns/type-policy.ts';
import type { LogicalType } from '../../../src/types.ts';

const t = (kind: Exclude<LogicalType['kind'], 'decimal'>): LogicalType => ({ kind });
const dec = (precision: number, scale: number): LogicalType => ({ kind: 'decimal', precision, scale });

// [file type, { fit: table column types }]
const cases: [LogicalType, Partial<Record<TypeFit, string[]>>][] = [
  [
    t('smallint'),
    {
      same: ['smallint', 'int2'],
      widens: ['integer', 'bigint', 'numeric(5,0)', 'numeric', 'real', 'double precision', 'text'],
      refused: ['numeric(4,0)', 'boolean', 'integer[]'],
    },
  ],
  [
    t('integer'),
    {
      same: ['integer'],
      widens: ['bigint', 'numeric(10,0)', 'numeric', 'double precision'],
      refused: ['smallint', 'numeric(11,2)', 'real', 'interval'],
    },
  ],
  [
    t('bigint'),
    {
      same: ['bigint'],
      widens: ['numeric(19,0)', 'numeric', 'text'],
      converts: ['double precision', 'character varying(3)'],
      refused: ['integer', 'real', 'text[]', 'character varying(3)[]'],
    },
  ],
  [t('real'), { same: ['real'], widens: ['double precision'], refused: ['numeric(10,2)'] }],
  [t('double'), { same: ['double precision'], refused: ['real', 'numeric', 'bigint'] }],
  [
    dec(10, 2),
    {
      same: ['numeric(10,2)'],
      widens: ['numeric(12,2)', 'numeric(11,3)', 'numeric', 'text'],
      converts: ['double precision'],
      refused: ['numeric(12,1)', 'numeric(10,3)', 'bigint', 'real'],
    },
  ],
  [dec(9, 0), { widens: ['integer', 'bigint', 'numeric(10,0)'], refused: ['smallint'] }],
  [dec(10, 0), { widens: ['bigint'], refused: ['integer'] }],
  [dec(20, 0), { converts: ['double precision'], widens: ['numeric', 'numeric(25,0)'], refused: ['bigint'] }],
  [t('date'), { same: ['date'], widens: ['timestamp', 'timestamp with time zone'], refused: ['time'] }],
  [t('time'), { same: ['time', 'time(6)'], converts: ['time(3) without time zone'], refused: ['timestamp'] }],
  [
    t('timestamp'),
    { same: ['timestamp without time zone', 'timestamp(6)'], converts: ['timestamptz', 'timestamp(3)'], refused: ['date', 'time'] },
  ],
  [
    t('timestamptz'),
    { same: ['timestamptz', 'timestamp(6) with time zone'], converts: ['timestamp', 'timestamptz(0)'], refused: ['date'] },
  ],
  [t('boolean'), { same: ['boolean'], widens: ['text'], converts: ['character varying(1)'], refused: ['integer'] }],
  [t('json'), { same: ['json', 'jsonb', 'text'], refused: ['bytea', 'text[]'] }],
  [t('bytes'), { same: ['bytea'], widens: ['text'], refused: ['json'] }],
  [
    t('text'),
    {
      same: ['text', 'name'],
      converts: ['json', 'jsonb', 'uuid', 'character(3)', 'text[]', 'character varying(3)[]'],
      refused: ['bigint', 'interval', 'integer[]'],
    },
  ],
];

describe('the type policy', () => {
  for (const [type, fits] of cases) {
    it(`${JSON.stringify(type)}: ${Object.entries(fits)
      .map(([fit, sqls]) => `${fit} ${sqls.join(', ')}`)
      .join('; ')}`, () => {
      for (const [fit, sqls] of Object.entries(fits)) {
        for (const sql of sqls) assert.equal(typeFit(type, parseSqlType(sql)), fit, `${JSON.stringify(type)} → ${sql}`);
      }
    });
  }

  it('lets a file load exactly when the fit is not refused', () => {
    for (const [type, fits] of cases) {
      for (const [fit, sqls] of Object.entries(fits)) {
        for (const sql of sqls)
          assert.equal(fitsColumn(type, parseSqlType(sql)), fit !== TYPE_FIT.refused, `${JSON.stringify(type)} → ${sql}`);
      }
    }
  });
});
