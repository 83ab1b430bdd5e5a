/** Sample files for the ingester contract kit, one set per built-in plugin, for every database. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { arrowIngester } from '../../plugins/arrow/index.ts';
import { csvIngester } from '../../plugins/csv/index.ts';
import { jsonIngester } from '../../plugins/json/index.ts';
import { parquetIngester } from '../../plugins/parquet/index.ts';
import type { IngesterContractOptions } from '../../src/testing.ts';
import { ROOT } from './proc.ts';

export function builtinContracts(): Omit<IngesterContractOptions, 'db'>[] {
  const arrow = tableFromArrays({ id: Int32Array.from([1, 2, 3]), name: ['a', 'b', 'c'] });
  const parquet = readFileSync(join(ROOT, 'test', 'fixtures', 'sample.parquet'));
  return [
    {
      ingester: csvIngester,
      good: [
        { name: 'a.csv', content: 'id,name\n1,ann\n2,bob\n', rows: 2 },
        { name: 'b.TSV', content: 'id\tname\n1\tann\n', rows: 1 },
      ],
      bad: [
        { name: 'empty.csv', content: '', kind: 'data' },
        { name: 'dup.csv', content: 'id,id\n1,2\n', kind: 'data' },
        { name: 'ragged.csv', content: 'id,name\n1,ann,extra\n' },
      ],
    },
    {
      ingester: jsonIngester,
      good: [
        { name: 'a.json', content: '[{"id":1,"tags":["x"]},{"id":2,"tags":[]}]', rows: 2 },
        { name: 'b.jsonl', content: '{"id":1}\n{"id":2}\n{"id":3}\n', rows: 3 },
      ],
      bad: [
        { name: 'empty.json', content: '', kind: 'data' },
        { name: 'scalar.json', content: '42', kind: 'data' },
        { name: 'broken.ndjson', content: '{"id":1}\n{"id":\n', kind: 'data' },
      ],
    },
    {
      ingester: parquetIngester,
      good: [{ name: 'sample.parquet', content: parquet, rows: 25 }],
      bad: [
        { name: 'empty.parquet', content: '', kind: 'data' },
        { name: 'truncated.pq', content: parquet.subarray(0, parquet.length - 20), kind: 'data' },
      ],
    },
    {
      ingester: arrowIngester,
      good: [
        { name: 'a.arrow', content: tableToIPC(arrow, 'file'), rows: 3 },
        { name: 'b.ipc', content: tableToIPC(arrow, 'stream'), rows: 3 },
      ],
      bad: [
        { name: 'empty.feather', content: '', kind: 'data' },
        { name: 'garbage.arrow', content: 'not arrow at all', kind: 'data' },
      ],
    },
  ];
}
