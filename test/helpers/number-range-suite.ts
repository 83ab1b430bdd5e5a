/**
 * Numbers a double cannot hold, in a new table's columns, for any database (run with the text-file
 * cases: hyperd and PostgreSQL): a whole number past BIGINT's range (12345678901234567890 would land
 * as 1.23456789012346e+19) or past a double's (1e400 would land as Infinity) makes its column TEXT,
 * whether it is among the rows the type is inferred from or after them, in CSV and in JSON.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startWatching, stopWatching } from '../../src/api.ts';
import { drop } from './drop.ts';
import { sqlTypes } from './env.ts';
import type { WatchBench } from './watch-bench.ts';

/** Rows the type sample reads (CSV: 2,000 rows; JSON: 1,000 records), and a few more. */
const PAST_SAMPLE = 2100;

export function numberRangeCases(t: WatchBench): void {
  it('a whole number past BIGINT or a number past a double makes a new column TEXT, every digit landing as written (CSV and \
JSON; in the inferred sample or past it)', async () => {
    // One inbox per file (each makes its own table); this one names them.
    const { table, opts } = await t.inbox();
    const late = Array.from({ length: PAST_SAMPLE }, (_, i) => (i === PAST_SAMPLE - 1 ? '-98765432109876543210' : String(i)));
    const files: [name: string, content: string, table: string, expect: Record<string, string[]>][] = [
      [
        'sample.csv',
        'big,huge,x\n12345678901234567890,1e400,1.5\n1,2,2\n',
        `${table}_a`,
        { big: ['12345678901234567890', '1'], huge: ['1e400', '2'], x: ['1.5', '2'] },
      ],
      ['late.csv', `id\n${late.join('\n')}\n`, `${table}_b`, { id: late }],
      [
        'sample.jsonl',
        '{"big":12345678901234567890,"huge":-1E+400,"x":1.5}\n{"big":1,"huge":2,"x":2}\n',
        `${table}_c`,
        { big: ['12345678901234567890', '1'], huge: ['-1E+400', '2'], x: ['1.5', '2'] },
      ],
      ['late.jsonl', late.map((v) => `{"id":${v}}`).join('\n'), `${table}_d`, { id: late }],
    ];
    for (const [name, content, target, expect] of files) {
      const inbox = await t.inbox();
      await drop(inbox.dir, name, content);
      const stats = await startWatching(inbox.dir, target, opts);
      await stopWatching(inbox.dir, { registry: t.registry });
      assert.equal(stats.filesIngested, 1, `${name}: ${JSON.stringify(stats.lastError)}`);
      const columns = Object.keys(expect);
      const types = await sqlTypes(t.pool, target);
      for (const [i, column] of columns.entries()) {
        if (column !== 'x') assert.match(types![i]!, /^text$/i, `${name}: column ${column} is TEXT, got ${types![i]}`);
        const rows = await t.pool.query<Record<string, string>>(`SELECT CAST(${column} AS TEXT) AS v FROM ${target}`);
        const got = rows.map((r) => r.v!).sort();
        const want = [...expect[column]!].sort();
        if (column === 'x') assert.deepEqual(got.map(Number), want.map(Number), `${name}: ${column}`);
        else assert.deepEqual(got, want, `${name}: ${column} lands as written`);
      }
    }
  });
}
