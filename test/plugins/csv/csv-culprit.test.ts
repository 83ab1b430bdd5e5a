/**
 * Guessing which file of a failed shared CSV COPY holds the value that did not convert, from the
 * server's line, column and type (pure logic; the batching tests run the real thing on hyperd).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conversionFailure, likelyCulprit } from '../../../plugins/csv/culprit.ts';

const bytes = (text: string) => new TextEncoder().encode(text);
const file = (rows: string[]) => bytes(`id,name,amount,ok\n${rows.join('\n')}\n`);
const good = (n: number) => file(Array.from({ length: n }, (_, i) => `${i},"name ${i}, quoted",${i * 1.5},true`));

describe('conversionFailure: what a server error says about the bad value', () => {
  it("reads Hyper's line, column and type", () => {
    assert.deepEqual(conversionFailure('invalid input syntax for integer', "file: 'ARRAY' line:51 column:5"), {
      line: 51,
      column: 5,
      type: 'integer',
    });
    assert.deepEqual(conversionFailure('invalid input syntax for double precision', "file: 'ARRAY' line:9 column:3"), {
      line: 9,
      column: 3,
      type: 'double precision',
    });
  });
  it('reads a quoted value', () => {
    const failure = conversionFailure("invalid timestamp literal '2024-13-45': Overflowing Date Unit.", "file: 'ARRAY' line:21 column:4");
    assert.deepEqual(failure, { line: 21, column: 4, value: '2024-13-45' });
    assert.equal(conversionFailure('invalid input syntax for type integer: "x""y"', 'line:2 column:1')?.value, 'x"y');
  });
  it('is not one without a position, or with neither a type nor a value', () => {
    assert.equal(conversionFailure('invalid input syntax for integer', "file: 'ARRAY'"), undefined);
    assert.equal(conversionFailure('too few columns in input file', "file: 'ARRAY' line:3 column:2"), undefined);
  });
});

describe('likelyCulprit: the only file whose field there cannot be of that type', () => {
  const bad = file(['0,a,1.5,true', '1,b,one and a half,true', '2,c,3,false']);
  it('finds a non-number among numbers, quoted fields with commas included', () => {
    const contents = [good(5), good(5), bad, good(5)];
    assert.equal(likelyCulprit({ line: 3, column: 3, type: 'double precision' }, contents, ','), 2);
  });
  it('finds a non-integer', () => {
    const contents = [good(3), file(['0,a,1,true', '1x,b,2,true']), good(3)];
    assert.equal(likelyCulprit({ line: 3, column: 1, type: 'integer' }, contents, ','), 1);
  });
  it('matches a quoted value, whatever its type', () => {
    const contents = [good(3), good(3), file(['0,a,1,maybe'])];
    assert.equal(likelyCulprit({ line: 2, column: 4, value: 'maybe' }, contents, ','), 2);
  });
  it('gives no guess when several files are suspect', () => {
    assert.equal(likelyCulprit({ line: 3, column: 3, type: 'double precision' }, [bad, good(3), bad], ','), undefined);
  });
  it('gives no guess when none is, or for a type it does not know', () => {
    assert.equal(likelyCulprit({ line: 3, column: 3, type: 'double precision' }, [good(3), good(3)], ','), undefined);
    assert.equal(likelyCulprit({ line: 3, column: 3, type: 'interval' }, [bad, good(3)], ','), undefined);
  });
  it('ignores files too short to have that line, and empty fields (NULL)', () => {
    const short = good(1);
    const nullAmount = file(['0,a,,true', '1,b,,true']);
    assert.equal(likelyCulprit({ line: 3, column: 3, type: 'double precision' }, [short, nullAmount, bad], ','), 2);
  });
  it('reads tab-separated lines', () => {
    const tsv = (v: string) => bytes(`a\tb\n1\t${v}\n`);
    assert.equal(likelyCulprit({ line: 2, column: 2, type: 'bigint' }, [tsv('7'), tsv('7,5'), tsv('8')], '\t'), 1);
  });
});
