/**
 * The streamed reader (plugins/csv/splice.ts): fields replaced, every other byte passed on, records
 * split as COPY splits them, whatever the chunks the bytes arrive in. Pure logic; the values as
 * they land are checked on the databases by csv-dialect*.test.ts and csv-dates*.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldRules, type ReadPlan } from '../../../plugins/csv/read-plan.ts';
import { fieldText, type SpliceOptions, spliced, unquote } from '../../../plugins/csv/splice.ts';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function run(text: string, options: SpliceOptions, chunk: number): Promise<string> {
  const bytes = encoder.encode(text);
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < bytes.length; i += chunk) yield bytes.slice(i, i + chunk);
  }
  const out: Uint8Array[] = [];
  for await (const c of spliced(chunks(), options)) out.push(c.slice());
  return out.map((c) => decoder.decode(c)).join('');
}

/** Every chunk size from 1 byte up, and the whole text at once: the same output each time. */
async function same(text: string, options: SpliceOptions): Promise<string> {
  const whole = await run(text, options, text.length + 1);
  for (let chunk = 1; chunk <= Math.min(text.length, 40); chunk++)
    assert.equal(await run(text, options, chunk), whole, `chunks of ${chunk}`);
  return whole;
}

function plan(columns: [string, string][], extra: Partial<ReadPlan>): ReadPlan {
  const delimiter = extra.delimiter ?? ',';
  return {
    columns: columns.map(([name, sqlType]) => ({ name, sqlType })),
    delimiter,
    text: { delimiter, quote: '"', escape: '"', skipLines: 0, header: true },
    dates: extra.dates ?? columns.map(() => undefined),
    nulls: extra.nulls ?? [],
    ...(extra.numbers ? { numbers: extra.numbers } : {}),
  };
}

function options(p: ReadPlan, header = true): SpliceOptions {
  return {
    delimiter: p.delimiter.charCodeAt(0),
    quote: 0x22,
    escape: 0x22,
    rules: fieldRules(p),
    header,
    fail: (problem, field, line) => {
      throw new Error(`${problem.code} field ${field} line ${line}: ${problem.reason}`);
    },
  };
}

describe('the streamed reader', () => {
  it('replaces NULL markers, numbers and dates, and passes every other byte on, in chunks of any size', async () => {
    const p = plan(
      [
        ['id', 'bigint'],
        ['d', 'date'],
        ['x', 'double precision'],
        ['s', 'text'],
      ],
      {
        delimiter: ';',
        nulls: ['NA'],
        numbers: { decimal: ',', thousands: '.' },
        dates: [undefined, { withTime: false, style: 'DMY' }, undefined, undefined],
      },
    );
    const text =
      'id;d;x;s\r\n1;01/02/2018;1.234,5;"a;""b"""\r\n2;NA;NA;"NA"\r\n3;2018-03-04;7;"two\nlines; 1,5"\r\n4;;;\r\n5;"13/02/2018";"2,5";x';
    assert.equal(
      await same(text, options(p)),
      'id;d;x;s\r\n1;2018-02-01;1234.5;"a;""b"""\r\n2;;;"NA"\r\n3;2018-03-04;7;"two\nlines; 1,5"\r\n4;;;\r\n5;2018-02-13;2.5;x',
    );
  });

  it('a replacement of the same length and one of another length in one chunk, a field past the last rule, CRLF kept', async () => {
    const p = plan(
      [
        ['a', 'double precision'],
        ['b', 'double precision'],
        ['c', 'text'],
      ],
      { numbers: { decimal: ',', thousands: '.' }, delimiter: ';' },
    );
    assert.equal(
      await same('a;b;c\n1,5;1.000;x\n2;3,25;y\r\n1.000.000,5;-,5;z\n', options(p)),
      'a;b;c\n1.5;1000;x\n2;3.25;y\r\n1000000.5;-.5;z\n',
    );
  });

  it('a value that cannot be read fails with its field and the line its record starts on (a quoted line break counts)', async () => {
    const p = plan(
      [
        ['s', 'text'],
        ['x', 'double precision'],
      ],
      { numbers: { decimal: ',' }, delimiter: ';' },
    );
    await assert.rejects(
      same('s;x\n"a\nb";1,5\nc;1.5\n', options(p)),
      /NUMBER_FORMAT field 1 line 4: "1\.5" is not a number written with decimal separator ','/,
    );
  });

  it('without a header, and starting at a later line (a body after its header)', async () => {
    const p = plan([['n', 'integer']], { nulls: ['\\N'] });
    assert.equal(await same('\\N\n5\n\\N', { ...options(p, false), firstLine: 2 }), '\n5\n');
    await assert.rejects(
      same('x\n\\N', { ...options(plan([['n', 'integer']], { numbers: { decimal: ',' } }), false), firstLine: 2 }),
      /line 2:/,
    );
  });

  it("quoted fields as COPY reads them; values written back in the file's quoting", () => {
    assert.equal(unquote('"a""b"', '"', '"'), 'a"b');
    assert.equal(unquote('x"a,b"y', '"', '"'), 'xa,by');
    assert.equal(unquote("'a\\'b'", "'", '\\'), "a'b");
    assert.equal(fieldText('a;b', ';', '"', '"'), '"a;b"');
    assert.equal(fieldText('a"b', ',', '"', '"'), '"a""b"');
    assert.equal(fieldText("a'b\\", ',', "'", '\\'), "'a\\'b\\\\'");
    assert.equal(fieldText('', ',', '"', '"'), '""');
    assert.equal(fieldText(undefined, ',', '"', '"'), '');
  });
});
