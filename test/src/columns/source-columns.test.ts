/** Source columns: the CSV rewrite that appends a file's values to each record, and the option's parsing. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Papa from 'papaparse';
import {
  checkSourceColumns,
  parseSourceColumns,
  type SourceValue,
  sourceColumnSpecs,
  withSourceFields,
} from '../../../src/columns/source-columns.ts';

const VALUES: SourceValue[] = [
  { name: '_source_file', type: { kind: 'text' }, text: 'a "b", c.csv' },
  { name: '_claim_id', type: { kind: 'text' }, text: 'claim-1' },
];

async function rewrite(chunks: readonly string[], values = VALUES, delimiter = ','): Promise<string> {
  async function* source(): AsyncIterable<string> {
    yield* chunks;
  }
  const parts: Uint8Array[] = [];
  for await (const part of withSourceFields(source(), values, delimiter)) parts.push(part);
  return new TextDecoder().decode(Buffer.concat(parts));
}

/** Every way to cut `text` in two, and in single characters: the output must not depend on it. */
async function everySplit(text: string): Promise<Set<string>> {
  const outputs = new Set<string>([await rewrite([...text])]);
  for (let i = 0; i <= text.length; i++) outputs.add(await rewrite([text.slice(0, i), text.slice(i)]));
  return outputs;
}

describe('withSourceFields', () => {
  it('appends the values, CSV-quoted, to every record, header included, and to a last record without a line break', async () => {
    const out = await rewrite(['id,name\n1,ann\n2,bob']);
    assert.equal(out, 'id,name,"a ""b"", c.csv","claim-1"\n1,ann,"a ""b"", c.csv","claim-1"\n2,bob,"a ""b"", c.csv","claim-1"');
    const rows = Papa.parse<string[]>(out).data;
    assert.deepEqual(rows[1], ['1', 'ann', 'a "b", c.csv', 'claim-1']);
  });

  it('leaves line breaks inside quoted fields alone, keeps CRLF after the new fields, and skips blank lines, however the text \
is cut', async () => {
    const text = 'id,note\r\n1,"two\r\nlines, ""quoted"""\r\n\r\n2,x\n';
    const expected = 'id,note,"f"\r\n1,"two\r\nlines, ""quoted""","f"\r\n\r\n2,x,"f"\n';
    const one: SourceValue[] = [{ name: 's', type: { kind: 'text' }, text: 'f' }];
    async function cut(parts: readonly string[]): Promise<string> {
      return rewrite(parts, one);
    }
    assert.equal(await cut([text]), expected);
    for (let i = 0; i <= text.length; i++) assert.equal(await cut([text.slice(0, i), text.slice(i)]), expected, `cut at ${i}`);
    assert.equal(await cut([...text]), expected);
    assert.equal((await everySplit('a\nb\n')).size, 1);
  });

  it('uses the delimiter of the file (TSV)', async () => {
    assert.equal(
      await rewrite(['a\tb\n1\t2\n'], [{ name: 's', type: { kind: 'text' }, text: 'x.tsv' }], '\t'),
      'a\tb\t"x.tsv"\n1\t2\t"x.tsv"\n',
    );
  });

  it('passes bytes through as well as strings (multi-byte characters cut between chunks)', async () => {
    const bytes = new TextEncoder().encode('n\nü\n');
    async function* source(): AsyncIterable<Uint8Array> {
      yield bytes.subarray(0, 3);
      yield bytes.subarray(3);
    }
    const parts: Uint8Array[] = [];
    for await (const part of withSourceFields(source(), [{ name: 's', type: { kind: 'text' }, text: 'é' }])) parts.push(part);
    assert.equal(new TextDecoder().decode(Buffer.concat(parts)), 'n,"é"\nü,"é"\n');
  });
});

describe('source column options', () => {
  it('parses --source-column KEY=COLUMN values, and names what is wrong with a bad one', () => {
    assert.deepEqual(parseSourceColumns(['file=_source_file', 'claim=_claim_id', 'committed=_committed_at'])._unsafeUnwrap(), {
      file: '_source_file',
      claim: '_claim_id',
      committed: '_committed_at',
    });
    assert.match(parseSourceColumns(['path=x'])._unsafeUnwrapErr(), /"path=x" is not KEY=COLUMN with KEY one of file, claim, committed/);
    assert.match(parseSourceColumns(['file='])._unsafeUnwrapErr(), /not KEY=COLUMN/);
    assert.match(parseSourceColumns(['file=a', 'claim=A'])._unsafeUnwrapErr(), /"A" is given twice/);
    assert.ok(checkSourceColumns({ file: ' ' }).isErr());
    assert.ok(checkSourceColumns(undefined).isOk());
  });

  it('creates the columns in a fixed order with their types: file and claim text, committed timestamptz', () => {
    assert.deepEqual(sourceColumnSpecs({ committed: 'at', file: 'f' }), [
      { name: 'f', type: { kind: 'text' } },
      { name: 'at', type: { kind: 'timestamptz' } },
    ]);
    assert.deepEqual(sourceColumnSpecs(undefined), []);
  });
});
