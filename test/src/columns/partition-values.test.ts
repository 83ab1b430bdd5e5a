/** `partitionColumns`: how a path's `key=value` folders read (pure; the end-to-end cases are in partition-columns.test.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { partitionType, partitionValues } from '../../../src/columns/partition-columns.ts';

describe('partition values of a path', () => {
  it('one per folder, in path order, typed DATE, BIGINT or TEXT', () => {
    const values = partitionValues('date=2026-12-01/region=eu/n=42/part-0.parquet')._unsafeUnwrap();
    assert.deepEqual(values, [
      { name: 'date', type: { kind: 'date' }, text: '2026-12-01' },
      { name: 'region', type: { kind: 'text' }, text: 'eu' },
      { name: 'n', type: { kind: 'bigint' }, text: '42' },
    ]);
    assert.deepEqual(partitionValues('top.csv')._unsafeUnwrap(), [], 'a file of the watched directory itself has none');
  });

  it('decodes Hive escapes, reads __HIVE_DEFAULT_PARTITION__ as NULL, keeps an empty value as empty text', () => {
    const values = partitionValues('k%3Dx=a%3Db%2Fc/v=__HIVE_DEFAULT_PARTITION__/e=/f.csv')._unsafeUnwrap();
    assert.deepEqual(
      values.map((v) => [v.name, v.text, v.type.kind]),
      [
        ['k=x', 'a=b/c', 'text'],
        ['v', null, 'text'],
        ['e', '', 'text'],
      ],
    );
  });

  it('types only what reads as such: no impossible date, no integer past 64 bits', () => {
    assert.equal(partitionType('2026-02-29').kind, 'text');
    assert.equal(partitionType('2024-02-29').kind, 'date');
    assert.equal(partitionType('9223372036854775807').kind, 'bigint');
    assert.equal(partitionType('9223372036854775808').kind, 'text');
    assert.equal(partitionType('-9223372036854775808').kind, 'bigint');
    assert.equal(partitionType('1.5').kind, 'text');
    assert.equal(partitionType('0042').kind, 'text', 'leading zeros stay, as in CSV inference');
    assert.equal(partitionType('0').kind, 'bigint');
  });

  it('refuses a folder that is not key=value, an empty key, a key given twice, naming the folder', () => {
    const plain = partitionValues('date=2026-12-01/misc/x.csv')._unsafeUnwrapErr();
    assert.equal(plain.code, 'PARTITION_NOT_KEY_VALUE');
    assert.match(plain.message, /folder "misc"/);
    assert.equal(partitionValues('=x/y.csv')._unsafeUnwrapErr().code, 'PARTITION_NOT_KEY_VALUE');
    const twice = partitionValues('a=1/A=2/y.csv')._unsafeUnwrapErr();
    assert.equal(twice.code, 'PARTITION_KEY_TWICE');
  });
});
