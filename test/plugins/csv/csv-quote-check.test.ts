/**
 * The quote check (plugins/csv/quote-check.ts): quotes readers disagree on are found at their byte,
 * quotes every reader reads alike are not, whatever the chunks the file is read in. Pure logic; the
 * files failing on the databases are checked by the CSV syntax suite (test/helpers/csv-syntax-suite.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type QuoteDialect, type QuoteProblem, QuoteCheck } from '../../../plugins/csv/quote-check.ts';
import { feedThroughOneBuffer, sameInEveryPieceSize } from '../../helpers/chunks.ts';

const DEFAULT: QuoteDialect = { delimiter: ',', quote: '"', escape: '"', skipLines: 0 };
const BOM = [0xef, 0xbb, 0xbf];

/**
 * The check's finding on `text` fed `size` bytes at a time (a byte order mark as the first piece),
 * through one buffer overwritten after each piece: the check keeps no view of a piece.
 */
function check(text: string | Uint8Array, dialect: QuoteDialect, size: number): QuoteProblem | undefined {
  const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : text;
  const quotes = new QuoteCheck(dialect);
  let at = 0;
  if (BOM.every((b, i) => bytes[i] === b)) {
    quotes.feed(bytes.subarray(0, 3), 3);
    at = 3;
  }
  feedThroughOneBuffer(bytes, at, size, (piece) => quotes.feed(piece));
  return quotes.problem;
}

/** The finding, the same for every chunk size (1 byte up to the whole file). */
function found(text: string | Uint8Array, dialect: QuoteDialect = DEFAULT): QuoteProblem | undefined {
  const length = typeof text === 'string' ? new TextEncoder().encode(text).length : text.length;
  return sameInEveryPieceSize(length, JSON.stringify(text), (size) => check(text, dialect, size));
}

describe('quote check', () => {
  it('quotes every reader reads alike pass: opening a field, doubled inside, closing before a delimiter or a line end', () => {
    for (const text of [
      'a,b\n1,2\n',
      '"id","name"\n"1","x"\n',
      'id,s\n1,"a ""q"" b"\n2,"multi\nline, with, commas"\n3,""\n',
      'id,s\r\n1,"crlf"\r\n2,x\r\n',
      '"at the end"',
      'id,s\n1,"a"',
      'id,"s"\n1,"no line feed at the end"',
      'id,s\n1,",\n"\n',
    ]) {
      assert.equal(found(text), undefined, text);
    }
    assert.equal(found(new Uint8Array([...BOM, ...new TextEncoder().encode('"id",x\n"1",y\n')])), undefined, 'after a byte order mark');
  });

  it('a quote inside a field that does not begin with one is found at its byte', () => {
    assert.deepEqual(found('id,s\n1,12" pizza\n2,b\n3,14" pizza\n'), { kind: 'quote-in-unquoted-field', offset: 9 });
    assert.deepEqual(found('id,s\n1, "a"\n'), { kind: 'quote-in-unquoted-field', offset: 8 });
    assert.deepEqual(found('i"d,s\n'), { kind: 'quote-in-unquoted-field', offset: 1 });
    // After a quoted field that spans lines, the next line's stray quote is still found.
    assert.deepEqual(found('id,s\n1,"a\nb"\n2,x"y\n'), { kind: 'quote-in-unquoted-field', offset: 16 });
    assert.deepEqual(found(new Uint8Array([...BOM, ...new TextEncoder().encode('id,s\n1,x"\n')])), {
      kind: 'quote-in-unquoted-field',
      offset: 11,
    });
  });

  it('text after a closing quote is found at its first byte', () => {
    assert.deepEqual(found('id,s\n1,"a ""q"186,x\n'), { kind: 'text-after-closing-quote', offset: 14 });
    assert.deepEqual(found('id,s\n1,"a" ,x\n'), { kind: 'text-after-closing-quote', offset: 10 });
    assert.deepEqual(found('"a""b"c\n'), { kind: 'text-after-closing-quote', offset: 6 });
  });

  it('backslash escapes: \\" is a quote in the field, \\\\" an escaped backslash and the closing quote', () => {
    const backslash = { ...DEFAULT, escape: '\\' };
    assert.equal(found('id,s\n1,"say \\"hi\\""\n2,"back\\\\slash"\n3,"\\\\"\n', backslash), undefined);
    assert.deepEqual(found('id,s\n1,"a\\\\"b"\n', backslash), { kind: 'text-after-closing-quote', offset: 12 });
    // Doubling is no escape here: 'q''r' is two quoted sections in one field.
    assert.deepEqual(found("id,s\n4,'q''r'\n", { ...DEFAULT, quote: "'", escape: '\\' }), { kind: 'text-after-closing-quote', offset: 10 });
    assert.equal(
      found("id,s\n1,'it\\'s'\n2,\"plain\"\n", { ...DEFAULT, quote: "'", escape: '\\' }),
      undefined,
      'a double quote is text there',
    );
  });

  it('the delimiter the file uses decides where a field begins', () => {
    assert.equal(found('id;s\n1;"a;b"\n', { ...DEFAULT, delimiter: ';' }), undefined);
    assert.deepEqual(found('id,s\n1,"a;b"\n', { ...DEFAULT, delimiter: ';' }), { kind: 'quote-in-unquoted-field', offset: 7 });
  });

  it('preamble lines and comment lines are not CSV: their quotes are not checked', () => {
    const report = 'Sales report "Q3"\nexported by "tool" 2026\nid,s\n1,"a"\n';
    assert.equal(found(report, { ...DEFAULT, skipLines: 2 }), undefined);
    assert.deepEqual(found(report, { ...DEFAULT, skipLines: 1 }), { kind: 'quote-in-unquoted-field', offset: 30 });
    assert.deepEqual(found(report), { kind: 'quote-in-unquoted-field', offset: 13 });
    const commented = '# by "tool"\nid,s\n1,"a"\n# "half\n2,b\n';
    assert.equal(found(commented, { ...DEFAULT, comment: '#' }), undefined);
    assert.equal(found(commented.replaceAll('#', '//'), { ...DEFAULT, comment: '//' }), undefined);
    assert.deepEqual(found(commented), { kind: 'quote-in-unquoted-field', offset: 5 });
    // A line that only holds the prefix inside a quoted field is no comment.
    assert.deepEqual(found('id,s\n1,"a\n# b"x\n', { ...DEFAULT, comment: '#' }), { kind: 'text-after-closing-quote', offset: 14 });
  });

  it('files quoting every field (walked byte by byte once quotes are dense) are judged as by the searches', () => {
    const rows = Array.from({ length: 400 }, (_, i) => `"${i}","a ""b"" ${i}","x\ny"`);
    const text = `"id","s","t"\n${rows.join('\n')}\n`;
    // Small pieces never reach the byte-by-byte walk (256 quotes in one piece); large ones do.
    const sizes = [1, 7, 64, 1000, 3000, 5000, text.length + 1];
    const judged = (t: string, dialect = DEFAULT) => sizes.map((size) => check(t, dialect, size));
    assert.deepEqual(
      judged(text),
      sizes.map(() => undefined),
    );
    const late = text.indexOf('"a ""b"" 350"') + '"a ""b"" 350"'.length;
    const after = `${text.slice(0, late)}z${text.slice(late)}`;
    assert.deepEqual(
      judged(after),
      sizes.map(() => ({ kind: 'text-after-closing-quote', offset: late })),
    );
    const stray = text.indexOf('"300"') + 1;
    const inField = `${text.slice(0, stray)}3"${text.slice(stray + 1)}`;
    assert.deepEqual(
      judged(inField),
      sizes.map(() => ({ kind: 'text-after-closing-quote', offset: stray + 2 })),
    );
    const unquoted = `${text.slice(0, text.indexOf('"300"'))}3"00,${text.slice(text.indexOf('"300"') + 6)}`;
    assert.deepEqual(
      judged(unquoted),
      sizes.map(() => ({ kind: 'quote-in-unquoted-field', offset: text.indexOf('"300"') + 1 })),
    );
    const backslash = { ...DEFAULT, escape: '\\' };
    const escaped = text.replaceAll('""', '\\"');
    assert.deepEqual(
      judged(escaped, backslash),
      sizes.map(() => undefined),
    );
    const closedEarly = escaped.replace('"a \\"b\\" 390"', '"a \\\\"b\\" 390"');
    const at = closedEarly.indexOf('"a \\\\"b') + 5;
    assert.deepEqual(
      judged(closedEarly, backslash),
      sizes.map(() => ({ kind: 'text-after-closing-quote', offset: at + 1 })),
    );
  });

  it('the first problem is kept, later bytes change nothing', () => {
    const quotes = new QuoteCheck(DEFAULT);
    quotes.feed(new TextEncoder().encode('a"b,'));
    quotes.feed(new TextEncoder().encode('"c"d\n'));
    assert.deepEqual(quotes.problem, { kind: 'quote-in-unquoted-field', offset: 1 });
  });
});
